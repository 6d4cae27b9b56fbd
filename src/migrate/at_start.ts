// The migrations an app runs before its beans are made (`data({ migrate })`, `search({ migrate })`):
// the runner's one core with one driver, on the connections bootstrap read rather than on a
// config folder of its own, so that the app and its migrations see one configuration. Knows no
// driver: each caller names its own, so that an app carries only the one it migrates with.
import { runtimeEnv } from "../config/env.ts";
import type { DriverConnection, MigrationDriver } from "./driver.ts";
import type { PlannedFile } from "./plan/planned_file.ts";
import { runMigrations } from "./engine.ts";
import { humanProgress } from "./human_output.ts";
import { localIdentity } from "./local_process.ts";
import { optionFolder } from "./option_folder.ts";
import { MigrationRunError } from "./migration_run_error.ts";
import { MIGRATE_API_NAMES } from "./option_names.ts";
import { DEFAULT_LOCK_TIMEOUT_SECONDS } from "./run_request.ts";
import { type RunError, type RunReport, silentProgress } from "./run_report.ts";

/** How a run at start goes beside its connections and files. */
export interface AtStartOptions {
  /** `migrate --drift`: drifted resources are applied again (search). */
  readonly drift?: boolean | undefined;
  /** Each progress line, as the command line prints it; nothing is printed without it. */
  readonly onProgress?: ((line: string) => void) | undefined;
}

/**
 * Runs `migrate` with `driver` on `list` (those with `migrations.enabled: true`) from the
 * migrations root `root` (a path from `cwd`, or a file URL); throws the runner's
 * {@linkcode MigrationRunError} (connection, file, line, reason) when the run did not succeed.
 */
export async function migrateWith<C extends DriverConnection, F extends PlannedFile>(
  driver: MigrationDriver<C, F>,
  list: readonly C[],
  root: string | URL,
  cwd: string,
  { drift, onProgress }: AtStartOptions = {},
): Promise<RunReport> {
  const report = await runMigrations(
    {
      mode: driver.mode,
      command: "migrate",
      configDir: cwd,
      // As migrate({ migrations }) takes it: a path from `cwd`, or a file URL.
      migrations: optionFolder(root, cwd),
      dryRun: false,
      force: false,
      lockTimeoutMs: DEFAULT_LOCK_TIMEOUT_SECONDS * 1000,
      ...(drift === true ? { drift: true } : {}),
    },
    { ...driver, connections: () => Promise.resolve([...list]) },
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
