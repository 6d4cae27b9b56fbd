/**
 * Locks in SQL over a driver's own pool: {@linkcode SqlLockProvider}, a `LockManager` that keeps
 * its locks in one table of PostgreSQL, MariaDB/MySQL or SQLite through the app's own connection
 * (`pg`, `mysql2/promise` or `node:sqlite`), for an app that does not use `data()` (one that does
 * takes `SqlLockManager` of `@thaw/thaw/tasks`, over the same table). Registered from a `@Bean`
 * method, it runs each locked `@Scheduled` job on one replica per tick; the table is created by a
 * migration of the app (`SqlLockProvider.createTable(dialect)` gives its statement).
 *
 * Apart from the default entry point, as `@thaw/thaw/cache-redis` is, so that an app without
 * replicas to coordinate never loads it.
 *
 * @example Two replicas over one SQLite database: the second waits for the first's lock
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
 * await held?.release();
 * assert.notEqual(await replicaB.acquire(request), undefined);
 * ```
 *
 * @module
 */
export {
  type MysqlQueryable,
  type PostgresQueryable,
  type SqliteDatabaseLike,
  type SqlLockDialect,
  SqlLockProvider,
  type SqlLockProviderOptions,
  type SqlLockQuery,
} from "./src/tasks/sql_lock_provider.ts";
