import type { Mask } from "../../config/secrets_mask.ts";
import type { Progress } from "../run_report.ts";
import type { MigrationContext } from "./code_context.ts";

/** Where a code file runs, as a target knows it. */
export interface ContextSource {
  readonly connection: string;
  readonly path: string;
  readonly placeholders: ReadonlyMap<string, string> | undefined;
  readonly progress: Progress;
  /** What the report may show: placeholder values written back as their names. */
  readonly mask: Mask;
  readonly signal: AbortSignal | undefined;
}

/** The part of a code file's context every kind of connection gives. */
export function migrationContext(source: ContextSource): MigrationContext {
  return {
    connection: source.connection,
    path: source.path,
    placeholders: Object.freeze(Object.fromEntries(source.placeholders ?? [])),
    log: (message) => source.progress.step(source.connection, source.mask(String(message))),
    // A run that cannot be interrupted (an API call without a signal) gives one that never aborts.
    signal: source.signal ?? new AbortController().signal,
  };
}
