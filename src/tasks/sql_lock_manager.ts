import type { SqlClient } from "../data/sql_client.ts";
import { isSqlLockDialect, type SqlLockDialect, SqlLockTable } from "../sql/sql_lock_table.ts";
import { DIALECTS } from "../sql/dialects.ts";
import { checkOptionsObject } from "../options_object.ts";
import { shownKey } from "./shown_key.ts";
import { TableLocks } from "./table_locks.ts";
import { type HeldLock, LockManager, type LockRequest } from "./lock_manager.ts";
import { messageOf } from "../context/message_of.ts";

/** The options of {@linkcode SqlLockManager}. */
export interface SqlLockManagerOptions {
  /** The locks' table: `shedlock` by default, the table of `SqlLockProvider`. */
  readonly table?: string | undefined;
  /**
   * Who holds a lock, as the table's `locked_by` shows it: `thaw` and a random id of this manager
   * by default. Each lock taken adds an id of its own after it (a space and 13 characters).
   */
  readonly lockedBy?: string | undefined;
}

const OPTIONS = ["table", "lockedBy"];
const WHO = "SqlLockManager";

/**
 * The locks of `@Lockable` in a table of the app's datasource (PostgreSQL, MariaDB/MySQL or
 * SQLite), so that runs of one key never overlap across the processes that share the database:
 * ShedLock's table, the one `SqlLockProvider` uses (`shedlock` by default; a key and a
 * `@SchedulerLock` of the same name are then one lock), or a table of its own. Taking a lock is
 * one atomic insert, or update of a lock whose lease has ended; every time is the database's. A
 * taken lock names its holder and an id of that taking, so that a release that comes after the
 * lease ended and another took the lock leaves the other's lock alone. While another holds the
 * key, `acquire` tries again after a pause that grows from 5 ms to 200 ms, until `waitMs`.
 *
 * **Rows.** A release deletes its lock's row (while it is still this taking's), so keys made of
 * arguments (`order-42`) leave no row behind. A lock asked for with `minHoldMs` (a
 * `@SchedulerLock`'s, its `lockAtLeastFor`) keeps its row, its end moved to `minHoldMs` after its
 * taking or to the release, as ShedLock does: ShedLock, once it knows a name's row, only updates
 * it, so Java services on ShedLock can share the table. The row of a holder that died stays until
 * its key is taken and released again.
 *
 * **Connection.** Its statements run outside the caller's transaction, on a connection of the
 * datasource's pool of their own, each committed at once: a lock taken in a transaction that
 * rolls back is still held, until released. On SQLite, inside a write transaction of the same
 * datasource (which holds SQLite's one writer), they run in that transaction: no other
 * connection could write before it ends, so no one else can take the lock meanwhile either.
 *
 * **Keys.** A key is the row's `name` as it is when that column holds it exactly (at most 64
 * characters, no NUL, no lone surrogate, no trailing space); any other key is stored as
 * `sha256:` and the base64url SHA-256 of its UTF-16 code units, 50 characters.
 *
 * The table is created by a migration of the app: {@linkcode SqlLockManager.createTable} gives its
 * statement, which is `SqlLockProvider.createTable`'s.
 *
 * @example Two processes over one SQLite database, as two managers
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { data, SqlClient } from "@thaw/thaw/data";
 * import { SqlLockManager } from "@thaw/thaw/tasks";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 * });
 * const sql = app.getBean(SqlClient);
 * await sql.unsafe(SqlLockManager.createTable(sql.kind)); // a migration's work
 * const a = new SqlLockManager(sql, { lockedBy: "host-a" });
 * const b = new SqlLockManager(sql, { lockedBy: "host-b" });
 * const request = { key: "order-42", waitMs: 0, leaseMs: 60_000 };
 *
 * const held = await a.acquire(request);
 * assert.notEqual(held, undefined);
 * assert.equal(await b.acquire(request), undefined); // a holds it
 * await held!.release();
 * const next = await b.acquire(request);
 * assert.notEqual(next, undefined);
 * await next!.release();
 * await app.close();
 * ```
 */
export class SqlLockManager extends LockManager {
  readonly #sql: SqlClient;
  readonly #locks: SqlLockTable;
  readonly #taken: TableLocks = new TableLocks(
    WHO,
    (work, key, what) => this.#run(work, key, what),
  );

  /**
   * A manager over the datasource of `sql` (the app's `SqlClient` bean). Throws a `TypeError` for
   * what is not a `SqlClient`, an unknown option, a table name that is not a plain identifier and
   * a `lockedBy` the `locked_by` column cannot hold.
   */
  constructor(sql: SqlClient, options: SqlLockManagerOptions = {}) {
    super();
    if (
      typeof sql !== "object" || sql === null || typeof sql.unsafe !== "function" ||
      typeof sql.transaction !== "function"
    ) {
      throw new TypeError(`${WHO}: new SqlLockManager(sql, options?) takes the app's SqlClient`);
    }
    if (!isSqlLockDialect(sql.kind)) {
      throw new TypeError(`${WHO}: datasource "${sql.name}" is ${String(sql.kind)}`);
    }
    const given: unknown = options;
    checkOptionsObject(given, WHO, OPTIONS);
    this.#sql = sql;
    this.#locks = new SqlLockTable({
      who: WHO,
      dialect: sql.kind,
      query: async (text, params) => (await sql.unsafe(text, params)).rows,
      table: options.table ?? "shedlock",
      lockedBy: options.lockedBy,
    });
  }

  /**
   * The statement that creates the locks' table on `kind` (a `SqlClient`'s `kind`), for a
   * migration of the app: `SqlLockProvider.createTable`'s, ShedLock's columns.
   */
  static createTable(kind: SqlLockDialect, table = "shedlock"): string {
    if (!isSqlLockDialect(kind)) {
      throw new TypeError(
        `${WHO}.createTable: ${JSON.stringify(kind)} is none of postgres, mysql, sqlite`,
      );
    }
    return SqlLockTable.createStatement(kind, table, WHO);
  }

  /**
   * The lock of `request.key`, waiting up to `request.waitMs` while another holds it: `undefined`
   * once the wait ended without it. Rejects, naming the datasource, the table and the key, when the
   * database fails (down, the table missing); with a `TypeError` for a request that is not one.
   */
  acquire(request: LockRequest): Promise<HeldLock | undefined> {
    return this.#taken.acquire(request);
  }

  // Runs `work` outside the caller's transaction (see the class's "Connection"), and names the
  // datasource, table and key in its failure.
  async #run<T>(
    work: (locks: SqlLockTable) => Promise<T>,
    key: string,
    what: "take" | "renew" | "release",
  ): Promise<T> {
    const [sql, locks] = [this.#sql, this.#locks];
    try {
      if (DIALECTS[sql.kind].oneWriter) {
        const inWrite = await sql.transaction(
          (status) => status.hasTransaction() && !status.readOnly,
          { propagation: "SUPPORTS", readOnly: true },
        );
        if (inWrite) return await work(locks);
      }
      return await sql.transaction(() => work(locks), { propagation: "NOT_SUPPORTED" });
    } catch (error) {
      throw new Error(
        `${WHO}: could not ${what} the lock ${shownKey(key)} on datasource ` +
          `"${sql.name}" (table ${this.#locks.table}): ${messageOf(error)}`,
        { cause: error },
      );
    }
  }
}
