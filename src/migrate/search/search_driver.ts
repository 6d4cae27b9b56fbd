import { join } from "node:path";
import { ConfigError } from "../../config/config_error.ts";
import { MissingPackageError } from "../../runtime/optional_module.ts";
import { completeReport, notRun } from "../connection_outcomes.ts";
import { readMigrationFiles, requireMigrationsRoot } from "../migration_files.ts";
import { type MigrationRunOptions, runTargets, selectEnabled } from "../migration_runner.ts";
import { planAll, planFor } from "../plan_error.ts";
import type { RunReport } from "../run_report.ts";
import { planSearchFile } from "./plan_search_file.ts";
import { loadSearchConnections } from "./search_config.ts";
import type { SearchConnection } from "./search_connection.ts";
import { type SearchFile, SearchTarget } from "./search_target.ts";
import { runtimeTransport, type Transport, type TransportFactory } from "./transport.ts";

/** What to run: the command line's options, and the transport (tests record requests). */
export interface SearchRunOptions extends MigrationRunOptions {
  readonly transport?: TransportFactory;
}

/**
 * Runs the search migrations: reads the config, checks the migrations root, plans every file of
 * every selected connection (nothing is sent while any file is malformed; a connection without a
 * folder is reported and not contacted), makes every transport, then hands the connections to the
 * shared runner, which applies files in order and writes each record as soon as its file
 * succeeded. The report lists every configured connection.
 */
export async function runSearchMigrations(options: SearchRunOptions): Promise<RunReport> {
  const configured = await loadSearchConnections(options.configDir, options.env);
  // Removing a lock must not depend on the files; anything else needs the migrations root.
  const unlock = options.command === "unlock";
  if (!unlock) await requireMigrationsRoot(options.migrationsRoot);
  const { selected, skipped } = selectEnabled(configured, options.connection, "connection");
  const connections: SearchConnection[] = [];
  const plans = new Map<string, SearchFile[]>();
  for (const connection of selected) {
    if (unlock) {
      connections.push(connection);
      continue;
    }
    const folder = join(options.migrationsRoot, connection.name);
    const planned = await planFor(
      connection.name,
      async () =>
        planAll(
          await readMigrationFiles(options.migrationsRoot, connection.name, ".json"),
          (f) => planSearchFile(f, connection.placeholders),
        ),
    );
    // No folder: nothing to apply, so nothing is sent to it (not even a read).
    if (planned === undefined) {
      skipped.push(notRun(connection.name, "no-folder", `no folder ${folder}`));
    } else {
      connections.push(connection);
      plans.set(connection.name, planned);
    }
  }
  // Every transport is made before the first request: a setting the runtime cannot honour is a
  // configuration error, found before anything is sent.
  const factory = options.transport ?? runtimeTransport;
  const transports: Transport[] = [];
  for (const connection of connections) {
    try {
      transports.push(await factory(connection));
    } catch (error) {
      for (const t of transports) t.close();
      // Names the connection and the install line already; its kind is kept for the report.
      if (error instanceof MissingPackageError) throw error;
      throw new ConfigError(`connection "${connection.name}": ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  const report = await runTargets(
    connections.map((connection, i) => ({
      target: new SearchTarget(connection, transports[i], options.identity, {
        progress: options.progress,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      }),
      files: plans.get(connection.name) ?? [],
    })),
    { ...options, dryRun: options.dryRun ?? false },
  );
  return completeReport(report, configured.map((c) => c.name), skipped, options.signal);
}
