// Thaw's outbox migration: a migration in code the app's SQL migration runner applies as it does
// the app's own files, once per datasource, on whichever of the three databases the datasource
// is. In code rather than as `.sql` files, so that one file serves the three databases (the
// runner tells it which) and the lock table's statement is SqlLockManager's own.
import type { SqlMigrationContext } from "../../migrate/code/code_context.ts";
import { SqlLockManager } from "../../tasks/sql_lock_manager.ts";
import { checkTableName, DEFAULT_OUTBOX_TABLE, outboxTableStatements } from "./outbox_table.ts";

/** A migration in code, as a `V<n>__....ts` file's default export. */
export type OutboxMigration = (ctx: SqlMigrationContext) => Promise<void>;

/**
 * The migration that creates the outbox table `table` (`thaw_outbox` by default) and its relay's
 * lock table (`<table>_lock`), on PostgreSQL, MariaDB/MySQL or SQLite: the default export of a
 * migration file of the datasource, `migrations/<datasource>/V<n>__thaw_outbox.ts`.
 *
 * @example The statements it runs, here on a SQLite database of one's own
 * ```ts
 * import assert from "node:assert/strict";
 * import { DatabaseSync } from "node:sqlite";
 * import { outboxMigration } from "./outbox_migration.ts";
 *
 * const db = new DatabaseSync(":memory:");
 * await outboxMigration()({
 *   kind: "sqlite",
 *   query: (text) => Promise.resolve(db.prepare(text).all() as never),
 *   connection: "main",
 *   path: "V3__thaw_outbox.ts",
 *   placeholders: {},
 *   log: () => {},
 *   signal: new AbortController().signal,
 * });
 * const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
 *   .all().map((row) => row.name);
 * assert.deepEqual(tables, ["sqlite_sequence", "thaw_outbox", "thaw_outbox_lock"]);
 * ```
 */
export function outboxMigration(table: string = DEFAULT_OUTBOX_TABLE): OutboxMigration {
  const name = checkTableName(table, "outboxMigration");
  return async (ctx) => {
    for (const text of outboxTableStatements(ctx.kind, name)) await ctx.query(text);
    await ctx.query(SqlLockManager.createTable(ctx.kind, `${name}_lock`));
  };
}
