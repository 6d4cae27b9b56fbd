import { type LockConfiguration, LockProvider, type SimpleLock } from "./lock_provider.ts";
import { MAX_DURATION_MS } from "../config/duration.ts";
import { HEALTH_CONTRIBUTION, type HealthContribution } from "../actuator/health_contribution.ts";

/** The SQL databases {@linkcode SqlLockProvider} speaks. */
export type SqlLockDialect = "postgres" | "mysql" | "sqlite";

/** Runs one statement with positional parameters and gives its rows (none for a write). */
export type SqlLockQuery = (
  sql: string,
  params: readonly (string | number)[],
) => Promise<readonly Record<string, unknown>[]>;

/** Options of {@linkcode SqlLockProvider}. */
export interface SqlLockProviderOptions {
  /** The database the statements are written for. */
  readonly dialect: SqlLockDialect;
  /** How a statement reaches the database: the app's own pool or connection. */
  readonly query: SqlLockQuery;
  /** The locks' table; `shedlock` by default. */
  readonly table?: string | undefined;
  /**
   * Who holds a lock, as the table shows it (ShedLock puts the host name); `thaw` and a random
   * id of this provider by default. Each lock taken adds an id of its own after it (a space and
   * 13 characters), so it is at most 241 characters: `locked_by` holds 255.
   */
  readonly lockedBy?: string | undefined;
}

/** `pg`'s `Pool` or `Client`, as the provider uses it. */
export interface PostgresQueryable {
  /** Runs one statement with `$1`, `$2`... parameters. */
  query(
    sql: string,
    params: unknown[],
  ): Promise<{ readonly rows: readonly Record<string, unknown>[] }>;
}

/**
 * `mysql2/promise`'s `Pool` or `Connection`, as the provider uses it: `execute`, a prepared
 * statement whose values travel apart from the SQL (`query` would quote them into it, which
 * `NO_BACKSLASH_ESCAPES` breaks).
 */
export interface MysqlQueryable {
  /** Prepares and runs one statement with `?` parameters. */
  execute(sql: string, params: (string | number)[]): Promise<readonly [unknown, unknown]>;
}

/** `node:sqlite`'s `DatabaseSync` (or Bun's and Deno's, which are the same), as the provider uses it. */
export interface SqliteDatabaseLike {
  /** Prepares one statement with `?` parameters; `all` runs it and gives its rows. */
  prepare(sql: string): { all(...params: (string | number)[]): unknown[] };
}

// As the datasources' part of `db` names them.
const DATABASES = { sqlite: "SQLite", postgres: "PostgreSQL", mysql: "MySQL or MariaDB" } as const;

// Interpolated into SQL: a plain identifier.
const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

// The columns' lengths, in characters, and what each taking adds to `lockedBy`.
const NAME_LENGTH = 64;
const LOCKED_BY_LENGTH = 255;
const TAKING_ID_LENGTH = 13;
const LONE_SURROGATE = /\p{Surrogate}/u;

// PostgreSQL's and SQLite's one statement that takes a lock: inserted, or taken over from a lock
// that has ended; the row comes back only then. `until` and `now`: the database's times, `name`
// and `by` the placeholders of the lock's name and holder.
function takeOver(t: string, name: string, until: string, now: string, by: string): string {
  return `INSERT INTO ${t} (name, lock_until, locked_at, locked_by) ` +
    `VALUES (${name}, ${until}, ${now}, ${by}) ON CONFLICT (name) DO UPDATE SET ` +
    "lock_until = excluded.lock_until, locked_at = excluded.locked_at, " +
    `locked_by = excluded.locked_by WHERE ${t}.lock_until <= excluded.locked_at RETURNING locked_by`;
}

// How each driver runs a statement with its parameters and gives the rows.
function postgresQuery(pool: PostgresQueryable): SqlLockQuery {
  return async (sql, params) => (await pool.query(sql, [...params])).rows;
}

function mysqlQuery(pool: MysqlQueryable): SqlLockQuery {
  return async (sql, params) => {
    const [rows] = await pool.execute(sql, [...params]);
    return Array.isArray(rows) ? rows as Record<string, unknown>[] : [];
  };
}

function sqliteQuery(db: SqliteDatabaseLike): SqlLockQuery {
  return (sql, params) =>
    Promise.resolve(db.prepare(sql).all(...params) as Record<string, unknown>[]);
}

// Every time is the database's (ShedLock's `usingDbTime()`): replicas whose clocks disagree
// still agree on when a lock ends. In UTC, so that sessions in other time zones agree too. One
// reading of the clock per statement, so that lock_until is locked_at + lockAtMostFor exactly.
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
      ),
    unlock: (t: string) =>
      `UPDATE ${t} SET lock_until = GREATEST(statement_timestamp(), ` +
      "locked_at + $1 * interval '1 millisecond') WHERE name = $2 AND locked_by = $3",
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
    holder: (t: string) => `SELECT locked_by FROM ${t} WHERE name = ?`,
    unlock: (t: string) =>
      `UPDATE ${t} SET lock_until = GREATEST(UTC_TIMESTAMP(3), ` +
      "locked_at + INTERVAL ? * 1000 MICROSECOND) WHERE name = ? AND locked_by = ?",
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
        "strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (? / 1000.0) || ' seconds')",
        "strftime('%Y-%m-%d %H:%M:%f', 'now')",
        "?",
      ),
    unlock: (t: string) =>
      `UPDATE ${t} SET lock_until = MAX(strftime('%Y-%m-%d %H:%M:%f', 'now'), ` +
      "strftime('%Y-%m-%d %H:%M:%f', locked_at, '+' || (? / 1000.0) || ' seconds')) " +
      "WHERE name = ? AND locked_by = ?",
  },
} as const;

