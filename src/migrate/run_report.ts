import type { FailureDetail } from "./migration_failure.ts";

/** What the runner decides for a file after comparing it with its record. */
export type FileAction =
  /** No record: apply it. */
  | "apply"
  /** Recorded with the same hash: nothing to do. */
  | "skip"
  /** Recorded with another hash, on a search connection: apply it again. */
  | "reapply"
  /** Recorded with another hash, on a SQL datasource: reported, not run again. */
  | "changed";

/** One file in a report. */
export interface FileReport {
  readonly path: string;
  /** `skip` too when another runner applied the file while this one waited for it. */
  action: FileAction;
  /** `METHOD /path` of the main request (search files). */
  readonly request?: string;
  /** After applying: `created`, `updated`, `exists`, `sent`, `applied`; or `failed`. */
  result?: string;
  status?: number;
  ms?: number;
  notice?: string;
}

/** One connection in a report. */
export interface ConnectionReport {
  readonly name: string;
  readonly files: FileReport[];
  applied: number;
  skipped: number;
  /** Requests sent to this connection, reads included. */
  requests: number;
  ms: number;
}

/** Why a run stopped early: where (as a failure names it), and the whole message. */
export interface RunError extends Omit<FailureDetail, "reason"> {
  /** `failure`: a migration failed (exit 1); `lock`: the lock was not acquired (exit 3). */
  readonly kind: "failure" | "lock";
  readonly message: string;
}

/** The whole run, as `--json` prints it. */
export interface RunReport {
  readonly command: "migrate" | "status" | "validate" | "unlock" | "dry-run";
  readonly connections: ConnectionReport[];
  ms: number;
  /** Set when the run stopped early; later connections and files were not run. */
  error?: RunError;
}

/** Receives progress while a run goes on (the human output); `--json` ignores it. */
export interface Progress {
  /** Applying begins on a connection: `pending` files of `total`. */
  start(connection: string, pending: number, total: number): void;
  /** File `n` of `pending` is done. */
  file(connection: string, n: number, pending: number, file: FileReport): void;
  /** A note for the user (a lock being waited for, a policy update). */
  notice(message: string): void;
}

/** Progress that goes nowhere. */
export const silentProgress: Progress = { start() {}, file() {}, notice() {} };
