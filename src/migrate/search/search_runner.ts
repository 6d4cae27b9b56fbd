import { join } from "node:path";
import type { EnvLookup } from "../../config/env.ts";
import { ConfigError } from "../../config/config_error.ts";
import { VERSION } from "../../version.ts";
import { MigrationFailure } from "../migration_failure.ts";
import { LockNotAcquiredError } from "./search_lock.ts";
import { SearchTransportError } from "./search_client.ts";
import { readMigrationFiles } from "../migration_files.ts";
import type {
  ConnectionReport,
  FileAction,
  FileReport,
  Progress,
  RunReport,
} from "../run_report.ts";
import { applyRequest } from "./apply_request.ts";
import type { MigrationRecord } from "./migration_record.ts";
import { planRequest } from "./plan_request.ts";
import { RecordStore } from "./record_store.ts";
import { SearchClient } from "./search_client.ts";
import { loadSearchConnections } from "./search_config.ts";
import type { SearchConnection } from "./search_connection.ts";
import { describeHolder, SearchLock } from "./search_lock.ts";
import type { SearchRequest } from "./search_request.ts";
import { runtimeTransport, type Transport, type TransportFactory } from "./transport.ts";

/** What to run. */
export interface SearchRunOptions {
  readonly configDir: string;
  readonly migrationsRoot: string;
  readonly command: "migrate" | "status" | "unlock";
  /** Print the plan, send only reads. */
  readonly dryRun?: boolean;
  /** Only this connection. */
  readonly connection?: string;
  readonly lockTimeoutMs: number;
  readonly env: EnvLookup;
  readonly progress: Progress;
  /** Who takes the lock, for whoever waits on it. */
  readonly identity: { host: string; pid: number };
  readonly transport?: TransportFactory;
  /** Stops the run between two files (Ctrl-C); the lock is still released. */
  readonly signal?: AbortSignal;
}

interface PlannedFile {
  readonly path: string;
  readonly hash: string;
  readonly request: SearchRequest;
}

/**
 * Runs the search migrations: reads the config, plans every file of every selected connection
 * (nothing is sent while any file is malformed), then per connection reads the records in one
 * request, takes the lock when something is to be applied, and applies files in order, writing
 * each record as soon as its file succeeded. The first failure stops the run.
 */
export async function runSearchMigrations(options: SearchRunOptions): Promise<RunReport> {
  const started = Date.now();
  const connections = select(
    await loadSearchConnections(options.configDir, options.env),
    options.connection,
  );
  const plans = new Map<string, PlannedFile[]>();
  for (const connection of connections) {
    if (options.command === "unlock") break; // removing a lock must not depend on the files
    const files = await readMigrationFiles(join(options.migrationsRoot, connection.name), ".json");
    plans.set(
      connection.name,
      files.map((f) => ({ path: f.path, hash: f.hash, request: planRequest(f.path, f.bytes) })),
    );
  }
  const command = options.dryRun ? "dry-run" : options.command;
  const report: RunReport = { command, connections: [], ms: 0 };
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
  for (const [i, connection] of connections.entries()) {
    const transport = transports[i];
    if (options.signal?.aborted) break;
    const client = new SearchClient(connection, transport);
    const connectionStarted = Date.now();
    const entry: ConnectionReport = {
      name: connection.name,
      files: [],
      applied: 0,
      skipped: 0,
      requests: 0,
      ms: 0,
    };
    report.connections.push(entry);
    try {
      const store = new RecordStore(client, connection.recordsIndex, connection.name);
      const lock = new SearchLock(
        client,
        connection.recordsIndex,
        connection.name,
        options.identity,
      );
      if (options.command === "unlock") {
        const holder = await lock.forceRelease();
        options.progress.notice(
          holder
            ? `${connection.name}: removed the lock of ${describeHolder(holder)}`
            : `${connection.name}: no lock to remove`,
        );
        continue;
      }
      const planned = plans.get(connection.name)!;
      let records = await store.readAll();
      entry.files.push(...decide(planned, records));
      entry.skipped = entry.files.filter((f) => f.action === "skip").length;
      if (options.command === "status" || options.dryRun || entry.skipped === planned.length) {
        continue;
      }

      await store.ensureIndex();
      await lock.acquire(
        options.lockTimeoutMs,
        (holder) =>
          options.progress.notice(
            `${connection.name}: waiting for the lock of ${describeHolder(holder)}`,
          ),
      );
      try {
        // Another runner may have applied files while this one waited.
        records = await store.readAll();
        entry.files.splice(0, entry.files.length, ...decide(planned, records));
        entry.skipped = entry.files.filter((f) => f.action === "skip").length;
        await apply(connection, client, store, lock, planned, entry, options);
      } finally {
        await lock.release();
      }
    } catch (error) {
      report.error = runError(error, connection.name);
      break;
    } finally {
      entry.requests = client.requests;
      entry.ms = Date.now() - connectionStarted;
      transport.close();
    }
  }
  for (const t of transports.slice(report.connections.length)) t.close();
  report.ms = Date.now() - started;
  return report;
}

