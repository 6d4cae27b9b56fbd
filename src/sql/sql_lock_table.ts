// ShedLock's table, as SqlLockManager (over the app's datasource) and SqlLockProvider (over a
// driver's own pool) both use it: the statements of each database, what the columns hold, and the
// one taking and release of a lock, in one class so that the two cannot drift apart. Every time
// is the database's (ShedLock's `usingDbTime()`): replicas whose clocks disagree still agree on
// when a lock ends. In UTC, so that sessions in other time zones agree too. One reading of the
// clock per statement, so that lock_until is locked_at + the lease exactly.

import { shownValue } from "../shown_value.ts";

/** The SQL databases the locks' table is written for. */
export type SqlLockDialect = "postgres" | "mysql" | "sqlite";

/** Runs one statement with positional parameters and gives its rows (none for a write). */
export type SqlLockQuery = (
  sql: string,
  params: readonly (string | number)[],
) => Promise<readonly Record<string, unknown>[]>;

// How many characters the `name` and `locked_by` columns hold, and what each taking adds to its
// holder's name: a space, then an id of this taking.
const NAME_LENGTH = 64;
const LOCKED_BY_LENGTH = 255;
const TAKING_ID_LENGTH = 13;

// Interpolated into SQL: a plain identifier.
const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const LONE_SURROGATE = /\p{Surrogate}/u;

// PostgreSQL's and SQLite's one statement that takes a lock: inserted, or taken over from a lock
// that has ended; the row comes back only then. `until` and `now`: the database's times, `name`
// and `by` the placeholders of the lock's name and holder.
// `token`: the taking's fencing token, read from the row's `locked_at`.
function takeOver(
  t: string,
  name: string,
  until: string,
  now: string,
  by: string,
  token: string,
): string {
  return `INSERT INTO ${t} (name, lock_until, locked_at, locked_by) ` +
    `VALUES (${name}, ${until}, ${now}, ${by}) ON CONFLICT (name) DO UPDATE SET ` +
    "lock_until = excluded.lock_until, locked_at = excluded.locked_at, " +
    `locked_by = excluded.locked_by WHERE ${t}.lock_until <= excluded.locked_at ` +
    `RETURNING locked_by, ${token} AS token`;
}

// A taking's fencing token is its `locked_at` in milliseconds since the epoch. A lock is taken
// over only once the stored `lock_until` is past, which its taking wrote a lease after its
// `locked_at`, a renewal a lease after its own now, and a release with a least hold of 1 ms or more
// at least that after `locked_at`: each new holder's token is greater than the last one's, unless
// the database's clock stepped back by more than a lease meanwhile. A release that deletes the
// row (a lock asked for with no least hold) forgets that past.
const SQLITE_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')";
const SQLITE_IN = "strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (? / 1000.0) || ' seconds')";

