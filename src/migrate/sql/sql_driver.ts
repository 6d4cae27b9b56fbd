import { join } from "node:path";
import process from "node:process";
import { completeReport, notRun } from "../connection_outcomes.ts";
import { readMigrationFiles, requireMigrationsRoot } from "../migration_files.ts";
import { type MigrationRunOptions, runTargets, selectEnabled } from "../migration_runner.ts";
import { importOptional } from "../../runtime/optional_module.ts";
import { planAll, planFor } from "../plan_error.ts";
import { planSqlFile } from "./plan_sql_file.ts";
import type { RunReport } from "../run_report.ts";
import type { Datasource } from "./datasource.ts";
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
 * Runs the SQL migrations: reads the datasources, checks the migrations root, reads every `.sql`
 * file of every selected datasource (nothing runs while one is not UTF-8; a datasource without a
 * folder is reported and not opened), then hands the datasources to the shared runner; the report
 * lists every configured datasource. Each file runs once, through the driver's multi-statement
 * support; its record is written in the same transaction where the database has transactional DDL.
 */
export async function runSqlMigrations(options: SqlRunOptions): Promise<RunReport> {
  const configured = await loadDatasources(
    options.configDir,
    options.migrationsRoot,
    options.env,
    options.cwd ?? process.cwd(),
  );
  // `unlock` reads no files; anything else needs the migrations root.
  const unlock = options.command === "unlock";
  if (!unlock) await requireMigrationsRoot(options.migrationsRoot);
  const { selected, skipped } = selectEnabled(configured, options.connection, "datasource");
  const executedBy = `${options.identity.user || "unknown"}@${options.identity.host}`;
  const plans: { datasource: Datasource; files: SqlFile[] }[] = [];
  for (const datasource of selected) {
    const folder = join(options.migrationsRoot, datasource.name);
    const planned = unlock ? [] : await planFor(datasource.name, async () =>
      planAll(
        await readMigrationFiles(options.migrationsRoot, datasource.name, ".sql"),
        (f) => planSqlFile(f, datasource.placeholders),
      ));
    // No folder: nothing to apply, so the database is not even opened.
    if (planned === undefined) {
      skipped.push(notRun(datasource.name, "no-folder", `no folder ${folder}`));
    } else plans.push({ datasource, files: planned });
  }
  // Made once every file is planned: nothing is opened for a run that stops at a bad file. Every
  // driver is loaded before the first query: a missing one is a configuration error, found
  // before anything is sent.
  const work = [];
  for (const { datasource, files } of plans) {
    const db = await open(datasource, options.identity, options.lockTimeoutMs);
    work.push({ target: new SqlTarget(datasource, db, executedBy), files });
  }
  const report = await runTargets(work, { ...options, dryRun: options.dryRun ?? false });
  return completeReport(report, configured.map((d) => d.name), skipped, options.signal);
}

/**
 * The database class of a datasource. The PostgreSQL and MariaDB drivers are optional peer
 * dependencies: their module (which imports the driver) is loaded only for a datasource of that
 * kind, and a driver that is not installed is a `MissingPackageError` naming the datasource and
 * the line that installs it. SQLite is built into the runtime. Opening is lazy: nothing connects
 * before the first query.
 */
async function open(
  datasource: Datasource,
  identity: { host: string; pid: number },
  lockTimeoutMs: number,
): Promise<SqlDatabase> {
  const need = (packages: string[], what: string) => ({
    packages,
    what,
    neededBy:
      `${datasource.source ? `${datasource.source}: ` : ""}datasource "${datasource.name}" ` +
      `(kind ${datasource.kind})`,
    connection: datasource.name,
  });
  switch (datasource.kind) {
    case "postgres": {
      const { PostgresDatabase } = await importOptional(
        () => import("./postgres_database.ts"),
        need(["pg", "pg-connection-string"], "the pg driver"),
      );
      return new PostgresDatabase(datasource, identity);
    }
    case "mysql": {
      const { MysqlDatabase } = await importOptional(
        () => import("./mysql_database.ts"),
        need(["mysql2"], "the mysql2 driver"),
      );
      return new MysqlDatabase(datasource);
    }
    case "sqlite":
      return new SqliteDatabase(datasource, lockTimeoutMs);
  }
}
