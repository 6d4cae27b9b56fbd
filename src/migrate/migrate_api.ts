import process from "node:process";
import { type EnvLookup, runtimeEnv } from "../config/env.ts";
import type { Command } from "./command/command.ts";
import { isCommand } from "./command/commands.ts";
import type { CodeMigrationModule } from "./code/code_context.ts";
import { builtInDriver } from "./drivers.ts";
import { runMigrations } from "./engine.ts";
import { humanProgress } from "./human_output.ts";
import { localIdentity } from "./local_process.ts";
import { isMigrationError } from "./migration_error.ts";
import { isCodeCallbackName, isCodeMigrationName } from "./plan/file_kind.ts";
import { MigrationRunError } from "./migration_run_error.ts";
import { MIGRATE_API_NAMES } from "./option_names.ts";
import { optionFolder } from "./option_folder.ts";
import type { RunError, RunReport } from "./run_report.ts";
import { silentProgress } from "./run_report.ts";
import {
  checkRunRequest,
  DEFAULT_LOCK_TIMEOUT_SECONDS,
  MAX_LOCK_TIMEOUT_SECONDS,
  MAX_STOP_TIMEOUT_SECONDS,
  parseMode,
  type RunRequest,
  usageError,
} from "./run_request.ts";
import { definedFields } from "../defined_fields.ts";

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
  /** The migrations root: one folder per connection or datasource (`--migrations`). */
  readonly migrations: string | URL;
  /** `sql` (the default): SQL files on the datasources; `search`: JSON files on the clusters. */
  readonly mode?: "sql" | "search" | undefined;
  /** `migrate` (the default), `undo` (SQL), `status`, `validate`, `baseline`, `repair` or `unlock`. */
  readonly command?: Command | undefined;
  /** Only this connection or datasource (`--connection`). */
  readonly connection?: string | undefined;
  /** `migrate`, `undo`, `baseline`, `repair`: work out what would be done, send only reads. */
  readonly dryRun?: boolean | undefined;
  /** Over each connection's `migrations.strict_order` (`--strict-order`, `--no-strict-order`). */
  readonly strictOrder?: boolean | undefined;
  /** `baseline`, `repair` and `unlock` (`--force`). */
  readonly force?: boolean | undefined;
  /** Search: compare the applied files with the cluster (`--drift`). */
  readonly drift?: boolean | undefined;
  /**
   * `migrate`: stop at this version (`--target`); `baseline`: record the files up to it only
   * (`--version`). Files above it are left as they are. `undo`: undo every applied version above
   * it (under `flyway_compatible`, it too, as Flyway's `undo -target` does), newest first.
   */
  readonly target?: string | undefined;
  /** `undo`: undo the `count` newest applied versions (`--count`), newest first. */
  readonly count?: number | undefined;
  /**
   * How long to wait for another runner's lock, in milliseconds, from 0 to a day (86,400,000);
   * 60,000 by default. A fraction waits to the next whole millisecond.
   */
  readonly lockTimeoutMs?: number | undefined;
  /**
   * How long a code migration or callback may run on after `signal` aborted, in milliseconds,
   * from 0 to an hour (3,600,000); 10,000 by default. Then it is abandoned, its file rolled back
   * where the database can, and the run fails as `interrupted` (`--stop-timeout`).
   */
  readonly stopTimeoutMs?: number | undefined;
  /** Where `${VAR}` placeholders are read; the runtime's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Stops the run after the current file (the lock is still released), as Ctrl-C does. */
  readonly signal?: AbortSignal | undefined;
  /** Where relative paths start (these options', and SQLite files'); the working directory by default. */
  readonly cwd?: string | undefined;
  /**
   * Receives each progress line the command line prints while it runs (`main [1/2] apply
   * 001-users.sql (applied, 1 ms)`); nothing is printed without it. {@linkcode summaryLines}
   * gives the closing lines.
   */
  readonly onProgress?: ((line: string) => void) | undefined;
  /**
   * Migrations in code an app bundles, by their path under the migrations root
   * (`"main/V3__backfill.ts"`): each is run in place of importing that file, whose text still
   * gives the checksum. A single-file binary, which cannot import a file at run time, runs its
   * code migrations this way. A key that names no code migration of the folder is refused.
   */
  readonly modules?: Readonly<Record<string, CodeMigrationModule>> | undefined;
}