const SQL = {
  postgres: {
    create: (t: string) =>
      `CREATE TABLE ${t} (name VARCHAR(64) NOT NULL PRIMARY KEY, ` +
      "lock_until TIMESTAMP(3) WITH TIME ZONE NOT NULL, " +
      "locked_at TIMESTAMP(3) WITH TIME ZONE NOT NULL, locked_by VARCHAR(255) NOT NULL)",
    lock: (t: string) =>
      takeOver(
        t,
        "$1",
        "statement_timestamp() + $2 * interval '1 millisecond'",
        "statement_timestamp()",
        "$3",
        "(extract(epoch FROM locked_at) * 1000)::bigint",
      ),
    renew: (t: string) =>
      `UPDATE ${t} SET lock_until = statement_timestamp() + $1 * interval '1 millisecond' ` +
      "WHERE name = $2 AND locked_by = $3 AND lock_until > statement_timestamp() RETURNING name",
    unlock: (t: string) =>
      `UPDATE ${t} SET lock_until = GREATEST(statement_timestamp(), ` +
      "locked_at + $1 * interval '1 millisecond') WHERE name = $2 AND locked_by = $3",
    delete: (t: string) => `DELETE FROM ${t} WHERE name = $1 AND locked_by = $2`,
  },
  mysql: {
    // utf8mb4, so that any name is stored as it is (the server's default may be latin1), and
    // compared byte for byte: "Tick" and "tick" are two locks, as on PostgreSQL and SQLite.
    create: (t: string) =>
      `CREATE TABLE ${t} (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until DATETIME(3) NOT NULL, ` +
      "locked_at DATETIME(3) NOT NULL, locked_by VARCHAR(255) NOT NULL) " +
      "DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    // MySQL has no RETURNING here: the update takes over an ended lock only (lock_until is set
    // last, as MySQL assigns left to right), and a read says whose the lock is now.
    lock: (t: string) =>
      `INSERT INTO ${t} (name, lock_until, locked_at, locked_by) ` +
      "VALUES (?, UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, UTC_TIMESTAMP(3), ?) " +
      "ON DUPLICATE KEY UPDATE " +
      "locked_by = IF(lock_until <= VALUES(locked_at), VALUES(locked_by), locked_by), " +
      "locked_at = IF(lock_until <= VALUES(locked_at), VALUES(locked_at), locked_at), " +
      "lock_until = IF(lock_until <= VALUES(locked_at), VALUES(lock_until), lock_until)",
    holder: (t: string) =>
      `SELECT locked_by, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', locked_at) DIV 1000 AS token ` +
      `FROM ${t} WHERE name = ?`,
    // No RETURNING on an UPDATE: a read says whether the lock is still this taking's.
    renew: (t: string) =>
      `UPDATE ${t} SET lock_until = UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND ` +
      "WHERE name = ? AND locked_by = ? AND lock_until > UTC_TIMESTAMP(3)",
    held: (t: string) =>
      `SELECT name FROM ${t} WHERE name = ? AND locked_by = ? AND lock_until > UTC_TIMESTAMP(3)`,
    unlock: (t: string) =>
      `UPDATE ${t} SET lock_until = GREATEST(UTC_TIMESTAMP(3), ` +
      "locked_at + INTERVAL ? * 1000 MICROSECOND) WHERE name = ? AND locked_by = ?",
    delete: (t: string) => `DELETE FROM ${t} WHERE name = ? AND locked_by = ?`,
  },
  sqlite: {
    create: (t: string) =>
      `CREATE TABLE ${t} (name TEXT NOT NULL PRIMARY KEY, lock_until TEXT NOT NULL, ` +
      "locked_at TEXT NOT NULL, locked_by TEXT NOT NULL)",
    // Times as text that sorts as it should: 'YYYY-MM-DD HH:MM:SS.SSS', UTC.
    lock: (t: string) =>
      takeOver(
        t,
        "?",
        SQLITE_IN,
        SQLITE_NOW,
        "?",
        "CAST(round((julianday(locked_at) - 2440587.5) * 86400000.0) AS INTEGER)",
      ),
    renew: (t: string) =>
      `UPDATE ${t} SET lock_until = ${SQLITE_IN} ` +
      `WHERE name = ? AND locked_by = ? AND lock_until > ${SQLITE_NOW} RETURNING name`,
    unlock: (t: string) =>
      `UPDATE ${t} SET lock_until = MAX(strftime('%Y-%m-%d %H:%M:%f', 'now'), ` +
      "strftime('%Y-%m-%d %H:%M:%f', locked_at, '+' || (? / 1000.0) || ' seconds')) " +
      "WHERE name = ? AND locked_by = ?",
    delete: (t: string) => `DELETE FROM ${t} WHERE name = ? AND locked_by = ?`,
  },
} as const;

/** A lock taken: who holds it, and its fencing token. */
export interface TakenLock {
  /** The holder as the row names it: the `lockedBy` and an id of this taking. */
  readonly holder: string;
  /**
   * The taking's `locked_at`, in ms since the epoch: greater for each new holder. None where the
   * query gave no such column back (a query of the app's own that answers in its own way).
   */
  readonly token: number | undefined;
}

/** Whether `dialect` is one the table is written for. */
export function isSqlLockDialect(dialect: unknown): dialect is SqlLockDialect {
  return typeof dialect === "string" && Object.hasOwn(SQL, dialect);
}

/** What {@linkcode SqlLockTable} is built over. */
export interface SqlLockTableOptions {
  /** Who uses the table, as its errors start: the class the user wrote. */
  readonly who: string;
  readonly dialect: SqlLockDialect;
  readonly query: SqlLockQuery;
  /** The table's name, checked here: the user's default already applied. */
  readonly table: unknown;
  /** Who holds the locks; `thaw` and a random id when `undefined` or `null`. */
  readonly lockedBy: unknown;
}

/** One locks' table of one database, as one provider or manager takes and releases its locks. */
export class SqlLockTable {
  readonly #dialect: SqlLockDialect;
  readonly #query: SqlLockQuery;
  readonly #table: string;
  readonly #lockedBy: string;

  /**
   * Throws a `TypeError` that `options.who` starts for a table name that is not a plain
   * identifier, then for a `lockedBy` the `locked_by` column cannot hold.
   */
  constructor(options: SqlLockTableOptions) {
    this.#dialect = options.dialect;
    this.#query = options.query;
    this.#table = checkTable(options.table, options.who);
    this.#lockedBy = checkLockedBy(options.lockedBy ?? defaultLockedBy(), options.who);
  }

  /** The statement that creates the table `table` on `dialect`; `who` starts its `TypeError`. */
  static createStatement(dialect: SqlLockDialect, table: unknown, who: string): string {
    return `${SQL[dialect].create(checkTable(table, who))};`;
  }

  /**
   * Why `name` cannot be a row's name exactly, or `undefined`. A space at the end counts: MySQL's
   * and MariaDB's collations pad with spaces, so "tick " would be the lock "tick" there.
   */
  static unstorableName(name: unknown): string | undefined {
    const why = unstorable(name, NAME_LENGTH, `the name column holds ${NAME_LENGTH}`);
    if (why !== undefined || typeof name !== "string" || !name.endsWith(" ")) return why;
    return "ends with a space, which MySQL and MariaDB ignore in comparisons: it would be the " +
      `lock ${JSON.stringify(name.trimEnd())}`;
  }

