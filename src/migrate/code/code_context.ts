/**
 * What every migration in code is given, whatever it migrates: where it runs, the connection's
 * placeholders, a log line to the run's progress, and the run's Ctrl-C.
 */
export interface MigrationContext {
  /** The connection's (or datasource's) name: the folder the file is in. */
  readonly connection: string;
  /** The file's path in that folder: `V3__backfill.ts`. */
  readonly path: string;
  /**
   * The connection's `migrations.placeholders`, as configured. A value may be a secret: what
   * `log` prints has them written as `${name}`.
   */
  readonly placeholders: Readonly<Record<string, string>>;
  /** A line in the run's progress, under the connection, with placeholder values masked. */
  readonly log: (message: string) => void;
  /** Aborts when the run is interrupted (Ctrl-C): a long loop should stop at a safe point. */
  readonly signal: AbortSignal;
}

/** One row of a query's answer, by column name. */
export type SqlRow = Record<string, unknown>;

/**
 * What a SQL migration in code is given: its datasource's connection, inside its transaction.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { DatabaseSync } from "node:sqlite";
 * import { migrate, type SqlMigrationContext } from "@thaw/thaw/migrate";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-doc-"));
 * await writeFile(
 *   join(dir, "application.yml"),
 *   "datasource:\n  - name: main\n    url: sqlite:./data/app.db\n    migrations: { enabled: true }\n",
 * );
 * const folder = join(dir, "migrations", "main");
 * await mkdir(folder, { recursive: true });
 * await writeFile(join(folder, "V1__users.sql"), "CREATE TABLE users (name TEXT, slug TEXT);\n");
 * await writeFile(join(folder, "V2__names.sql"), "INSERT INTO users (name) VALUES ('Ada L');\n");
 * // The file on disk gives the checksum; the app's module (bundled) is what runs.
 * const backfill = async (ctx: SqlMigrationContext) => {
 *   for (const { name } of await ctx.query<{ name: string }>("SELECT name FROM users")) {
 *     const slug = name.toLowerCase().replaceAll(" ", "-");
 *     await ctx.query("UPDATE users SET slug = ? WHERE name = ?", [slug, name]);
 *   }
 * };
 * await writeFile(join(folder, "V3__slugs.ts"), `export default ${backfill};\n`);
 *
 * const report = await migrate({
 *   config: dir,
 *   migrations: "migrations",
 *   cwd: dir,
 *   modules: { "main/V3__slugs.ts": { default: backfill } },
 * });
 * assert.deepEqual(report.connections[0].files.map((f) => [f.path, f.code]), [
 *   ["V1__users.sql", undefined],
 *   ["V2__names.sql", undefined],
 *   ["V3__slugs.ts", true],
 * ]);
 * const db = new DatabaseSync(join(dir, "data", "app.db"));
 * assert.deepEqual(db.prepare("SELECT slug FROM users").all().map((row) => row.slug), ["ada-l"]);
 * db.close();
 * ```
 */
export interface SqlMigrationContext extends MigrationContext {
  /**
   * The database: how parameters are written (`$1` on PostgreSQL, `?` on SQLite and
   * MySQL/MariaDB).
   */
  readonly kind: "sqlite" | "postgres" | "mysql";
  /**
   * Runs one statement on the file's connection, inside the file's transaction where the
   * database has transactional DDL (PostgreSQL, SQLite), and returns its rows (none for a
   * statement that returns none). A statement that fails rejects with the database's message,
   * and its `code` (SQLSTATE, or MySQL's error name).
   */
  query<R extends SqlRow = SqlRow>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/** What a search migration in code is given: the connection's client. */
export interface SearchMigrationContext extends MigrationContext {
  /**
   * Sends a request through the client JSON files use (its hosts, failover, authentication), and
   * returns the answer's JSON. A write that got no answer is never sent to another host, where
   * it could be applied twice: it rejects, saying it may have been applied. An answer that is
   * not 2xx rejects with its `status` and the cluster's reason.
   */
  request<T = unknown>(
    method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE" | "PATCH",
    path: string,
    body?: unknown,
  ): Promise<T>;
}

/** A migration in code: the default export of a `V<version>__<description>.ts` or `.js` file. */
export type CodeMigration<C extends MigrationContext = MigrationContext> = (
  ctx: C,
) => Promise<void> | void;

/** A code migration's module, as `import()` gives it or an app bundles it. */
export interface CodeMigrationModule {
  /**
   * The function the file runs. Typed with `never` so that a function of any context is one:
   * each kind of connection gives its own.
   */
  readonly default: CodeMigration<never>;
  /** What undoes it (`export async function down(ctx)`): what `undo` runs for its version. */
  readonly down?: CodeMigration<never>;
}