/**
 * ShedLock's JDBC provider for Thaw: `@SchedulerLock` locks in one table of PostgreSQL,
 * MariaDB/MySQL or SQLite, through the app's own connection. Taking a lock is one atomic insert
 * or update that succeeds only where no lock of that name is held, and every time is the
 * database's, so replicas whose clocks disagree still agree. The table is yours to create, in a
 * migration: {@linkcode SqlLockProvider.createTable} gives its statement.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DatabaseSync } from "node:sqlite";
 * import { SqlLockProvider } from "@thaw/thaw/lock-sql";
 *
 * const db = new DatabaseSync(":memory:");
 * db.exec(SqlLockProvider.createTable("sqlite"));
 * const replicaA = SqlLockProvider.sqlite(db, { lockedBy: "host-a" });
 * const replicaB = SqlLockProvider.sqlite(db, { lockedBy: "host-b" });
 * const config = { name: "digest", lockAtMostFor: 60_000, lockAtLeastFor: 0 };
 *
 * const lock = await replicaA.lock(config);
 * assert.notEqual(lock, undefined);
 * assert.equal(await replicaB.lock(config), undefined); // A holds it
 * await lock!.unlock();
 * assert.notEqual(await replicaB.lock(config), undefined);
 * ```
 */
export class SqlLockProvider extends LockProvider {
  readonly #dialect: SqlLockDialect;
  readonly #query: SqlLockQuery;
  readonly #table: string;
  readonly #lockedBy: string;

  /**
   * A provider over `options.query`; the factories `postgres`, `mysql` and `sqlite` build it over
   * a driver's own pool. Throws a `TypeError` for a dialect it does not speak, a table name that
   * is not a plain identifier, and a `lockedBy` the `locked_by` column cannot hold.
   */
  constructor(options: SqlLockProviderOptions) {
    super();
    if (typeof options !== "object" || options === null) {
      throw new TypeError(
        "SqlLockProvider: options are { dialect, query, table?, lockedBy? }; or use " +
          "SqlLockProvider.postgres(pool), .mysql(pool), .sqlite(db)",
      );
    }
    const { dialect, query, table = "shedlock" } = options;
    if (!Object.hasOwn(SQL, dialect)) {
      throw new TypeError(
        `SqlLockProvider: dialect ${JSON.stringify(dialect)}; it is one of postgres, mysql, sqlite`,
      );
    }
    if (typeof query !== "function") {
      throw new TypeError("SqlLockProvider: query is the function that runs a statement");
    }
    this.#dialect = dialect;
    this.#query = query;
    this.#table = checkTable(table);
    this.#lockedBy = checkLockedBy(options.lockedBy ?? `thaw ${crypto.randomUUID().slice(0, 8)}`);
  }

  /** Over `pg`'s `Pool` (or a `Client`): `SqlLockProvider.postgres(pool)`. */
  static postgres(
    pool: PostgresQueryable,
    options: Omit<SqlLockProviderOptions, "dialect" | "query"> = {},
  ): SqlLockProvider {
    return new SqlLockProvider({ ...options, dialect: "postgres", query: postgresQuery(pool) });
  }

  /** Over `mysql2/promise`'s `Pool` (or a `Connection`), for MariaDB and MySQL. */
  static mysql(
    pool: MysqlQueryable,
    options: Omit<SqlLockProviderOptions, "dialect" | "query"> = {},
  ): SqlLockProvider {
    return new SqlLockProvider({ ...options, dialect: "mysql", query: mysqlQuery(pool) });
  }

  /** Over a SQLite database of `node:sqlite` (`DatabaseSync`). */
  static sqlite(
    db: SqliteDatabaseLike,
    options: Omit<SqlLockProviderOptions, "dialect" | "query"> = {},
  ): SqlLockProvider {
    return new SqlLockProvider({ ...options, dialect: "sqlite", query: sqliteQuery(db) });
  }

  /**
   * The statement that creates the locks' table, for a migration file of yours (the provider
   * never creates it): ShedLock's columns, `name`, `lock_until`, `locked_at`, `locked_by`. On
   * MySQL and MariaDB in utf8mb4 with a binary collation, so that every name is stored as it is
   * and `"Tick"` is not `"tick"`, as on PostgreSQL and SQLite.
   */
  static createTable(dialect: SqlLockDialect, table = "shedlock"): string {
    if (!Object.hasOwn(SQL, dialect)) {
      throw new TypeError(
        `SqlLockProvider.createTable: dialect ${JSON.stringify(dialect)}; it is one of ` +
          "postgres, mysql, sqlite",
      );
    }
    return `${SQL[dialect].create(checkTable(table))};`;
  }

