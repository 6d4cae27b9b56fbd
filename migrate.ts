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
import { isAbsolute, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ConfigError } from "./src/config/config_error.ts";
import { maskUrl } from "./src/config/secrets_mask.ts";
import { type EnvLookup, runtimeEnv } from "./src/config/env.ts";
import type { Command } from "./src/migrate/command/command.ts";
import { isCommand } from "./src/migrate/command/commands.ts";
import { humanProgress, humanSummary } from "./src/migrate/cli/human_output.ts";
import { builtInDriver } from "./src/migrate/drivers.ts";
import { runMigrations } from "./src/migrate/engine.ts";
import { exitCodeOf } from "./src/migrate/exit_code.ts";
import { localIdentity } from "./src/migrate/local_process.ts";
import type { RunError, RunReport } from "./src/migrate/run_report.ts";
import { silentProgress } from "./src/migrate/run_report.ts";
import { DEFAULT_LOCK_TIMEOUT_SECONDS } from "./src/migrate/cli/command_line.ts";
import {
  checkRunRequest,
  parseLockTimeout,
  parseMode,
  type RunRequest,
  usageError,
} from "./src/migrate/run_request.ts";
import { isMigrationError } from "./src/migrate/migration_error.ts";
import type { DatabaseKind } from "./src/migrate/sql/datasource.ts";
import { loadDatasources } from "./src/migrate/sql/sql_config.ts";
import {
  type MigrationConnectionStatus,
  migrationStatuses,
} from "./src/migrate/migration_status.ts";

export { ConfigError };
export type { Command, DatabaseKind };
export type {
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
  MigrationConnectionStatus,
  MigrationFileState,
  MigrationFileStatus,
} from "./src/migrate/migration_status.ts";

/**
 * What {@linkcode migrate} runs: the options of the command line, by name. Paths are folders,
 * as strings (relative ones start at `cwd`) or file URLs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { pathToFileURL } from "node:url";
 * import { migrate, type MigrateOptions } from "@thaw/thaw/migrate";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-doc-"));
 * await writeFile(
 *   join(dir, "application.yml"),
 *   'datasource:\n  - name: main\n    url: "sqlite::memory:"\n    migrations: { enabled: true }\n',
 * );
 * await mkdir(join(dir, "migrations", "main"), { recursive: true });
 * await writeFile(join(dir, "migrations", "main", "001-notes.sql"), "CREATE TABLE notes (body TEXT);\n");
 *
 * const lines: string[] = [];
 * const options: MigrateOptions = {
 *   config: pathToFileURL(`${dir}/`),
 *   migrations: pathToFileURL(`${dir}/migrations/`),
 *   command: "status",
 *   onProgress: (line) => lines.push(line),
 * };
 * const report = await migrate(options);
 * assert.equal(report.connections[0].files[0].action, "apply"); // pending: status runs nothing
 * ```
 */
export interface MigrateOptions {
  /** The config folder: the one holding `application.yml` (`-c`). */
  readonly config: string | URL;
  /** The migrations root: one folder per connection or datasource (`--sqlPath`). */
  readonly migrations: string | URL;
  /** `sql` (the default): SQL files on the datasources; `search`: JSON files on the clusters. */
  readonly mode?: "sql" | "search";
  /** `migrate` (the default), `status`, `validate`, `baseline`, `repair` or `unlock`. */
  readonly command?: Command;
  /** Only this connection or datasource (`--connection`). */
  readonly connection?: string;
  /** `migrate`, `baseline`, `repair`: work out what would be done, send only reads. */
  readonly dryRun?: boolean;
  /** Over each connection's `migrations.strict_order` (`--strict-order`, `--no-strict-order`). */
  readonly strictOrder?: boolean;
  /** `baseline`, `repair` and `unlock` (`--force`). */
  readonly force?: boolean;
  /** Search: compare the applied files with the cluster (`--drift`). */
  readonly drift?: boolean;
  /**
   * `migrate`: stop at this version (`--target`); `baseline`: record the files up to it only
   * (`--version`). Files above it are left as they are.
   */
  readonly target?: string;
  /** How long to wait for another runner's lock, in milliseconds; 60,000 by default. */
  readonly lockTimeoutMs?: number;
  /** Where `${VAR}` placeholders are read; the runtime's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Stops the run after the current file (the lock is still released), as Ctrl-C does. */
  readonly signal?: AbortSignal;
  /** Where relative paths start (these options', and SQLite files'); the working directory by default. */
  readonly cwd?: string;
  /**
   * Receives each progress line the command line prints while it runs (`main [1/2] apply
   * 001-users.sql (applied, 1 ms)`); nothing is printed without it. {@linkcode summaryLines}
   * gives the closing lines.
   */
  readonly onProgress?: (line: string) => void;
}

