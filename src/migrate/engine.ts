import { join } from "node:path";
import process from "node:process";
import { ConfigError } from "../config/config_error.ts";
import type { EnvLookup } from "../config/env.ts";
import { MissingPackageError } from "../runtime/optional_module.ts";
import { COMMANDS } from "./command/commands.ts";
import { completeReport, notRun } from "./connection_outcomes.ts";
import type {
  DriverConnection,
  DriverContext,
  MigrationDriver,
  MigrationTarget,
} from "./driver.ts";
import type { CodeMigrationModule } from "./code/code_context.ts";
import {
  type MigrationFile,
  readMigrationFiles,
  requireMigrationsRoot,
} from "./files/migration_files.ts";
import { splitCallbacks } from "./plan/callback_files.ts";
import { acceptsFile } from "./plan/file_kind.ts";
import { checkMigrationNames } from "./plan/migration_name.ts";
import { readUndoName } from "./plan/undo_name.ts";
import { isCodePath } from "./code/code_file.ts";
import { pairUndos, type UndoableFile } from "./plan/undo_pairs.ts";
import { MigrationFileError, PlanError } from "./migration_error.ts";
import type { PlannedFile } from "./plan/planned_file.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "./option_names.ts";
import type { Progress, RunError, RunReport } from "./run_report.ts";
import type { RunRequest } from "./run_request.ts";
import {
  type ConnectionCallback,
  type RunnerOptions,
  runTargets,
  type TargetWork,
} from "./run/run_targets.ts";
import { RequestTally } from "./request_counter.ts";
import type { RunnerIdentity } from "./runner_identity.ts";
import { selectEnabled } from "./select_connections.ts";
import { definedFields } from "../defined_fields.ts";

/** What a run runs in: everything that is not the request itself. */
export interface RunContext {
  /** Where `${VAR}` placeholders are read. */
  readonly env: EnvLookup;
  /** Who runs: shown to runners waiting for the lock; SQL records `user@host` as executed_by. */
  readonly identity: RunnerIdentity;
  readonly progress: Progress;
  /** Ctrl-C: stops the run after the current file; the lock is still released. */
  readonly signal?: AbortSignal;
  /** Where relative SQLite paths start; the working directory by default. */
  readonly cwd?: string;
  /** How messages name the options: as the caller spells them; the command line's by default. */
  readonly optionNames?: OptionNames;
  /** Code migrations' modules given by the app, by path under the migrations root. */
  readonly modules?: ReadonlyMap<string, CodeMigrationModule>;
}

/**
 * Runs a request through a driver and returns the one report of every outcome: reads the
 * configured connections, checks the migrations root, plans every file of every selected
 * connection (nothing is sent while one file is malformed; a connection without a folder is
 * reported and not opened), opens every target, then runs the command on each in turn. A user's
 * mistake (configuration, a file that cannot be planned, a failed file, a lock not acquired,
 * `validate` finding changed files) is the report's `error`, never a throw; anything else is a
 * bug and propagates. The report lists every configured connection.
 */
export async function runMigrations<C extends DriverConnection, F extends PlannedFile>(
  request: RunRequest,
  driver: MigrationDriver<C, F>,
  context: RunContext,
): Promise<RunReport> {
  const started = Date.now();
  let report: RunReport;
  try {
    report = await run(request, driver, context);
  } catch (error) {
    const stopped = stoppedBefore(error);
    if (stopped === undefined) throw error;
    report = {
      command: request.dryRun ? "dry-run" : request.command,
      connections: [],
      ms: Date.now() - started,
      error: stopped,
    };
  }
  if (report.error === undefined) {
    const failed = COMMANDS[request.command].verdict?.(report);
    if (failed !== undefined) return { ...report, error: failed };
  }
  return report;
}

