// The migrations `search({ migrate })` runs before the app's beans are made: the runner's one core
// with its search driver, on the connections bootstrap read (not on a config folder of its own),
// so that the app and its migrations see one configuration. Loaded only when an app asks for it.
import { runtimeEnv } from "./config/env.ts";
import { humanProgress } from "./migrate/human_output.ts";
import { runMigrations } from "./migrate/engine.ts";
import { localIdentity } from "./migrate/local_process.ts";
import { MigrationRunError } from "./migrate/migration_run_error.ts";
import { optionFolder } from "./migrate/migrate_api.ts";
import { MIGRATE_API_NAMES } from "./migrate/option_names.ts";
import { DEFAULT_LOCK_TIMEOUT_SECONDS } from "./migrate/run_request.ts";
import { type RunError, type RunReport, silentProgress } from "./migrate/run_report.ts";
import type { SearchConnection } from "./migrate/search/search_connection.ts";
import { searchDriver } from "./migrate/search/search_driver.ts";

/** How the run goes beside its connections and files. */
export interface SearchMigrateOptions {
  /** `migrate --drift`: drifted resources are applied again. */
  readonly drift: boolean;
  readonly onProgress: ((line: string) => void) | undefined;
}

/**
 * Runs `migrate` on `list` (those with `migrations.enabled: true`) from the migrations root
 * `root` (a path from `cwd`, or a file URL); throws the runner's {@linkcode MigrationRunError}
 * (connection, file, reason) when the run did not succeed.
 */
export async function searchMigrateAtStart(
  list: readonly SearchConnection[],
  root: string | URL,
  cwd: string,
  { drift, onProgress }: SearchMigrateOptions,
): Promise<RunReport> {
  const report = await runMigrations(
    {
      mode: "search",
      command: "migrate",
      configDir: cwd,
      migrationsRoot: optionFolder(root, cwd),
      dryRun: false,
      force: false,
      lockTimeoutMs: DEFAULT_LOCK_TIMEOUT_SECONDS * 1000,
      ...(drift ? { drift: true } : {}),
    },
    { ...searchDriver(), connections: () => Promise.resolve([...list]) },
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