/**
 * A run did not succeed: a file failed, the lock was not acquired, the configuration or a file is
 * wrong, `validate` found changed files, or the run was stopped. The message is the report's
 * (`connection "main", file 002-orders.sql:3: ...: no such table: nope`); the report is kept
 * whole, and where it names them the connection, file, line and reason are copied here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { migrate, MigrationRunError } from "@thaw/thaw/migrate";
 *
 * try {
 *   await migrate({ config: "/no/such/folder", migrations: "/no/such/folder" });
 * } catch (error) {
 *   if (!(error instanceof MigrationRunError)) throw error;
 *   assert.equal(error.kind, "config");
 *   assert.equal(error.exitCode, 2); // as the command line would exit
 * }
 * ```
 */
export class MigrationRunError extends Error {
  /** The whole report of the run, as `--json` prints it. */
  readonly report: RunReport;
  /** Why the run stopped: `failure`, `lock`, `config`, `plan`, `invalid`, `interrupted`, `usage`. */
  readonly kind: RunError["kind"];
  /** The command line's exit code for it: 1 (failed), 2 (usage or configuration), 3 (lock). */
  readonly exitCode: number;
  /** The connection or datasource, where known. */
  readonly connection?: string;
  /** The file, relative to its connection's folder, where known. */
  readonly file?: string;
  /** SQL: the line of the failing statement in the file. */
  readonly line?: number;
  /** The reason without its location (the database's or the cluster's own message). */
  readonly reason?: string;

  /**
   * Creates the error from a report that holds one.
   *
   * @param report the run's report, with its `error`
   */
  constructor(report: RunReport & { readonly error: RunError }) {
    super(report.error.message);
    this.name = "MigrationRunError";
    this.report = report;
    this.kind = report.error.kind;
    this.exitCode = exitCodeOf(report);
    const { connection, file, line, reason } = report.error;
    if (connection !== undefined) this.connection = connection;
    if (file !== undefined) this.file = file;
    if (line !== undefined) this.line = line;
    if (reason !== undefined) this.reason = reason;
  }
}

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
          ...(connection === undefined ? {} : { connection }),
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

const folder = (path: string | URL, cwd: string): string => {
  const text = path instanceof URL ? fileURLToPath(path) : path;
  return isAbsolute(text) ? text : resolve(cwd, text);
};

const lookup = (env: MigrateOptions["env"]): EnvLookup =>
  env === undefined ? runtimeEnv() : (name) => Object.hasOwn(env, name) ? env[name] : undefined;

/**
 * Runs the migrations of a config folder, as `cli.ts -c <config> --sqlPath <migrations>
 * [command]` does (the same checks, the same records, the same lock), and returns its report:
 * what ran, what was skipped, per connection. A run that does not succeed throws a
 * {@linkcode MigrationRunError} carrying the report; with a failed file, the files before it stay
 * applied, the failed one is not recorded (and, on PostgreSQL and SQLite, left no trace).
 *
 * SQL records name the runner as `user@host` (`$USER`, `$LOGNAME` or `$USERNAME`, and the host
 * name): under Deno that needs `--allow-env` for those variables and `--allow-sys=hostname`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { migrate } from "@thaw/thaw/migrate";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-doc-"));
 * await writeFile(
 *   join(dir, "application.yml"),
 *   "datasource:\n  - name: main\n    url: sqlite:./data/app.db\n    migrations: { enabled: true }\n",
 * );
 * await mkdir(join(dir, "migrations", "main"), { recursive: true });
 * await writeFile(join(dir, "migrations", "main", "001-notes.sql"), "CREATE TABLE notes (body TEXT);\n");
 *
 * const first = await migrate({ config: dir, migrations: "migrations", cwd: dir });
 * assert.equal(first.connections[0].applied, 1);
 * const second = await migrate({ config: dir, migrations: "migrations", cwd: dir });
 * assert.equal(second.connections[0].applied, 0);
 * assert.equal(second.connections[0].skipped, 1); // unchanged, not run again
 * ```
 */
