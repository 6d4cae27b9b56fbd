import { HEALTH_CONTRIBUTION, type HealthContribution } from "../actuator/health_contribution.ts";
import {
  isSqlLockDialect,
  type SqlLockDialect,
  type SqlLockQuery,
  SqlLockTable,
} from "../sql/sql_lock_table.ts";
import { checkOptionsObject } from "../options_object.ts";
import { shownValue } from "../shown_value.ts";
import { shownKey } from "./shown_key.ts";
import { TableLocks } from "./table_locks.ts";
import { type HeldLock, LockManager, type LockRequest } from "./lock_manager.ts";
import { messageOf } from "../context/message_of.ts";

export type { SqlLockDialect, SqlLockQuery };

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

const WHO = "SqlLockProvider";
const OPTIONS = ["dialect", "query", "table", "lockedBy"];
// As the datasources' part of `db` names them.
const DATABASES = { sqlite: "SQLite", postgres: "PostgreSQL", mysql: "MySQL or MariaDB" } as const;

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

/**
 * ShedLock's JDBC provider for Thaw: a `LockManager` over one table of PostgreSQL, MariaDB/MySQL
 * or SQLite, through a driver's own pool, for an app that does not use `data()` (one that does
 * takes `SqlLockManager` over its datasource: the same table, the same locks). Taking a lock is
 * one atomic insert or update that succeeds only where no lock of that name is held, and every
 * time is the database's, so replicas whose clocks disagree still agree. Declared as a bean, it
 * takes the locks of `@SchedulerLock` jobs (with their `lockAtLeastFor`) and of `@Lockable` methods
 * that name it. The table is yours to create, in a migration: {@linkcode SqlLockProvider.createTable}
 * gives its statement.
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
 * const request = { key: "digest", waitMs: 0, leaseMs: 60_000 };
 *
 * const held = await replicaA.acquire(request);
 * assert.notEqual(held, undefined);
 * assert.equal(await replicaB.acquire(request), undefined); // A holds it
 * await held!.release();
 * assert.notEqual(await replicaB.acquire(request), undefined);
 * ```
 */
export class SqlLockProvider extends LockManager {
  readonly #locks: SqlLockTable;
  readonly #taken: TableLocks = new TableLocks(
    WHO,
    (work, key, what) => this.#run(work, key, what),
  );

  /**
   * A provider over `options.query`; the factories `postgres`, `mysql` and `sqlite` build it over
   * a driver's own pool. Throws a `TypeError` for a dialect it does not speak, a table name that
   * is not a plain identifier, and a `lockedBy` the `locked_by` column cannot hold.
   */
  constructor(options: SqlLockProviderOptions) {
    super();
    const given: unknown = options;
    checkOptionsObject(given, WHO, OPTIONS, {
      hint: "give { dialect, query }, or use SqlLockProvider.postgres(pool), .mysql(pool), " +
        ".sqlite(db)",
    });
    const { dialect, query, table = "shedlock" } = options;
    if (!isSqlLockDialect(dialect)) {
      throw new TypeError(
        `SqlLockProvider: dialect ${shownValue(dialect)}; it is one of postgres, mysql, sqlite`,
      );
    }
    if (typeof query !== "function") {
      throw new TypeError("SqlLockProvider: query is the function that runs a statement");
    }
    this.#locks = new SqlLockTable({ who: WHO, dialect, query, table, lockedBy: options.lockedBy });
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
    if (!isSqlLockDialect(dialect)) {
      throw new TypeError(
        `SqlLockProvider.createTable: dialect ${shownValue(dialect)}; it is one of ` +
          "postgres, mysql, sqlite",
      );
    }
    return SqlLockTable.createStatement(dialect, table, WHO);
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
        await this.#locks.ping();
        return { database: DATABASES[this.#locks.dialect] };
      },
    };
  }

  /**
   * The lock of `request.key`, waiting up to `request.waitMs` while another holds it: `undefined`
   * once the wait ended without it. Rejects, naming the database, the table and the key, when the
   * database fails (down, the table missing); with a `TypeError` for a request that is not one.
   */
  acquire(request: LockRequest): Promise<HeldLock | undefined> {
    return this.#taken.acquire(request);
  }

  // Runs `work` on the provider's connection, naming the database, the table and the key in its
  // failure.
  async #run<T>(
    work: (locks: SqlLockTable) => Promise<T>,
    key: string,
    what: "take" | "renew" | "release",
  ): Promise<T> {
    const locks = this.#locks;
    try {
      return await work(locks);
    } catch (error) {
      throw new Error(
        `${WHO}: could not ${what} the lock ${shownKey(key)} on ${DATABASES[locks.dialect]} ` +
          `(table ${locks.table}): ${messageOf(error)}`,
        { cause: error },
      );
    }
  }
}
