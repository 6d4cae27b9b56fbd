import type { ErrorKind } from "./error_kind.ts";

/**
 * Why a run of migrations stopped, as a kind the report and the exit code follow: `usage` (the
 * command line or `migrate()`'s options are wrong), `plan` (a file cannot be planned, or the
 * records forbid the command; nothing was written), `failure` (a file or the connection failed),
 * `lock` (another runner held the lock past `--lock-timeout`), `interrupted` (Ctrl-C). A kind that
 * carries more than its message has its own subclass.
 */
export class MigrationError extends Error {
  readonly kind: ErrorKind;

  /**
   * @param kind why the run stopped
   * @param message the whole message, its location included
   */
  constructor(kind: ErrorKind, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "MigrationError";
    this.kind = kind;
  }
}

/** Whether `error` is a {@linkcode MigrationError} of `kind`. */
export function isMigrationError(error: unknown, kind: ErrorKind): error is MigrationError {
  return error instanceof MigrationError && error.kind === kind;
}

/**
 * A migration file cannot be planned (it is malformed or matches no rule), or the folder of
 * migrations cannot be read. The message starts with the file's path.
 */
export class MigrationFileError extends MigrationError {
  /** The file, relative to its connection's folder (or the folder itself). */
  readonly file: string;

  /**
   * @param file the file's path
   * @param message what is wrong with it
   */
  constructor(file: string, message: string, options?: ErrorOptions) {
    super("plan", `${file}: ${message}`, options);
    this.name = "MigrationFileError";
    this.file = file;
  }
}

/**
 * A connection's migration file cannot be planned, or the connection's records forbid the command:
 * the run stops before anything is written, and the CLI exits with 1. It names the connection
 * beside the file, when there is one.
 */
export class PlanError extends MigrationError {
  /** The connection (or datasource) whose folder holds the file. */
  readonly connection: string;
  /** The file, relative to the connection's folder (or the folder itself). */
  readonly file: string | undefined;

  /** Names `connection` beside the file error `cause`, or before a message about it. */
  constructor(connection: string, cause: MigrationFileError | string) {
    super(
      "plan",
      `connection "${connection}"${typeof cause === "string" ? " " : ": "}${
        typeof cause === "string" ? cause : cause.message
      }`,
      typeof cause === "string" ? undefined : { cause },
    );
    this.name = "PlanError";
    this.connection = connection;
    this.file = typeof cause === "string" ? undefined : cause.file;
  }
}

/** Where and how a migration run failed, for the message and for `--json`. */
export interface FailureDetail {
  /** The connection or datasource. */
  readonly connection: string;
  /** The file, relative to the connection's folder. */
  readonly file?: string;
  /** The event of the callback `file` is (`afterMigrate`), where the file is a callback. */
  readonly callback?: string;
  /** `METHOD /path`. */
  readonly request?: string;
  /** Search: the HTTP status of the failed request. */
  readonly status?: number;
  /** SQL: the line of the failing statement in the file. */
  readonly line?: number;
  /** SQL: the database's own error code (SQLSTATE, or MySQL's error name). */
  readonly code?: string;
  /** The server's error type and reason, or what went wrong. */
  readonly reason: string;
}

/**
 * A migration file failed: the run stops here, and the CLI exits with 1. Its kind is
 * `interrupted` where the file stopped because the run was (a code file that honoured
 * `ctx.signal`, or was abandoned past the stop timeout).
 */
export class MigrationFailure extends MigrationError {
  readonly detail: FailureDetail;
  /**
   * The failure rolled back what the run did before it on its connection (SQLite holds a run's
   * files in one transaction, which some failures end): the files before it are not applied.
   */
  earlierRolledBack = false;

  constructor(
    detail: FailureDetail,
    options?: ErrorOptions,
    kind: "failure" | "interrupted" = "failure",
  ) {
    const where = [
      `connection "${detail.connection}"`,
      detail.file &&
      `${detail.callback === undefined ? "file" : "callback"} ${detail.file}${
        detail.line === undefined ? "" : `:${detail.line}`
      }${detail.callback === undefined ? "" : ` (${detail.callback})`}`,
      detail.request,
      detail.status !== undefined && `HTTP ${detail.status}`,
    ].filter(Boolean).join(", ");
    super(kind, `${where}: ${detail.reason}`, options);
    this.name = "MigrationFailure";
    this.detail = detail;
  }
}

/**
 * A target's own I/O error (a refused connection, a rejected login, a lost database) as the
 * failure that stops the run: its message is the error's own, as the report has always shown it,
 * and it names the connection.
 */
export class ConnectionFailure extends MigrationFailure {
  /**
   * @param connection the connection whose target failed
   * @param error the driver's own error: its message is the failure's
   */
  constructor(connection: string, error: Error) {
    super({ connection, reason: error.message }, { cause: error });
    this.name = "ConnectionFailure";
    this.message = error.message;
  }
}
