// Thaw's jobs migration: a migration in code the app's SQL migration runner applies as it does the
// app's own files, on whichever of the three databases the datasource is. In code rather than as
// `.sql` files, so that one file serves the three databases (the runner tells it which).
import type { SqlMigrationContext } from "../migrate/code/code_context.ts";
import { jobTableStatements } from "../sql/job_statements.ts";

/** A migration in code, as a `V<n>__....ts` file's default export. */
export type JobsMigration = (ctx: SqlMigrationContext) => Promise<void>;

/**
 * The migration that creates the jobs table (`thaw_jobs`) and its indexes, on PostgreSQL,
 * MariaDB/MySQL or SQLite: the default export of a migration file of the datasource that keeps
 * the jobs, `migrations/<datasource>/V<n>__thaw_jobs.ts`.
 *
 * @example The statements it runs, here on a SQLite database of one's own
 * ```ts
 * import assert from "node:assert/strict";
 * import { DatabaseSync } from "node:sqlite";
 * import { jobsMigration } from "./jobs_migration.ts";
 *
 * const db = new DatabaseSync(":memory:");
 * await jobsMigration()({
 *   kind: "sqlite",
 *   query: (text) => Promise.resolve(db.prepare(text).all() as never),
 *   connection: "main",
 *   path: "V4__thaw_jobs.ts",
 *   placeholders: {},
 *   log: () => {},
 *   signal: new AbortController().signal,
 * });
 * const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
 *   .all().map((row) => row.name);
 * assert.deepEqual(tables, ["sqlite_sequence", "thaw_jobs"]);
 * ```
 */
export function jobsMigration(): JobsMigration {
  return async (ctx) => {
    for (const text of jobTableStatements(ctx.kind)) await ctx.query(text);
  };
}
