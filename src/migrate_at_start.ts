// The migrations `data({ migrate })` runs before the app's beans are made, with the SQL driver:
// at the root of src/ because it joins data access and the runner, which do not import each
// other. Loaded only when an app asks for it.
import { migrateWith } from "./migrate/at_start.ts";
import type { RunReport } from "./migrate/run_report.ts";
import type { Datasource } from "./sql/datasource.ts";
import { sqlDriver } from "./migrate/sql/sql_driver.ts";

/**
 * Runs `migrate` on `list` (those with `migrations.enabled: true`) from the migrations root
 * `root` (a path from `cwd`, or a file URL), each progress line to `onProgress`; throws the
 * runner's `MigrationRunError` (file, line, reason) when the run did not succeed.
 */
export function migrateAtStart(
  list: readonly Datasource[],
  root: string | URL,
  cwd: string,
  onProgress?: (line: string) => void,
): Promise<RunReport> {
  return migrateWith(sqlDriver, list, root, cwd, { onProgress });
}
