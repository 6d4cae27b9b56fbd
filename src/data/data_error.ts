// The one error of data access: it names the datasource and, for a statement, its first line.
// Never its parameters, which may be secrets (a password hash, a token), nor the driver's
// connection settings.

/**
 * Why a data access call failed:
 * - `statement`: the database refused the statement (a syntax error, a constraint);
 * - `connection`: the connection failed under it (killed, its socket closed): it is not reused,
 *   and the next call gets another;
 * - `connect`: no connection could be opened;
 * - `timeout`: no connection was free within the pool's acquire timeout;
 * - `rows`: `one` or `maybeOne` got another number of rows than it allows;
 * - `closed`: the pool was closed;
 * - `transaction`: a transaction's rule was broken: none where `MANDATORY` needs one, one where
 *   `NEVER` refuses it, its timeout passed, a statement came after it ended, or a call inside
 *   it failed and marked it for rollback while the outer call went on to commit.
 */
export type DataErrorReason =
  | "statement"
  | "connection"
  | "connect"
  | "timeout"
  | "rows"
  | "closed"
  | "transaction";

/** A data access call that failed, naming the datasource and the statement's first line. */
export class DataError extends Error {
  /** The datasource's name in the configuration. */
  readonly datasource: string;
  /** Why it failed (see {@linkcode DataErrorReason}). */
  readonly reason: DataErrorReason;
  /** The statement's first line, where a statement was run. */
  readonly statement?: string;
  /**
   * The database's own code, where it gives one: a SQLSTATE (`23505`), mysql2's `ER_DUP_ENTRY`,
   * SQLite's name (`SQLITE_CONSTRAINT_UNIQUE`, the same on every runtime).
   */
  readonly code?: string;

  /**
   * Creates the error: `message` comes after `datasource "name": ` and the statement's first line.
   */
  constructor(
    details: {
      datasource: string;
      reason: DataErrorReason;
      message: string;
      statement?: string;
      code?: string;
    },
    options?: ErrorOptions,
  ) {
    const statement = details.statement === undefined ? undefined : firstLine(details.statement);
    super(
      `datasource "${details.datasource}": ${
        statement === undefined ? "" : `${statement}: `
      }${details.message}`,
      options,
    );
    this.name = "DataError";
    this.datasource = details.datasource;
    this.reason = details.reason;
    if (statement !== undefined) this.statement = statement;
    if (details.code !== undefined) this.code = details.code;
  }
}

const LINE_MAX = 120;

/** The first line of a statement that is not blank, cut to a length a message can carry. */
export function firstLine(text: string): string {
  const line = text.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
  return line.length > LINE_MAX ? `${line.slice(0, LINE_MAX - 1)}…` : line;
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}

// Shorter values are left: masking every "a" or "42" would garble the message, and tell little.
const MASKED_FROM = 3;

/**
 * `message` with each bound value that is text of 3 characters or more (a string, a number, a
 * bigint, a Date's ISO form) put as `…`: a database quotes them in its messages (PostgreSQL's
 * `Key (email)=(…) already exists`, MySQL's `Duplicate entry '…'`), and a message is logged.
 */
export function withoutValues(message: string, params: readonly unknown[]): string {
  const texts = params
    .map((p) =>
      typeof p === "string"
        ? p
        : typeof p === "number" || typeof p === "bigint"
        ? String(p)
        : p instanceof Date && !Number.isNaN(p.getTime())
        ? p.toISOString()
        : undefined
    )
    .filter((t): t is string => t !== undefined && t.length >= MASKED_FROM)
    // The longest first: a value inside a longer one would leave the rest of the longer showing.
    .sort((a, b) => b.length - a.length);
  let out = message;
  for (const text of texts) {
    // Again until none is left: a mask beside the rest of a value can make it whole again.
    while (out.includes(text)) out = out.replaceAll(text, "…");
  }
  return out;
}
