// The migrations `data({ migrate })` runs before the app's beans are made: the SQL runner's one
// core, on the datasources bootstrap read (not on a config folder of its own), so that the app
// and its migrations see one configuration. Loaded only when an app asks for it.
import { runtimeEnv } from "./config/env.ts";
import { humanProgress } from "./migrate/human_output.ts";
import { runMigrations } from "./migrate/engine.ts";
import { localIdentity } from "./migrate/local_process.ts";
import { MigrationRunError } from "./migrate/migration_run_error.ts";
import { optionFolder } from "./migrate/migrate_api.ts";
import { MIGRATE_API_NAMES } from "./migrate/option_names.ts";
import { DEFAULT_LOCK_TIMEOUT_SECONDS } from "./migrate/run_request.ts";
import { type RunError, type RunReport, silentProgress } from "./migrate/run_report.ts";
import type { Datasource } from "./sql/datasource.ts";
import { sqlDriver } from "./migrate/sql/sql_driver.ts";

/**
 * Runs `migrate` on `list` (those with `migrations.enabled: true`) from the migrations root
 * `root` (a path from `cwd`, or a file URL), each progress line to `onProgress`; throws the runner's {@linkcode MigrationRunError}
 * (file, line, reason) when the run did not succeed.
 */
export async function migrateAtStart(
  list: readonly Datasource[],
  root: string | URL,
  cwd: string,
  onProgress?: (line: string) => void,
): Promise<RunReport> {
  const report = await runMigrations(
    {
      mode: "sql",
      command: "migrate",
      configDir: cwd,
      // As migrate({ migrations }) takes it: a path from `cwd`, or a file URL.
      migrationsRoot: optionFolder(root, cwd),
      dryRun: false,
      force: false,
      lockTimeoutMs: DEFAULT_LOCK_TIMEOUT_SECONDS * 1000,
    },
    { ...sqlDriver, connections: () => Promise.resolve([...list]) },
    {
      env: runtimeEnv(),
      identity: localIdentity(),
      progress: onProgress === undefined ? silentProgress : humanProgress(onProgress),
      cwd,
      optionNames: MIGRATE_API_NAMES,
    },
  );
  if (report.error !== undefined) {
    throw new MigrationRunError(report as RunReport & { error: RunError });
  }
  return report;
}
