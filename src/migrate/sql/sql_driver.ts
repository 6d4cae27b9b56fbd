import { BUILT_IN_CAPABILITIES } from "../built_in_capabilities.ts";
import { type DriverContext, type MigrationDriver, recordedBy } from "../driver.ts";
import type { DatabaseKind, Datasource } from "../../sql/datasource.ts";
import { poolOpener } from "../../sql/open_pool.ts";
import { planSqlFile } from "./plan_sql_file.ts";
import { loadDatasources } from "./sql_config.ts";
import type { SqlDatabase } from "./sql_database.ts";
import { SqliteDatabase } from "./sqlite_database.ts";
import { type SqlPlannedFile, SqlTarget } from "./sql_target.ts";
import { isCodePath } from "../code/code_file.ts";
import { planCodeFile } from "../code/plan_code_file.ts";
import { definedFields } from "../../defined_fields.ts";

/**
 * SQL migrations: `.sql` files on the datasources of `application.yml` (SQLite, PostgreSQL,
 * MariaDB/MySQL). Each file runs once, through the driver's multi-statement support; its record
 * is written in the same transaction where the database has transactional DDL.
 */
export const sqlDriver: MigrationDriver<Datasource, SqlPlannedFile> = {
  mode: "sql",
  noun: "datasource",
  extension: ".sql",
  capabilities: BUILT_IN_CAPABILITIES.sql,
  connections: (context) =>
    loadDatasources(
      context.configDir,
      context.migrations,
      context.env,
      context.cwd,
      context.optionNames,
    ),
  plan: (file, datasource, given) =>
    isCodePath(file.path) ? planCodeFile(file, given) : planSqlFile(file, datasource.placeholders),
  async open(datasources, context) {
    const executedBy = recordedBy(context.identity);
    // Every driver is loaded before the first query: a missing one is a configuration error,
    // found before anything is sent. Nothing connects before the first query.
    const targets: SqlTarget[] = [];
    try {
      for (const datasource of datasources) {
        const db = await open(datasource, context);
        targets.push(
          new SqlTarget(datasource, db, executedBy, context.requests, {
            progress: context.progress,
            ...definedFields({ signal: context.signal }),
            ...(context.stopTimeoutMs === undefined
              ? {}
              : { stopTimeoutMs: context.stopTimeoutMs }),
            optionNames: context.optionNames,
          }),
        );
      }
    } catch (error) {
      await Promise.allSettled(targets.map((t) => t.close()));
      throw error;
    }
    return targets;
  },
};

/**
 * The database class of a datasource. The PostgreSQL and MariaDB drivers are optional peer
 * dependencies: loaded as the datasource's pool loads them, only for a datasource of that kind, and
 * a driver that is not installed is a `MissingPackageError` naming the datasource and the line that
 * installs it. SQLite is built into the runtime. Opening is lazy: nothing connects before the
 * first query.
 */
function open(datasource: Datasource, context: DriverContext): Promise<SqlDatabase> {
  return OPENERS[datasource.kind](datasource, context);
}

// Each kind of database's class. The servers' drivers are loaded first, so that a missing one
// fails before anything is sent; postgres_database.ts imports pg itself (its counting query),
// which the loader found installed.
const OPENERS: Readonly<
  Record<DatabaseKind, (datasource: Datasource, context: DriverContext) => Promise<SqlDatabase>>
> = {
  sqlite: (datasource, context) =>
    Promise.resolve(
      new SqliteDatabase(datasource, context.lockTimeoutMs, context.optionNames.lockTimeout),
    ),
  postgres: async (datasource, context) => {
    await poolOpener(datasource);
    const { PostgresDatabase } = await import("./postgres_database.ts");
    const { identity, optionNames, command } = context;
    return new PostgresDatabase(datasource, identity, optionNames.lockTimeout, command);
  },
  mysql: async (datasource, context) => {
    await poolOpener(datasource);
    const { MysqlDatabase } = await import("./mysql_database.ts");
    return new MysqlDatabase(datasource, context.optionNames.lockTimeout);
  },
};