export async function migrate(given: MigrateOptions): Promise<RunReport> {
  // Read once: a getter must not answer the checks one thing and the run another.
  const options: MigrateOptions = { ...given };
  let report: RunReport;
  try {
    checkTypes(options);
    const cwd = options.cwd ?? process.cwd();
    const request = runRequest(options, cwd);
    report = await runMigrations(request, await builtInDriver(request.mode), {
      env: lookup(options.env),
      identity: localIdentity(),
      progress: options.onProgress ? humanProgress(options.onProgress) : silentProgress,
      cwd,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (!isMigrationError(error, "usage")) throw error;
    const command = options.command ?? "migrate";
    report = {
      command: isCommand(command) ? command : null,
      connections: [],
      ms: 0,
      error: { kind: "usage", message: error.message },
    };
  }
  if (report.error !== undefined) {
    throw new MigrationRunError(report as RunReport & { error: RunError });
  }
  return report;
}

// Every option `migrate()` takes: from JavaScript, a misspelt one would otherwise be ignored.
const OPTION_NAMES: ReadonlySet<string> = new Set<keyof MigrateOptions>([
  "config",
  "migrations",
  "mode",
  "command",
  "connection",
  "dryRun",
  "strictOrder",
  "force",
  "drift",
  "target",
  "lockTimeoutMs",
  "env",
  "signal",
  "cwd",
  "onProgress",
]);

// From JavaScript anything can come: a truthy string must not turn a dry run into a run, and a
// wrong value is the caller's mistake (a usage error), not a crash halfway through the run.
function checkTypes(options: MigrateOptions): void {
  const unknown = Object.keys(options).filter((name) => !OPTION_NAMES.has(name));
  if (unknown.length > 0) {
    throw usageError(
      `unknown option${unknown.length > 1 ? "s" : ""} ${
        unknown.map((name) => JSON.stringify(name)).join(", ")
      } (migrate() takes ${[...OPTION_NAMES].join(", ")})`,
    );
  }
  const got = (value: unknown) => value === null ? "null" : typeof value;
  for (const name of ["config", "migrations"] as const) {
    const value: unknown = options[name];
    if (typeof value !== "string" && !(value instanceof URL)) {
      throw usageError(`${name}: expected a path (a string or a file URL), got ${got(value)}`);
    }
  }
  for (const name of ["dryRun", "strictOrder", "force", "drift"] as const) {
    const value: unknown = options[name];
    if (value !== undefined && typeof value !== "boolean") {
      throw usageError(`${name}: expected true or false, got ${got(value)}`);
    }
  }
  for (const name of ["mode", "command", "connection", "cwd", "target"] as const) {
    const value: unknown = options[name];
    if (value !== undefined && typeof value !== "string") {
      throw usageError(`${name}: expected a string, got ${got(value)}`);
    }
  }
  const wait: unknown = options.lockTimeoutMs;
  if (wait !== undefined && typeof wait !== "number") {
    throw usageError(`lockTimeoutMs: expected a number of milliseconds, got ${got(wait)}`);
  }
  const env: unknown = options.env;
  if (env !== undefined && (env === null || typeof env !== "object")) {
    throw usageError(`env: expected an object of variables, got ${got(env)}`);
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== "function") {
    throw usageError(`onProgress: expected a function, got ${got(options.onProgress)}`);
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw usageError("signal: expected an AbortSignal");
  }
}

// The run `options` ask for, checked by the command line's own rules (a dry run of `status`,
// `--drift` on SQL...).
function runRequest(options: MigrateOptions, cwd: string): RunRequest {
  const wait = options.lockTimeoutMs;
  return checkRunRequest({
    mode: parseMode(options.mode ?? "sql"),
    command: options.command ?? "migrate",
    configDir: folder(options.config, cwd),
    migrationsRoot: folder(options.migrations, cwd),
    ...(options.connection === undefined ? {} : { connection: options.connection }),
    dryRun: options.dryRun === true,
    ...(options.strictOrder === undefined ? {} : { strictOrder: options.strictOrder }),
    force: options.force === true,
    ...(options.drift ? { drift: true } : {}),
    ...(options.target === undefined ? {} : { target: options.target }),
    // Through the command line's own reading of --lock-timeout: the same bounds, the same message.
    lockTimeoutMs: parseLockTimeout(String((wait ?? DEFAULT_LOCK_TIMEOUT_SECONDS * 1000) / 1000)),
  });
}

/**
 * The closing lines the command line prints for a report: per connection what was applied and
 * skipped (`main: 1 applied, 0 unchanged, 5 request(s), 0.01 s`), the listing of `status`, the
 * error, and the time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summaryLines } from "@thaw/thaw/migrate";
 *
 * assert.deepEqual(summaryLines({ command: "migrate", connections: [], ms: 3 }), [
 *   "nothing ran: no connection is configured",
 *   "done in 0.00 s",
 * ]);
 * ```
 */
export function summaryLines(report: RunReport): string[] {
  return humanSummary(report);
}

/** One SQL datasource of a config folder, as the runner reads it. */
export interface DatasourceInfo {
  /** Its `name`: the folder of its files under the migrations root. */
  readonly name: string;
  /** `sqlite`, `postgres` or `mysql`. */
  readonly kind: DatabaseKind;
  /**
   * SQLite: the database file as an absolute path (a relative `url` starts at `cwd`), or
   * `:memory:`. Others: the URL without its credentials, password-like parameters as `***`.
   */
  readonly location: string;
  /** `migrations.enabled: true`. */
  readonly migrationsEnabled: boolean;
}

/**
 * Reads one datasource of a config folder exactly as {@linkcode migrate} does (`${VAR}`
 * placeholders, a relative SQLite path resolved against `cwd`), so an app opens the database its
 * migrations went to. Credentials are left out. Throws a {@linkcode ConfigError} when the
 * configuration is wrong or has no datasource of that name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { readDatasource } from "@thaw/thaw/migrate";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-doc-"));
 * await writeFile(join(dir, "application.yml"), "datasource:\n  - name: main\n    url: sqlite:${DB:./app.db}\n");
 * const main = await readDatasource({ config: dir, name: "main", env: {}, cwd: dir });
 * assert.equal(main.location, join(dir, "app.db"));
 * assert.equal(main.kind, "sqlite");
 * ```
 */
export async function readDatasource(options: {
  /** The config folder, as for {@linkcode migrate}. */
  readonly config: string | URL;
  /** The datasource's `name`. */
  readonly name: string;
  /** Where `${VAR}` placeholders are read; the runtime's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where relative paths start; the working directory by default. */
  readonly cwd?: string;
}): Promise<DatasourceInfo> {
  const cwd = options.cwd ?? process.cwd();
  const configDir = folder(options.config, cwd);
  const all = await loadDatasources(configDir, "migrations", lookup(options.env), cwd);
  const found = all.find((d) => d.name === options.name);
  if (found === undefined) {
    throw new ConfigError(
      `${configDir} has no datasource named "${options.name}" (configured: ${
        all.map((d) => d.name).join(", ")
      })`,
    );
  }
  return {
    name: found.name,
    kind: found.kind,
    // A secret can also sit in a query parameter (`sslpassword=`): masked, as in every report.
    location: found.kind === "sqlite" ? found.location : maskUrl(found.location),
    migrationsEnabled: found.migrationsEnabled,
  };
}
