/**
 * The migration runners from code: what `cli.ts` (`npx thaw`) does, as a function that returns
 * the run's report and throws {@linkcode MigrationRunError} when the run did not succeed. An app
 * can bring its database up to date before it serves:
 *
 * ```ts ignore
 * import { bootstrap } from "@thaw/thaw";
 * import { loadConfig } from "@thaw/thaw/config";
 * import { migrate } from "@thaw/thaw/migrate";
 * import { listen } from "@thaw/thaw/server";
 *
 * await migrate({ config: "./config", migrations: "./migrations" });
 * const app = await bootstrap({ config: await loadConfig("./config/application.yml") });
 * await listen(app);
 * ```
 *
 * Kept apart from `@thaw/thaw` on purpose: an app that only serves HTTP never loads the runners.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { migrate } from "@thaw/thaw/migrate";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-doc-"));
 * await writeFile(
 *   join(dir, "application.yml"),
 *   'datasource:\n  - name: main\n    url: "sqlite::memory:"\n    migrations: { enabled: true }\n',
 * );
 * const report = await migrate({ config: dir, migrations: dir });
 * // There is no folder main/ of files to run: nothing was opened.
 * assert.equal(report.connections[0].state, "no-folder");
 * ```
 *
 * @module
 */
export { ConfigError } from "./src/config/config_error.ts";
export type { Command } from "./src/migrate/command/command.ts";
export type { DatabaseKind } from "./src/sql/datasource.ts";
export type {
  CallbackReport,
  ConnectionDrift,
  ConnectionReport,
  ConnectionState,
  DriftReport,
  ErrorKind,
  FileAction,
  FileReport,
  FileResult,
  LockOwner,
  ReindexReport,
  ReportCommand,
  RunError,
  RunReport,
} from "./src/migrate/run_report.ts";
export type { FailureDetail } from "./src/migrate/migration_error.ts";
export type {
  CodeMigration,
  CodeMigrationModule,
  MigrationContext,
  SearchMigrationContext,
  SqlMigrationContext,
  SqlRow,
} from "./src/migrate/code/code_context.ts";
export type {
  MigrationConnectionStatus,
  MigrationFileState,
  MigrationFileStatus,
} from "./src/migrate/migration_status.ts";
export { migrate, type MigrateOptions } from "./src/migrate/migrate_api.ts";
export { MigrationRunError } from "./src/migrate/migration_run_error.ts";
export {
  migrationStatus,
  type MigrationStatusBody,
  type MigrationStatusOptions,
} from "./src/migrate/migration_status_endpoint.ts";
export { summaryLines } from "./src/migrate/summary_lines.ts";
export { type DatasourceInfo, readDatasource } from "./src/migrate/read_datasource.ts";