async function run<C extends DriverConnection, F extends PlannedFile>(
  request: RunRequest,
  driver: MigrationDriver<C, F>,
  context: RunContext,
): Promise<RunReport> {
  const command = COMMANDS[request.command];
  const requests = new RequestTally();
  const optionNames = context.optionNames ?? COMMAND_LINE_NAMES;
  const where = driverContext(request, context, requests, optionNames);
  const configured = await driver.connections(where);
  refuseUnknownModules(context.modules, configured, driver.noun);
  // A command that reads no file (unlock) must not depend on them.
  const readsFiles = command.alone === undefined;
  if (readsFiles) await requireMigrationsRoot(request.migrations, optionNames);
  const { selected, skipped } = selectEnabled(
    configured,
    request.connection,
    driver.noun,
    optionNames,
  );
  const plans: Plan<C, F>[] = [];
  for (const connection of selected) {
    const planned = readsFiles
      ? await planFor(
        connection.name,
        () => planConnection(request, driver, connection, context, optionNames),
      )
      : { files: [], callbacks: [], ignored: [], undoFiles: [], undoable: [] };
    // No folder: nothing to apply, so nothing is sent to it (not even a read).
    if (planned === undefined) {
      const folder = join(request.migrations, connection.name);
      skipped.push(notRun(connection.name, "no-folder", `no folder ${folder}`));
    } else plans.push({ connection, ...planned });
  }
  // Opened once every file is planned: nothing is opened for a run that stops at a bad file.
  const targets: MigrationTarget<F>[] = await driver.open(plans.map((p) => p.connection), where);
  const report = await runTargets(
    plans.map((plan, i) => targetWork(plan, targets[i], driver)),
    runnerOptions(request, context, requests, optionNames),
  );
  return completeReport(report, configured.map((c) => c.name), skipped, context.signal);
}

// A connection and what its folder plans to.
type Plan<C extends DriverConnection, F extends PlannedFile> =
  & { connection: C }
  & ConnectionPlan<F>;

// What a driver is given of the run: where its files and configuration are, and how it runs.
function driverContext(
  request: RunRequest,
  context: RunContext,
  requests: RequestTally,
  optionNames: OptionNames,
): DriverContext {
  return {
    configDir: request.configDir,
    migrations: request.migrations,
    env: context.env,
    cwd: context.cwd ?? process.cwd(),
    identity: context.identity,
    command: request.command,
    lockTimeoutMs: request.lockTimeoutMs,
    ...definedFields({ stopTimeoutMs: request.stopTimeoutMs }),
    progress: context.progress,
    ...(context.signal ? { signal: context.signal } : {}),
    requests,
    optionNames,
  };
}

// A module given (the modules option) for a connection that is not configured is a mistake.
function refuseUnknownModules(
  modules: RunContext["modules"],
  configured: readonly DriverConnection[],
  noun: string,
): void {
  for (const key of modules?.keys() ?? []) {
    if (!configured.some((c) => key.startsWith(`${c.name}/`))) {
      throw new MigrationFileError(
        key,
        `is given as a module (the modules option), and names no configured ${noun}: ` +
          `a key is <${noun}>/<path under its folder>`,
      );
    }
  }
}

// One opened target and its connection's plan, as the runner takes them.
function targetWork<C extends DriverConnection, F extends PlannedFile>(
  plan: Plan<C, F>,
  target: MigrationTarget<F>,
  driver: MigrationDriver<C, F>,
): TargetWork<F> {
  const { undoRefusal } = driver;
  return {
    target,
    files: plan.files,
    callbacks: plan.callbacks,
    ignored: plan.ignored,
    undoFiles: plan.undoFiles,
    undoable: plan.undoable,
    ...(undoRefusal === undefined
      ? {}
      : { undoRefusal: (file: F, undo: F) => undoRefusal.call(driver, file, undo) }),
    settings: plan.connection,
    ...(driver.mask === undefined ? {} : { mask: driver.mask(plan.connection) }),
  };
}

// What the runner is asked to do, from the request.
function runnerOptions(
  request: RunRequest,
  context: RunContext,
  requests: RequestTally,
  optionNames: OptionNames,
): RunnerOptions {
  return {
    command: request.command,
    dryRun: request.dryRun,
    ...definedFields({ strictOrder: request.strictOrder }),
    force: request.force,
    ...(request.drift ? { drift: true } : {}),
    ...definedFields({ target: request.target, count: request.count }),
    lockTimeoutMs: request.lockTimeoutMs,
    progress: context.progress,
    optionNames,
    ...(context.signal ? { signal: context.signal } : {}),
    requests,
  };
}

/** What one connection's folder plans to: its files, callbacks and undo files, and the others. */
interface ConnectionPlan<F extends PlannedFile> {
  files: F[];
  callbacks: ConnectionCallback<F>[];
  ignored: string[];
  undoFiles: F[];
  undoable: UndoableFile[];
}

/**
 * Reads and plans the folder of `connection`: `undefined` where it has none. Throws a
 * MigrationFileError for the first file that cannot be planned.
 */
