/**
 * Data access: each `datasource:` entry of the configuration as a `SqlClient` bean, its
 * migrations run before the app serves, and `@Transactional`. An app that does not import this
 * entry point carries none of it; a database's driver is loaded only when the configuration names
 * that database.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { data, SqlClient } from "@thaw/thaw/data";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 * });
 * const sql = app.getBean(SqlClient); // the primary datasource's; app.getBean("main") too
 * await sql.execute`CREATE TABLE notes (body TEXT)`;
 * const body = "it's a bound value; DROP TABLE notes";
 * await sql.transaction(async () => {
 *   await sql.execute`INSERT INTO notes (body) VALUES (${body})`;
 * });
 * assert.equal((await sql.one<{ body: string }>`SELECT body FROM notes`).body, body);
 * await app.close(); // closes the pool, after the beans that use it
 * ```
 *
 * @module
 */
export { data, type DataOptions } from "./src/data/data_setup.ts";
export type { DataFeature } from "./src/data/data_feature.ts";
export { type ExecuteResult, SqlClient, type StatementOutcome } from "./src/data/sql_client.ts";
export type { SqlFragment, SqlIdentifier } from "./src/data/sql_template.ts";
export { DataError, type DataErrorReason } from "./src/sql/data_error.ts";
export { UnexpectedRollbackError } from "./src/data/unexpected_rollback_error.ts";
export { currentTransactionStatus, type TransactionStatus } from "./src/data/transaction_status.ts";
export {
  type ErrorClass,
  Isolation,
  Propagation,
  type TransactionOptions,
} from "./src/data/transaction_options.ts";
export {
  Transactional,
  type TransactionalDecorator,
  type TransactionalOptions,
} from "./src/data/transactional.ts";
export {
  TransactionalEventListener,
  type TransactionalEventListenerOptions,
  type TransactionPhase,
} from "./src/data/transactional_event_listener.ts";
export type { PoolSettings } from "./src/sql/pool_settings.ts";
export type {
  SqliteJournalMode,
  SqliteSettings,
  SqliteSynchronous,
} from "./src/sql/sqlite_settings.ts";
