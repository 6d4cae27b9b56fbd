import { migrate, type MigrateOptions } from "./migrate_api.ts";
import { MigrationRunError } from "./migration_run_error.ts";
import { type MigrationConnectionStatus, migrationStatuses } from "./migration_status.ts";
import { definedFields } from "../defined_fields.ts";

/** What {@linkcode migrationStatus} reads: {@linkcode migrate}'s folders and environment. */
export type MigrationStatusOptions = Pick<MigrateOptions, "config" | "migrations" | "env" | "cwd">;

/** What the actuator's `migrations` endpoint answers. */
export interface MigrationStatusBody {
  /** Every SQL datasource, then every search connection, in the order of the configuration. */
  readonly connections: readonly MigrationConnectionStatus[];
}

/**
 * The actuator's `migrations` endpoint: `status` of every SQL datasource and search connection of
 * a config folder, as `cli.ts status` reads it (nothing is written), for
 * `actuator({ migrations: migrationStatus({ config, migrations }) })`. A connection that fails
 * (cannot be reached) is reported (`state: "error"`) beside the others, which are asked again on
 * their own; a configuration or a file that cannot be read rejects the call. Calls made while one
 * is under way share its answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { migrate, migrationStatus } from "@thaw/thaw/migrate";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-doc-"));
 * await writeFile(
 *   join(dir, "application.yml"),
 *   'datasource:\n  - name: main\n    url: "sqlite::memory:"\n    migrations: { enabled: true }\n',
 * );
 * await mkdir(join(dir, "files", "main"), { recursive: true });
 * await writeFile(join(dir, "files", "main", "V1__notes.sql"), "CREATE TABLE notes (body TEXT);\n");
 *
 * const status = migrationStatus({ config: dir, migrations: join(dir, "files") });
 * const { connections } = await status();
 * assert.equal(connections[0].name, "main");
 * assert.deepEqual(connections[0].files, [
 *   { path: "V1__notes.sql", version: "1", description: "notes", state: "pending" },
 * ]);
 * ```
 */
export function migrationStatus(
  options: MigrationStatusOptions,
): () => Promise<MigrationStatusBody> {
  const given = { ...options };
  const statuses = async (): Promise<MigrationStatusBody> => ({
    connections: await migrationStatuses(async (mode, connection) => {
      try {
        const report = await migrate({
          ...given,
          command: "status",
          mode,
          ...definedFields({ connection }),
        });
        return { report, failed: false };
      } catch (error) {
        if (error instanceof MigrationRunError) return { report: error.report, failed: true };
        throw error;
      }
    }),
  });
  // Requests that come while a reading is under way share it: however many are sent, each
  // database and cluster sees one reader at a time.
  let running: Promise<MigrationStatusBody> | undefined;
  return () =>
    running ??= statuses().finally(() => {
      running = undefined;
    });
}