async function planConnection<C extends DriverConnection, F extends PlannedFile>(
  request: RunRequest,
  driver: MigrationDriver<C, F>,
  connection: C,
  context: RunContext,
  optionNames: OptionNames,
): Promise<ConnectionPlan<F> | undefined> {
  const folder = await readMigrationFiles(
    request.migrations,
    connection.name,
    (name) =>
      acceptsFile(name, driver.extension, driver.capabilities.code, driver.capabilities.callbacks),
  );
  if (folder === undefined) return undefined;
  // Callbacks first: no rule of migrations (versions, order, --target) applies to them.
  const { migrations: all, callbacks } = driver.capabilities.callbacks
    ? splitCallbacks(folder.files)
    : { migrations: folder.files, callbacks: [] };
  // Undo files next: they undo a version, and are no migration of their own (a name in their
  // form that breaks Flyway's rules is refused here, naming the file).
  const undoes = driver.capabilities.undo === true;
  const migrations = all.filter((file) => !undoes || readUndoName(file.path) === undefined);
  const undos = undoes ? all.filter((file) => readUndoName(file.path) !== undefined) : [];
  // Names first: a second file of one version is refused before any file is read as JSON.
  // `undo --target` names the version to undo down to: no file is above a target of its own.
  checkMigrationNames(
    migrations.map((file) => file.path),
    request.command === "undo" ? undefined : request.target,
    optionNames,
  );
  const given = (file: MigrationFile) => context.modules?.get(`${connection.name}/${file.path}`);
  // Every command checks the pairs: an undo file of no version here stops migrate too. A module
  // given tells whether it exports `down`; a code file on disk is not imported to tell (that runs
  // its top-level code, on every command): one without an undo file is taken to export `down`,
  // which `undo` checks, importing only the files it undoes, before it runs any.
  const undoable = undoes
    ? pairUndos(
      all.map((file) => ({ path: file.path, hasDown: typeof given(file)?.down === "function" })),
    ).map((file) =>
      file.undo === undefined && file.unnamed === undefined && isCodePath(file.path) &&
        given(all.find((f) => f.path === file.path)!) === undefined
        ? { ...file, undo: "down" }
        : file
    )
    : [];
  const files = await planAll(migrations, (file) => driver.plan(file, connection, given(file)));
  const planned = await planAll(
    callbacks,
    async ({ name, file }): Promise<ConnectionCallback<F>> => ({
      path: file.path,
      event: name.event,
      // Out of scope: listed, never run, so never planned (its JSON need not be valid).
      ...(name.supported ? { file: await driver.plan(file, connection, given(file)) } : {}),
    }),
  );
  const undoFiles = await planAll(undos, (file) => driver.plan(file, connection, given(file)));
  unusedModule(context.modules, connection.name, folder.files);
  return { files, callbacks: planned, ignored: folder.ignored, undoFiles, undoable };
}

// The user's mistakes found before anything was sent; anything else is a bug and propagates.
function stoppedBefore(error: unknown): RunError | undefined {
  if (error instanceof ConfigError) return { kind: "config", message: error.message };
  // An optional package a datasource of the configuration needs (a driver) is not installed.
  if (error instanceof MissingPackageError) {
    return {
      kind: "config",
      message: error.message,
      ...definedFields({ connection: error.connection }),
    };
  }
  if (error instanceof PlanError) {
    return {
      kind: "plan",
      message: `${error.message} (nothing was sent)`,
      connection: error.connection,
      ...definedFields({ file: error.file }),
    };
  }
  if (error instanceof MigrationFileError) {
    return { kind: "plan", message: `${error.message} (nothing was sent)`, file: error.file };
  }
  return undefined;
}

// A module given for a file the folder does not hold (a typo, a file renamed) would never run.
function unusedModule(
  modules: ReadonlyMap<string, CodeMigrationModule> | undefined,
  connection: string,
  files: readonly MigrationFile[],
): void {
  if (modules === undefined) return;
  const paths = new Set(files.map((file) => `${connection}/${file.path}`));
  for (const key of modules.keys()) {
    if (key.startsWith(`${connection}/`) && !paths.has(key)) {
      throw new MigrationFileError(
        key.slice(connection.length + 1),
        "is given as a module (the modules option), and the folder holds no such migration",
      );
    }
  }
}

/** Runs `plan` for `connection`, naming the connection in any file error it throws. */
async function planFor<T>(connection: string, plan: () => Promise<T>): Promise<T> {
  try {
    return await plan();
  } catch (error) {
    if (error instanceof MigrationFileError) throw new PlanError(connection, error);
    throw error;
  }
}

/** Plans `files` one at a time, in order: the first file that cannot be planned stops the plan. */
async function planAll<F, P>(files: readonly F[], plan: (file: F) => Promise<P>): Promise<P[]> {
  const planned: P[] = [];
  for (const file of files) planned.push(await plan(file));
  return planned;
}
