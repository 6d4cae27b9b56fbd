/** Where and how a migration run failed, for the message and for `--json`. */
export interface FailureDetail {
  /** The connection or datasource. */
  readonly connection: string;
  /** The file, relative to the connection's folder. */
  readonly file?: string;
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

/** A migration file failed: the run stops here, and the CLI exits with 1. */
export class MigrationFailure extends Error {
  readonly detail: FailureDetail;

  constructor(detail: FailureDetail, options?: ErrorOptions) {
    const where = [
      `connection "${detail.connection}"`,
      detail.file && `file ${detail.file}${detail.line === undefined ? "" : `:${detail.line}`}`,
      detail.request,
      detail.status !== undefined && `HTTP ${detail.status}`,
    ].filter(Boolean).join(", ");
    super(`${where}: ${detail.reason}`, options);
    this.name = "MigrationFailure";
    this.detail = detail;
  }
}
