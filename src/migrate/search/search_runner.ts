import { join } from "node:path";
import { ConfigError } from "../../config/config_error.ts";
import { readMigrationFiles } from "../migration_files.ts";
import { type MigrationRunOptions, runTargets, selectEnabled } from "../migration_runner.ts";
import type { RunReport } from "../run_report.ts";
import { planRequest } from "./plan_request.ts";
import { loadSearchConnections } from "./search_config.ts";
import { type SearchFile, SearchTarget } from "./search_target.ts";
import { runtimeTransport, type Transport, type TransportFactory } from "./transport.ts";

/** What to run: the command line's options, and the transport (tests record requests). */
export interface SearchRunOptions extends MigrationRunOptions {
  readonly transport?: TransportFactory;
}

/**
 * Runs the search migrations: reads the config, plans every file of every selected connection
 * (nothing is sent while any file is malformed), makes every transport, then hands the
 * connections to the shared runner, which applies files in order and writes each record as soon
 * as its file succeeded.
 */
export async function runSearchMigrations(options: SearchRunOptions): Promise<RunReport> {
  const connections = selectEnabled(
    await loadSearchConnections(options.configDir, options.env),
    options.connection,
    "connection",
  );
  const plans = new Map<string, SearchFile[]>();
  for (const connection of connections) {
    if (options.command === "unlock") break; // removing a lock must not depend on the files
    const files = await readMigrationFiles(join(options.migrationsRoot, connection.name), ".json");
    plans.set(
      connection.name,
      files.map((f) => {
        const searchRequest = planRequest(f.path, f.bytes);
        const request = `${searchRequest.method} ${searchRequest.path}`;
        return { path: f.path, hash: f.hash, request, searchRequest };
      }),
    );
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
      throw new ConfigError(`connection "${connection.name}": ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  return await runTargets(
    connections.map((connection, i) => ({
      target: new SearchTarget(connection, transports[i], options.identity),
      files: plans.get(connection.name) ?? [],
    })),
    { ...options, dryRun: options.dryRun ?? false },
  );
}
