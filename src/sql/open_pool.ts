// A datasource's pool, its driver loaded only now, for data access and the migration runner
// alike: an app whose configuration names no PostgreSQL datasource never loads pg.
import { type Datasource, driverPackages } from "./datasource.ts";
import { importOptional } from "../runtime/optional_module.ts";
import type { DataPool, PoolOpener } from "./data_pool.ts";
import {
  type MigrationSession,
  type PoolSettings,
  resolvePoolSettings,
  SQLITE_NO_TIMEOUT,
} from "./pool_settings.ts";
import { openSqlitePool } from "./sqlite_pool.ts";
import { sqliteMisfit } from "./sqlite_settings.ts";

/**
 * Opens the pool of `datasource` with `settings`; `migration`: its connections are the migration
 * runner's (PostgreSQL, MySQL). A driver that is not installed is a `MissingPackageError` naming
 * the datasource and the line that installs it; a setting that is not a positive number, or a
 * `sqlite` one that cannot apply, is a RangeError naming it. Nothing connects before the first
 * call.
 */
export async function openPool(
  datasource: Datasource,
  settings: PoolSettings,
  migration?: MigrationSession,
): Promise<DataPool> {
  // Checked before a driver loads, so a typo fails the same with or without it.
  const resolved = resolvePoolSettings(datasource.name, settings);
  const misfit = sqliteMisfit(datasource.kind, datasource.location, settings.sqlite);
  if (misfit !== undefined) {
    throw new RangeError(`datasource "${datasource.name}": ${misfit.key} ${misfit.message}`);
  }
  if (datasource.kind === "sqlite" && resolved.queryTimeoutMs !== undefined) {
    throw new RangeError(
      `datasource "${datasource.name}": pool.query-timeout ${SQLITE_NO_TIMEOUT}`,
    );
  }
  return (await poolOpener(datasource))(datasource, resolved, migration);
}

/**
 * The opener of `datasource`'s pool, its driver loaded now: a driver that is not installed is a
 * `MissingPackageError` naming the datasource and the line that installs it.
 */
export async function poolOpener(datasource: Datasource): Promise<PoolOpener> {
  const need = (packages: string[], what: string) => driverPackages(datasource, packages, what);
  switch (datasource.kind) {
    case "postgres":
      return (await importOptional(
        () => import("./postgres_pool.ts"),
        need(["pg", "pg-connection-string"], "the pg driver"),
      )).openPostgresPool;
    case "mysql":
      return (await importOptional(
        () => import("./mysql_pool.ts"),
        need(["mysql2"], "the mysql2 driver"),
      )).openMysqlPool;
    case "sqlite":
      return openSqlitePool;
  }
}
