import { ConfigError } from "../config/config_error.ts";
import { notRun } from "./connection_outcomes.ts";
import type { OptionNames } from "./option_names.ts";
import type { ConnectionReport } from "./run_report.ts";

/** The connections a run selected, and a report entry for each configured one it left out. */
export interface Selection<C> {
  /** The connections to run, in configuration order. */
  readonly selected: C[];
  /** The others, each with its state and reason; the runners add the ones without a folder. */
  readonly skipped: ConnectionReport[];
}

/**
 * Picks the connections to run: all enabled ones, or the one `--connection` names (which must be
 * enabled). Every other configured connection is reported as skipped, with the reason.
 */
export function selectEnabled<C extends { name: string; migrationsEnabled: boolean }>(
  all: readonly C[],
  name: string | undefined,
  kind: string,
  optionNames: OptionNames,
): Selection<C> {
  if (name !== undefined) {
    const found = all.find((c) => c.name === name);
    if (found === undefined) {
      throw new ConfigError(
        `${optionNames.connectionValue(name)}: no such ${kind} (configured: ${
          all.map((c) => c.name).join(", ")
        })`,
      );
    }
    if (!found.migrationsEnabled) {
      throw new ConfigError(
        `${optionNames.connectionValue(name)}: set migrations.enabled: true on it first`,
      );
    }
  }
  const selected: C[] = [];
  const skipped: ConnectionReport[] = [];
  for (const c of all) {
    if (name !== undefined && c.name !== name) {
      skipped.push(
        notRun(c.name, "not-selected", `${optionNames.connectionValue(name)} was given`),
      );
    } else if (!c.migrationsEnabled) {
      skipped.push(notRun(c.name, "disabled", "migrations.enabled is not true"));
    } else selected.push(c);
  }
  return { selected, skipped };
}