/** Where an `env` option's `${VAR}` placeholders are read: it, or the runtime's environment. */
export const optionEnv = (env: MigrateOptions["env"]): EnvLookup =>
  env === undefined ? runtimeEnv() : (name) => Object.hasOwn(env, name) ? env[name] : undefined;

/**
 * Runs the migrations of a config folder, as `cli.ts -c <config> --migrations <migrations>
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
      env: optionEnv(options.env),
      identity: localIdentity(),
      progress: options.onProgress ? humanProgress(options.onProgress) : silentProgress,
      cwd,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.modules === undefined ? {} : { modules: givenModules(options.modules) }),
      optionNames: MIGRATE_API_NAMES,
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
  "count",
  "lockTimeoutMs",
  "stopTimeoutMs",
  "env",
  "signal",
  "cwd",
  "onProgress",
  "modules",
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
  if (options.count !== undefined && typeof options.count !== "number") {
    throw usageError(`count: expected a number of versions, got ${got(options.count)}`);
  }
  checkMilliseconds("lockTimeoutMs", options.lockTimeoutMs, MAX_LOCK_TIMEOUT_MS);
  checkMilliseconds("stopTimeoutMs", options.stopTimeoutMs, MAX_STOP_TIMEOUT_MS);
  if (options.connection === "") {
    throw usageError("connection: expected a name, got an empty string");
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
  const modules: unknown = options.modules;
  if (modules !== undefined && (modules === null || typeof modules !== "object")) {
    throw usageError(`modules: expected an object of modules by path, got ${got(modules)}`);
  }
}

// Each entry checked now: a module without a function to run would otherwise fail only when its
// file's turn came, after the files before it were applied.
function givenModules(
  modules: Readonly<Record<string, CodeMigrationModule>>,
): ReadonlyMap<string, CodeMigrationModule> {
  const given = new Map<string, CodeMigrationModule>();
  for (const [path, module] of Object.entries(modules)) {
    const name = path.slice(path.lastIndexOf("/") + 1);
    if (!path.includes("/") || !(isCodeMigrationName(name) || isCodeCallbackName(name))) {
      throw usageError(
        `modules: ${JSON.stringify(path)} is not the path of a migration or callback in code ` +
          'under the migrations root: write "<connection>/V<version>__<description>.ts" (or ' +
          ".js, R__, or a callback's name: afterMigrate.ts)",
      );
    }
    if (typeof (module as { default?: unknown } | null)?.default !== "function") {
      throw usageError(
        `modules: ${JSON.stringify(path)} has no default export that is a function`,
      );
    }
    given.set(path, module);
  }
  return given;
}

/** What a refused option's value was, for its message (`null` is no object). */
function got(value: unknown): string {
  return value === null ? "null" : typeof value;
}

/** Refuses a duration option that is not a number of milliseconds from 0 to `max`. */
function checkMilliseconds(name: keyof MigrateOptions, value: unknown, max: number): void {
  if (value === undefined || (typeof value === "number" && value >= 0 && value <= max)) return;
  throw usageError(
    `${name}: expected a number of milliseconds from 0 to ${max}, got ${
      typeof value === "number" ? String(value) : got(value)
    }`,
  );
}

// Milliseconds, as the caller gave them: the command line's bound, a day, in this API's unit.
const MAX_LOCK_TIMEOUT_MS = MAX_LOCK_TIMEOUT_SECONDS * 1000;
const MAX_STOP_TIMEOUT_MS = MAX_STOP_TIMEOUT_SECONDS * 1000;

// The run `options` ask for, checked by the rules every run shares (a dry run of `status`, drift
// on SQL...), named as this API names them.
function runRequest(options: MigrateOptions, cwd: string): RunRequest {
  return checkRunRequest({
    mode: parseMode(options.mode ?? "sql", MIGRATE_API_NAMES),
    command: options.command ?? "migrate",
    configDir: optionFolder(options.config, cwd),
    migrations: optionFolder(options.migrations, cwd),
    ...definedFields({ connection: options.connection }),
    dryRun: options.dryRun === true,
    ...definedFields({ strictOrder: options.strictOrder }),
    force: options.force === true,
    ...(options.drift ? { drift: true } : {}),
    ...definedFields({ target: options.target, count: options.count }),
    // The lock is polled in whole milliseconds; a fraction of one waits that millisecond.
    lockTimeoutMs: Math.ceil(options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_SECONDS * 1000),
    ...(options.stopTimeoutMs === undefined
      ? {}
      : { stopTimeoutMs: Math.ceil(options.stopTimeoutMs) }),
  }, MIGRATE_API_NAMES);
}
