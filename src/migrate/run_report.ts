import type { Command } from "./command_line.ts";
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
  /**
   * A pending file that sorts before a file applied already: the path of the last applied one.
   * `migrate` applies it with a warning; `--strict-order` refuses it.
   */
  outOfOrder?: string;
  /** After applying: `created`, `updated`, `exists`, `sent`, `applied`; or `failed`. */
  result?: string;
  status?: number;
  ms?: number;
  notice?: string;
}

/**
 * What became of a configured connection: `ran` (its records were read, and for `migrate` its
 * pending files applied); or not run: `disabled` (no `migrations.enabled: true`), `not-selected`
 * (`--connection` named another), `no-folder` (enabled, but `<root>/<name>` does not exist: nothing
 * was sent to it), `not-reached` (the run stopped before it).
 */
export type ConnectionState = "ran" | "disabled" | "not-selected" | "no-folder" | "not-reached";

/** Who held a lock that `unlock` removed, as the lock document names it. */
export interface LockOwner {
  readonly owner: string;
  readonly host: string;
  readonly pid: number;
  readonly acquired_at?: string;
  readonly expires_at?: string;
}

/** What `unlock` did on one connection. */
export interface UnlockOutcome {
  /** The lock removed, or `"nothing"` when there was none. */
  readonly unlocked: LockOwner | "nothing";
  /** Why there was nothing to remove, when that needs saying (SQL locks end with the runner). */
  readonly note?: string;
}

/** One configured connection in a report, in the order of the configuration. */
export interface ConnectionReport {
  readonly name: string;
  state: ConnectionState;
  /** Why a connection was not run, for a person: `migrations.enabled is not true`. */
  reason?: string;
  readonly files: FileReport[];
  applied: number;
  skipped: number;
  /** Requests sent to this connection, reads included. */
  requests: number;
  ms: number;
  /** `unlock` only: what it removed. */
  unlocked?: LockOwner | "nothing";
  /** `unlock` only: why there was nothing to remove. */
  note?: string;
  /**
   * Strict order was in force (`--strict-order` or `migrations.strict_order`): an out-of-order
   * file stops `migrate` and fails `validate`.
   */
  strictOrder?: true;
}

/**
 * Why a run did not succeed. The kind decides the exit code: `usage` and `config` 2 (nothing was
 * sent); `plan` (a file cannot be planned; nothing was sent), `failure` (a migration or the
 * connection failed), `invalid` (`validate` found applied files changed) and `interrupted`
 * (Ctrl-C) 1; `lock` (another runner held the lock past `--lock-timeout`) 3.
 */
export type ErrorKind =
  | "usage"
  | "config"
  | "plan"
  | "failure"
  | "lock"
  | "invalid"
  | "interrupted";

/** Why a run stopped, the whole message, and where (the connection, file, line... it names). */
export interface RunError extends Partial<FailureDetail> {
  readonly kind: ErrorKind;
  readonly message: string;
}

/** The command a report is about: `dry-run` is `migrate --dry-run`. */
export type ReportCommand = Command | "dry-run";

/**
 * The one report `--json` prints on stdout, whatever the outcome: success, failure, usage or
 * config error, lock timeout, interrupted. `command` is `null` only when the command line named
 * no known command.
 */
export interface RunReport {
  readonly command: ReportCommand | null;
  /** Every configured connection (none before the configuration was read). */
  readonly connections: ConnectionReport[];
  ms: number;
  /** Set when the run did not succeed; later connections and files were not run. */
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
