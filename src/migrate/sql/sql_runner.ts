import { join } from "node:path";
import process from "node:process";
import { decodeFileText } from "../file_text.ts";
import { MigrationFileError } from "../migration_error.ts";
import { readMigrationFiles } from "../migration_files.ts";
import { type MigrationRunOptions, runTargets, selectEnabled } from "../migration_runner.ts";
import type { RunReport } from "../run_report.ts";
import type { Datasource } from "./datasource.ts";
import { MysqlDatabase } from "./mysql_database.ts";
import { PostgresDatabase } from "./postgres_database.ts";
import { loadDatasources } from "./sql_config.ts";
import type { SqlDatabase } from "./sql_database.ts";
import { SqliteDatabase } from "./sqlite_database.ts";
import { type SqlFile, SqlTarget } from "./sql_target.ts";

/** What to run: the command line's options, and where relative SQLite paths start. */
export interface SqlRunOptions extends MigrationRunOptions {
  /** Default: the working directory. */
  readonly cwd?: string;
}

/**
 * Runs the SQL migrations: reads the datasources, reads every `.sql` file of every selected
 * datasource (nothing runs while one is not UTF-8), then hands the datasources to the shared
 * runner. Each file runs once, through the driver's multi-statement support; its record is
 * written in the same transaction where the database has transactional DDL.
 */
export async function runSqlMigrations(options: SqlRunOptions): Promise<RunReport> {
  const selected = selectEnabled(
    await loadDatasources(
      options.configDir,
      options.migrationsRoot,
      options.env,
      options.cwd ?? process.cwd(),
    ),
    options.connection,
    "datasource",
  );
  const executedBy = `${options.identity.user || "unknown"}@${options.identity.host}`;
  const work = [];
  for (const datasource of selected) {
    const files = options.command === "unlock"
      ? []
      : await readMigrationFiles(join(options.migrationsRoot, datasource.name), ".sql");
    const planned: SqlFile[] = files.map((f) => {
      const text = decodeFileText(f.bytes);
      if (text === undefined) throw new MigrationFileError(f.path, "is not valid UTF-8");
      return { path: f.path, hash: f.hash, text };
    });
    work.push({
      target: new SqlTarget(datasource, open(datasource, options.identity), executedBy),
      files: planned,
    });
  }
  return await runTargets(work, { ...options, dryRun: options.dryRun ?? false });
}

// Opening is lazy: nothing connects before the first query.
function open(datasource: Datasource, identity: { host: string; pid: number }): SqlDatabase {
  switch (datasource.kind) {
    case "postgres":
      return new PostgresDatabase(datasource, identity);
    case "mysql":
      return new MysqlDatabase(datasource);
    case "sqlite":
      return new SqliteDatabase(datasource);
  }
}
