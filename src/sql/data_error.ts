// The one error of data access: it names the datasource and, for a statement, its first line.
// Never its parameters, which may be secrets (a password hash, a token), nor the driver's
// connection settings.

/**
 * Why a data access call failed:
 * - `statement`: the database refused the statement (a syntax error, a constraint);
 * - `conflict`: the database refused it for a conflict with a concurrent transaction and rolled
 *   the transaction back: PostgreSQL's serialization failure (`40001`, at `SERIALIZABLE` or
 *   `REPEATABLE_READ`) or deadlock (`40P01`), InnoDB's deadlock (`ER_LOCK_DEADLOCK`), MariaDB's
 *   snapshot isolation refusing a write to a row changed since (`ER_CHECKREAD`). Retryable:
 *   run the whole transaction again, from its beginning;
 * - `connection`: the connection failed under it (killed, its socket closed): it is not reused,
 *   and the next call gets another;
 * - `connect`: no connection could be opened;
 * - `timeout`: no connection was free within the pool's acquire timeout, the database did not
 *   answer a statement within the pool's statement timeout (its connection is then closed), or
 *   the database stopped a statement at its query timeout (`pool.query-timeout`,
 *   `sql.withTimeout(timeout)`; the connection is kept);
 * - `rows`: `one` or `maybeOne` got another number of rows than it allows;
 * - `closed`: the pool was closed;
 * - `transaction`: a transaction's rule was broken: none where `MANDATORY` needs one, one where
 *   `NEVER` refuses it, its timeout passed (before a statement, or while the database did not
 *   answer one), a statement came after it ended or after the database aborted it (a deadlock),
 *   or a call inside it failed and marked it for rollback while the outer call went on to commit.
 */
export type DataErrorReason =
  | "statement"
  | "conflict"
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
// Quotes around a value in PostgreSQL's and MySQL's messages (`"abc"`, `'abc'`, `(abc)`).
const OPENING = new Set(['"', "'", "(", "`"]);
const CLOSING = new Set(['"', "'", ")", "`"]);
// Array parameters are looked into this deep, and no further (a value is rarely nested more).
const NESTED = 4;

/**
 * Where {@linkcode withoutValues} looks for a value: only between quotes or brackets, as
 * PostgreSQL and MySQL quote one (`invalid input syntax for type integer: "abc"`), so that a value
 * that is also a word of the database's own (`key`, `duplicate`) leaves that word alone; or
 * anywhere, for the messages an app raises itself (a SQLite trigger's `RAISE`).
 */
export type ValueQuoting = "quoted" | "anywhere";

/**
 * `message` with each bound value that is text of 3 characters or more (a string, a number, a
 * bigint, a Date's ISO form, the hex of bytes, each element of an array) put as `…`, in any
 * letter case: a database quotes them in its messages, and a message is logged. A value that
 * holds a quote or a bracket itself is looked for anywhere. Linear in the message's length for
 * each value: a client's value cannot make it slow.
 */
export function withoutValues(
  message: string,
  params: readonly unknown[],
  quoting: ValueQuoting = "quoted",
): string {
  const texts = new Set<string>();
  collectTexts(params, texts, 0);
  if (texts.size === 0) return message;
  // Case folded where it keeps every index in place (it does for almost every text).
  const folded = message.toLowerCase();
  const fold = folded.length === message.length;
  const haystack = fold ? folded : message;
  // +1 where a masked stretch starts, -1 where it ends: overlapping stretches sum.
  const marks = new Int32Array(message.length + 1);
  let any = false;
  for (const text of texts) {
    const needle = fold && text.toLowerCase().length === text.length ? text.toLowerCase() : text;
    const anywhere = quoting === "anywhere" ||
      [...needle].some((c) => OPENING.has(c) || CLOSING.has(c));
    // From past each match: an occurrence that overlapped it would start inside it, after a
    // quote the value holds, and such a value is masked anywhere.
    for (
      let i = haystack.indexOf(needle);
      i !== -1;
      i = haystack.indexOf(needle, i + needle.length)
    ) {
      const end = i + needle.length;
      if (!anywhere && !(OPENING.has(haystack[i - 1]) && CLOSING.has(haystack[end]))) continue;
      marks[i]++;
      marks[end]--;
      any = true;
    }
  }
  if (!any) return message;
  let out = "";
  let depth = 0;
  let from = 0;
  for (let i = 0; i <= message.length; i++) {
    const before = depth;
    depth += marks[i];
    if (before === 0 && depth > 0) out += message.slice(from, i) + "…";
    if (before > 0 && depth === 0) from = i;
  }
  return out + message.slice(from);
}

function collectTexts(params: readonly unknown[], into: Set<string>, depth: number): void {
  for (const p of params) {
    const text = typeof p === "string"
      ? p
      : typeof p === "number" || typeof p === "bigint"
      ? String(p)
      : p instanceof Date && !Number.isNaN(p.getTime())
      ? p.toISOString()
      : p instanceof Uint8Array
      ? [...p].map((b) => b.toString(16).padStart(2, "0")).join("")
      : undefined;
    if (text !== undefined && text.length >= MASKED_FROM) into.add(text);
    if (Array.isArray(p) && depth < NESTED) collectTexts(p, into, depth + 1);
  }
}