// Failures of the run are reported; anything else is a bug and propagates.
function runError(error: unknown, connection: string): RunReport["error"] {
  if (error instanceof MigrationFailure) {
    return { kind: "failure", message: error.message, ...error.detail };
  }
  if (error instanceof SearchTransportError) {
    return { kind: "failure", message: error.message, connection };
  }
  if (error instanceof LockNotAcquiredError) {
    return { kind: "lock", message: error.message, connection };
  }
  throw error;
}

function select(all: SearchConnection[], name: string | undefined): SearchConnection[] {
  if (name === undefined) return all.filter((c) => c.migrationsEnabled);
  const found = all.find((c) => c.name === name);
  if (found === undefined) {
    throw new ConfigError(
      `--connection ${name}: no such connection (configured: ${all.map((c) => c.name).join(", ")})`,
    );
  }
  if (!found.migrationsEnabled) {
    throw new ConfigError(`--connection ${name}: set migrations.enabled: true on it first`);
  }
  return [found];
}

function decide(planned: PlannedFile[], records: Map<string, MigrationRecord>): FileReport[] {
  return planned.map((file) => {
    const record = records.get(file.path);
    const action: FileAction = record === undefined
      ? "apply"
      : record.content_hash === file.hash
      ? "skip"
      : "reapply";
    return { path: file.path, action, request: `${file.request.method} ${file.request.path}` };
  });
}

async function apply(
  connection: SearchConnection,
  client: SearchClient,
  store: RecordStore,
  lock: SearchLock,
  planned: PlannedFile[],
  entry: ConnectionReport,
  options: SearchRunOptions,
): Promise<void> {
  const pending = entry.files.filter((f) => f.action !== "skip");
  options.progress.start(connection.name, pending.length, planned.length);
  let n = 0;
  for (const [i, file] of planned.entries()) {
    const report = entry.files[i];
    if (report.action === "skip") continue;
    if (options.signal?.aborted) {
      throw new MigrationFailure({
        connection: connection.name,
        file: file.path,
        reason: "interrupted before this file",
      });
    }
    const started = Date.now();
    try {
      const outcome = await applyRequest(client, file.request, {
        connection: connection.name,
        file: file.path,
      });
      report.result = outcome.result;
      report.status = outcome.status;
      if (outcome.notice) report.notice = outcome.notice;
    } catch (error) {
      report.result = "failed";
      if (error instanceof SearchTransportError) {
        throw new MigrationFailure(
          {
            connection: connection.name,
            file: file.path,
            request: report.request,
            reason: error.message,
          },
          { cause: error },
        );
      }
      throw error;
    }
    report.ms = Date.now() - started;
    await store.write({
      migration_path: file.path,
      connection: connection.name,
      content_hash: file.hash,
      executed_at: new Date(started).toISOString(),
      execution_ms: report.ms,
      request: { method: file.request.method, path: file.request.path },
      runner_version: VERSION,
    });
    entry.applied++;
    options.progress.file(connection.name, ++n, pending.length, report);
    if (report.notice) options.progress.notice(`${connection.name}: ${report.notice}`);
    await lock.renew();
  }
}