  /**
   * The lock database's part of the `db` component of the app's health (the actuator's, where it
   * serves health; `management.health.db.enabled: false` turns it off), under the bean's name
   * beside the datasources': UP with the `database` while it answers `SELECT 1`, DOWN with the
   * driver's error, or once `management.health.timeout` passes without an answer.
   * Called by the actuator alone (health_contribution.ts), so left out of the API's docs.
   *
   * @ignore
   */
  [HEALTH_CONTRIBUTION](): HealthContribution {
    return {
      name: "db",
      keyed: true,
      check: async () => {
        await this.#query("SELECT 1", []);
        return { database: DATABASES[this.#dialect] };
      },
    };
  }

  /** Throws a `TypeError` when the lock's name or times are not what the table can hold. */
  override check(config: LockConfiguration): void {
    checkConfiguration(config);
  }

  /**
   * Takes the lock, or `undefined` while another holds it. Rejects with a `TypeError`, before
   * any statement runs, a name the table cannot hold exactly (more than 64 characters, NUL, a
   * lone surrogate, a space at the end, which MySQL and MariaDB do not compare) and durations
   * that are not whole milliseconds; with the database's own error when the table is missing.
   */
  override async lock(config: LockConfiguration): Promise<SimpleLock | undefined> {
    checkConfiguration(config);
    const table = this.#table;
    // Whose this lock is: the holder's name, and an id of this taking, so that a late unlock
    // of a lock that expired and went to another never releases the other's.
    const holder = `${this.#lockedBy} ${crypto.randomUUID().slice(0, TAKING_ID_LENGTH)}`;
    const params = [config.name, config.lockAtMostFor, holder];
    let taken: boolean;
    if (this.#dialect === "mysql") {
      await this.#query(SQL.mysql.lock(table), params);
      const rows = await this.#query(SQL.mysql.holder(table), [config.name]);
      taken = rows[0]?.locked_by === holder;
    } else {
      const rows = await this.#query(SQL[this.#dialect].lock(table), params);
      taken = rows.length > 0;
    }
    if (!taken) return undefined;
    let released = false;
    return {
      unlock: async () => {
        if (released) return;
        released = true;
        await this.#query(SQL[this.#dialect].unlock(table), [
          config.lockAtLeastFor,
          config.name,
          holder,
        ]);
      },
    };
  }
}

// A value as a message shows it: text quoted, anything else as it is.
function shown(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

// Why `text` cannot be stored exactly in a column that `holds` characters, or `undefined`.
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

function checkLockedBy(lockedBy: string): string {
  const why = unstorable(
    lockedBy,
    LOCKED_BY_LENGTH - 1 - TAKING_ID_LENGTH,
    `the locked_by column holds ${LOCKED_BY_LENGTH}, with the ${1 + TAKING_ID_LENGTH} of the ` +
      "id each taking adds",
  );
  if (why !== undefined) throw new TypeError(`SqlLockProvider: lockedBy ${shown(lockedBy)} ${why}`);
  return lockedBy;
}

function checkConfiguration(config: LockConfiguration): void {
  if (typeof config !== "object" || config === null) {
    throw new TypeError("SqlLockProvider: lock() takes { name, lockAtMostFor, lockAtLeastFor }");
  }
  const { name, lockAtMostFor, lockAtLeastFor } = config;
  let why = unstorable(name, NAME_LENGTH, `the name column holds ${NAME_LENGTH}`);
  // MySQL's and MariaDB's collations pad with spaces: "tick " would be the lock "tick" there.
  if (why === undefined && name.endsWith(" ")) {
    why =
      "ends with a space, which MySQL and MariaDB ignore in comparisons: it would be the lock " +
      JSON.stringify(name.trimEnd());
  }
  if (why !== undefined) {
    throw new TypeError(`SqlLockProvider: the lock name ${shown(name)} ${why}`);
  }
  for (const [key, ms] of Object.entries({ lockAtMostFor, lockAtLeastFor })) {
    if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_DURATION_MS) {
      throw new TypeError(
        `SqlLockProvider: ${key} ${shown(ms)} is not a whole number of milliseconds from 0 ` +
          `to ${MAX_DURATION_MS}`,
      );
    }
  }
  if (lockAtLeastFor > lockAtMostFor) {
    throw new TypeError(
      `SqlLockProvider: lockAtLeastFor (${lockAtLeastFor} ms) is more than lockAtMostFor ` +
        `(${lockAtMostFor} ms) for the lock ${JSON.stringify(name)}`,
    );
  }
}

function checkTable(table: string): string {
  if (typeof table !== "string" || !TABLE.test(table)) {
    throw new TypeError(
      `SqlLockProvider: table ${JSON.stringify(table)} is not a plain table name ` +
        "(letters, digits, _; up to 63, not starting with a digit)",
    );
  }
  return table;
}
