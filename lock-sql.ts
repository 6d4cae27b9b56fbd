/**
 * Scheduler locks in SQL: {@linkcode SqlLockProvider}, the `LockProvider` that keeps the locks of
 * `@SchedulerLock` in one table of PostgreSQL, MariaDB/MySQL or SQLite, through the app's own
 * connection (`pg`, `mysql2/promise` or `node:sqlite`). Registered from a `@Bean` method, it runs
 * each locked `@Scheduled` job on one replica per tick; the table is created by a migration of the
 * app (`SqlLockProvider.createTable(dialect)` gives its statement).
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
 * const config = { name: "digest", lockAtMostFor: 60_000, lockAtLeastFor: 0 };
 *
 * const lock = await replicaA.lock(config);
 * assert.notEqual(lock, undefined);
 * assert.equal(await replicaB.lock(config), undefined); // A holds it
 * await lock?.unlock();
 * assert.notEqual(await replicaB.lock(config), undefined);
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
} from "./src/scheduling/sql_lock_provider.ts";
