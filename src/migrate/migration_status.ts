// What `/actuator/migrations` answers: `status` of every SQL datasource and search connection,
// each on its own, so that one that cannot be reached is reported as such and the others still
// are. The same runs as the command line's `status`; nothing is written.
import type { FileAction, RunReport } from "./run_report.ts";
import { fileVersion, readMigrationName } from "./plan/migration_name.ts";
import { definedFields } from "../defined_fields.ts";

/** A file's state, as the endpoint names it. */
export type MigrationFileState =
  | "applied"
  | "pending"
  | "changed"
  | "missing"
  | "renamed"
  | "undone"
  | "unknown";

/** One file of a connection, with what its record says. */
export interface MigrationFileStatus {
  /** The file, relative to its connection's folder. */
  readonly path: string;
  /** Its version, where its name or folder gives one (`V2__users.sql`: `2`). */
  readonly version?: string;
  /** What a Flyway name says after `__` (`users`), else the name without its suffix. */
  readonly description: string;
  /** What its record says of it, beside the file in this checkout. */
  readonly state: MigrationFileState;
  /** The checksum its record holds, where it has one. */
  readonly checksum?: string;
  /** When it was applied (ISO 8601, UTC), where its record says. */
  readonly appliedOn?: string;
  /** Who applied it (`user@host`), where its record says. */
  readonly appliedBy?: string;
}

/** One datasource or search connection. */
export interface MigrationConnectionStatus {
  /** Its `name` in the configuration. */
  readonly name: string;
  /** `sql` for a datasource, `search` for a search connection. */
  readonly kind: "sql" | "search";
  /**
   * `ok`: its records were read; `error`: they could not be (it could not be reached, or refused;
   * `error` says why); `disabled`: `migrations.enabled` is not true; `no-folder`: it has no
   * folder of files.
   */
  readonly state: "ok" | "error" | "disabled" | "no-folder";
  /** Why its records could not be read, its secrets masked. */
  readonly error?: string;
  /** Each file, and each record whose file is gone, in run order. */
  readonly files: readonly MigrationFileStatus[];
}

// Every action: a new one is a compile error here until it is given a state.
const STATES: Readonly<Record<FileAction, MigrationFileState>> = {
  skip: "applied",
  apply: "pending",
  reapply: "changed",
  changed: "changed",
  missing: "missing",
  rename: "renamed",
  unknown: "unknown",
  "above-target": "pending",
  undone: "undone",
  // Not `status`'s: what undo does, to a file applied until then.
  undo: "applied",
  // Not `status`'s: what baseline and repair do.
  record: "pending",
  drop: "missing",
};

function describe(path: string): string {
  const name = readMigrationNameSafe(path);
  if (name.kind !== "other") return name.description;
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.[^.]*$/, "");
}

// A name that breaks Flyway's rules has stopped `status` already; this only describes.
function readMigrationNameSafe(path: string): ReturnType<typeof readMigrationName> {
  try {
    return readMigrationName(path);
  } catch {
    return { kind: "other" };
  }
}

function versionOf(path: string): string | undefined {
  try {
    return fileVersion(path);
  } catch {
    return undefined;
  }
}

/** The connections of a `status` report, as the endpoint shows them. */
export function connectionStatuses(
  report: RunReport,
  kind: "sql" | "search",
): MigrationConnectionStatus[] {
  return report.connections.map((connection) => {
    const failed = report.error?.connection === connection.name ? report.error : undefined;
    const state = failed !== undefined
      ? "error"
      : connection.state === "disabled" || connection.state === "not-selected"
      ? "disabled"
      : connection.state === "no-folder"
      ? "no-folder"
      : "ok";
    return {
      name: connection.name,
      kind,
      state,
      ...(failed === undefined ? {} : { error: failed.message }),
      files: connection.files.map((file) => {
        const version = versionOf(file.path);
        return {
          path: file.path,
          ...definedFields({ version }),
          description: describe(file.path),
          state: STATES[file.action],
          ...definedFields({ checksum: file.recordChecksum }),
          ...(file.applied?.at === undefined ? {} : { appliedOn: file.applied.at }),
          ...(file.applied?.by === undefined ? {} : { appliedBy: file.applied.by }),
        };
      }),
    };
  });
}

/** Runs `status` (one call of the runner per connection that an earlier call did not reach). */
export type StatusRun = (
  mode: "sql" | "search",
  connection?: string,
) => Promise<{ report: RunReport; failed: boolean }>;

// The configuration file was read and has no section of the kind: nothing of it to show.
const NONE_OF_KIND = /^No (?:SQL datasource|search connections): none of /;

/**
 * `status` of every connection of both kinds. A kind the configuration has none of is left out;
 * a run that stops at a connection (it cannot be reached) reports that one, and the connections
 * after it are asked again on their own. A run that stops before any connection (no configuration,
 * a wrong key) throws its error.
 */
export async function migrationStatuses(run: StatusRun): Promise<MigrationConnectionStatus[]> {
  const out: MigrationConnectionStatus[] = [];
  for (const kind of ["sql", "search"] as const) {
    const { report, failed } = await run(kind);
    if (report.connections.length === 0) {
      if (failed && !NONE_OF_KIND.test(report.error?.message ?? "")) {
        throw new Error(report.error?.message ?? "status failed");
      }
      continue;
    }
    const first = connectionStatuses(report, kind);
    if (!failed) {
      out.push(...first);
      continue;
    }
    for (const [i, connection] of report.connections.entries()) {
      if (connection.state !== "not-reached") {
        out.push(first[i]);
        continue;
      }
      const again = await run(kind, connection.name);
      out.push(...connectionStatuses(again.report, kind).filter((c) => c.name === connection.name));
    }
  }
  return out;
}