  /** The database the statements are written for. */
  get dialect(): SqlLockDialect {
    return this.#dialect;
  }

  /** The table's name, as errors show it. */
  get table(): string {
    return this.#table;
  }

  /** Runs `SELECT 1`: whether the database answers, for the health. */
  async ping(): Promise<void> {
    await this.#query("SELECT 1", []);
  }

  /**
   * Takes the lock `name` for `leaseMs`, in one atomic statement that succeeds only where no lock
   * of that name is held (MySQL: and a read of whose it is): this taking's holder, for
   * {@linkcode SqlLockTable.release}, or `undefined` while another holds it. The holder is the
   * `lockedBy` and an id of this taking, so that a late release of a lock that expired and went
   * to another never releases the other's.
   */
  async take(name: string, leaseMs: number): Promise<TakenLock | undefined> {
    const holder = `${this.#lockedBy} ${crypto.randomUUID().slice(0, TAKING_ID_LENGTH)}`;
    const [query, table, statements] = [this.#query, this.#table, SQL[this.#dialect]];
    const params = [name, leaseMs, holder];
    let row: Record<string, unknown> | undefined;
    // With no RETURNING (MySQL), a read says whose the lock is now.
    if ("holder" in statements) {
      await query(statements.lock(table), params);
      [row] = await query(statements.holder(table), [name]);
      if (row?.locked_by !== holder) return undefined;
    } else {
      [row] = await query(statements.lock(table), params);
      if (row === undefined) return undefined;
    }
    const token = Number(row.token);
    return { holder, token: Number.isSafeInteger(token) ? token : undefined };
  }

  /**
   * Moves the end of `holder`'s lock `name` to `leaseMs` from now, while its lease has not
   * ended: whether it had not (a lock whose lease ended is lost, even where nobody took it yet).
   */
  async renew(name: string, leaseMs: number, holder: string): Promise<boolean> {
    const [query, table, statements] = [this.#query, this.#table, SQL[this.#dialect]];
    const params = [leaseMs, name, holder];
    if ("held" in statements) {
      await query(statements.renew(table), params);
      return (await query(statements.held(table), [name, holder])).length > 0;
    }
    return (await query(statements.renew(table), params)).length > 0;
  }

  /**
   * Ends `holder`'s lock `name`. With `minHoldMs` (a scheduler's lock), as ShedLock does: at
   * once or `minHoldMs` after its taking, whichever is later, its row kept (ShedLock, knowing a
   * name's row exists, only updates it from then on: a row deleted under it would hold its lock
   * for ever). Without (a key made of data, `order-42`): at once, its row deleted, so that such
   * keys leave no row behind. A lock that is now another's is left as it is.
   */
  async release(name: string, minHoldMs: number | undefined, holder: string): Promise<void> {
    const statements = SQL[this.#dialect];
    await (minHoldMs !== undefined
      ? this.#query(statements.unlock(this.#table), [minHoldMs, name, holder])
      : this.#query(statements.delete(this.#table), [name, holder]));
  }
}

// `table`, when it is a plain table name; else a `TypeError` that `who` starts.
function checkTable(table: unknown, who: string): string {
  if (typeof table !== "string" || !TABLE.test(table)) {
    throw new TypeError(
      `${who}: table ${JSON.stringify(table)} is not a plain table name ` +
        "(letters, digits, _; up to 63, not starting with a digit)",
    );
  }
  return table;
}

// Why `text` cannot be stored exactly in a column that `holds` `max` characters, or `undefined`.
function unstorable(text: unknown, max: number, holds: string): string | undefined {
  if (typeof text !== "string") return "is not text";
  if (text === "") return "is empty";
  if (text.includes("\0")) return "holds NUL (U+0000), which PostgreSQL cannot store";
  if (LONE_SURROGATE.test(text)) {
    return "holds a lone UTF-16 surrogate, which no database stores as it is";
  }
  const length = [...text].length;
  return length > max ? `is ${length} characters long; ${holds}` : undefined;
}

// Who holds the locks of a provider or manager that was given no name: `thaw` and an id.
function defaultLockedBy(): string {
  return `thaw ${crypto.randomUUID().slice(0, 8)}`;
}

// `lockedBy`, when `locked_by` holds it with the id each taking adds; else a `TypeError` that
// `who` starts.
function checkLockedBy(lockedBy: unknown, who: string): string {
  const why = unstorable(
    lockedBy,
    LOCKED_BY_LENGTH - 1 - TAKING_ID_LENGTH,
    `the locked_by column holds ${LOCKED_BY_LENGTH}, with the ${1 + TAKING_ID_LENGTH} of the ` +
      "id each taking adds",
  );
  if (why !== undefined) {
    throw new TypeError(`${who}: lockedBy ${shownValue(lockedBy)} ${why}`);
  }
  return lockedBy as string;
}
