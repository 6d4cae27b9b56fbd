import { type Command, flywayRefusals } from "./command/command.ts";
import { COMMANDS } from "./command/commands.ts";
import type { FileRecord, MigrationTarget } from "./driver.ts";
import {
  isMigrationError,
  MigrationError,
  MigrationFailure,
  PlanError,
} from "./migration_error.ts";
import { decideFiles } from "./plan/file_decisions.ts";
import type { PlannedFile } from "./plan/planned_file.ts";
import type { ConnectionReport, FileReport, Progress, RunError, RunReport } from "./run_report.ts";

export type { PlannedFile };

/** What the engine is asked to do. */
export interface RunnerOptions {
  readonly command: Command;
  /** Print the plan, send only reads. */
  readonly dryRun: boolean;
  /** `--strict-order` (true) or `--no-strict-order` (false), over each connection's setting. */
  readonly strictOrder?: boolean;
  /**
   * `baseline --force`: record the files even where records exist; `repair --force`: also drop
   * missing records that sort after every file here.
   */
  readonly force?: boolean;
  /**
   * `--drift` (`status`, `validate`, `migrate`; targets with `drift`): compare the resources
   * of applied files with the live system; `migrate` also applies drifted files again.
   */
  readonly drift?: boolean;
  /** `migrate --target`, `baseline --version`: files above this version are left as they are. */
  readonly target?: string;
  readonly lockTimeoutMs: number;
  readonly progress: Progress;
  /** Stops the run between two files (Ctrl-C); the lock is still released. */
  readonly signal?: AbortSignal;
}

/**
 * Runs planned files on their targets, one target after the other: reads the records, decides
 * per file, stops there for `status`, `validate` and `--dry-run`; otherwise creates the records
 * store, takes the lock, reads the records again (another runner may have applied files while
 * this one waited) and applies the pending files in order. The first failure stops the run;
 * every target is closed.
 */
export async function runTargets<F extends PlannedFile>(
  work: readonly {
    readonly target: MigrationTarget<F>;
    readonly files: readonly F[];
    /** The other files in the connection's folder, listed in the report. */
    readonly ignored?: readonly string[];
  }[],
  options: RunnerOptions,
): Promise<RunReport> {
  const started = Date.now();
  const report: RunReport = {
    command: options.dryRun && options.command === "migrate" ? "dry-run" : options.command,
    ...(options.dryRun ? { dryRun: true as const } : {}),
    connections: [],
    ms: 0,
  };
  let next = 0;
  try {
    for (; next < work.length && !options.signal?.aborted; next++) {
      const { target, files, ignored = [] } = work[next];
      const entry: ConnectionReport = {
        name: target.name,
        state: "ran",
        files: [],
        ...(ignored.length > 0 ? { ignored: [...ignored] } : {}),
        applied: 0,
        skipped: 0,
        requests: 0,
        ms: 0,
      };
      report.connections.push(entry);
      const connectionStarted = Date.now();
      try {
        await runTarget(target, files, entry, options);
      } catch (error) {
        report.error = runError(error, target, options.signal);
        break;
      } finally {
        entry.requests = target.requests;
        entry.ms = Date.now() - connectionStarted;
      }
    }
  } finally {
    await closeAll(work.map((w) => w.target), report.error !== undefined);
  }
  report.ms = Date.now() - started;
  return report;
}

// Every target is closed, even when closing another one fails; the first such error is thrown
// once all are closed, unless the run already stopped for a better reason.
async function closeAll<F extends PlannedFile>(
  targets: readonly MigrationTarget<F>[],
  stopped: boolean,
): Promise<void> {
  const closing = await Promise.allSettled(targets.map((target) => target.close()));
  const failed = closing.find((c): c is PromiseRejectedResult => c.status === "rejected");
  if (failed && !stopped) throw failed.reason;
}

async function runTarget<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  entry: ConnectionReport,
  options: RunnerOptions,
): Promise<void> {
  const command = COMMANDS[options.command];
  const force = options.force === true;
  if (command.alone) return await command.alone(target, entry, force);
  const strict = options.strictOrder ?? target.strictOrder;
  if (strict) entry.strictOrder = true;
  const validateOnMigrate = target.validateOnMigrate;
  if (validateOnMigrate) entry.validateOnMigrate = true;
  // A run that writes no record reports what each record says of its run: the records stay so.
  // One that writes them would report what they said before it replaced them.
  const showsRuns = !command.writes || options.dryRun;
  const decideAll = (read: ReadonlyMap<string, FileRecord>) => {
    const records = new Map([...read].map(([path, record]) => [path, record.hash]));
    entry.files.splice(
      0,
      entry.files.length,
      ...decideFiles(files, records, command.name, force, options.target).map((file) =>
        masked(file, target.mask)
      ),
    );
    if (showsRuns) { for (const file of entry.files) addRun(file, read); }
    entry.skipped = entry.files.filter((f) => f.action === "skip").length;
    // Before anything is written: the first check needs no lock, the second sees what another
    // runner wrote while this one waited. `validate` reports them with the changed files.
    // Flyway validates every applied file, those above a --target too.
    const edited = !validateOnMigrate ? [] : flywayRefusals(
      options.target === undefined ? entry.files : decideFiles(files, records, command.name, force),
    );
    command.refuse?.(target, entry, records, { force, strictOrder: strict, edited });
  };
  let records: ReadonlyMap<string, FileRecord>;
  try {
    records = await target.readRecords();
  } catch (error) {
    // A listing still shows what this checkout holds, rather than "(no files)": each file, its
    // state unknown; the run fails all the same, with why the records could not be read.
    if (command.listsUnknown) {
      entry.files.push(
        ...files.map((file): FileReport => ({ path: file.path, action: "unknown" })),
      );
    }
    throw error;
  }
  decideAll(records);
  const drift = options.drift === true && command.drift ? target.drift : undefined;
  if (drift) entry.drift = await drift.read(files, entry.files);
  const work = entry.files.filter((f) => command.isWork(f.action));
  // `migrate --drift` takes the lock for drifted files too, even with nothing pending.
  const repair = drift !== undefined && command.writes && !options.dryRun &&
    entry.drift!.resources.some((r) => r.reapply);
  if (options.dryRun || (work.length === 0 && !repair)) {
    command.warn?.(target, entry, options.progress);
    return;
  }
  await target.prepare();
  await target.lock(
    options.lockTimeoutMs,
    (holder) => options.progress.notice(`${target.name}: waiting for the lock of ${holder}`),
    options.signal,
  );
  let done = false;
  try {
    decideAll(await target.readRecords());
    command.warn?.(target, entry, options.progress);
    // Decided again under the lock: another runner may have changed the records meanwhile.
    const pending = entry.files.some((f) => command.isWork(f.action));
    if (pending || !repair) await run(target, files, entry, options);
    if (drift !== undefined && command.writes) {
      await repairDrift(target, drift, files, entry, options);
    }
    done = true;
  } finally {
    // A failing release must not hide why the run stopped.
    await target.release().catch((error) => {
      if (done) throw error;
    });
  }
}

// What the file's record says of its run (a renamed file's: the record it takes over), where it
// says anything, and the checksum it holds.
function addRun(file: FileReport, records: ReadonlyMap<string, FileRecord>): void {
  const record = records.get(file.path) ??
    (file.renamedFrom === undefined ? undefined : records.get(file.renamedFrom));
  if (record === undefined) return;
  file.recordChecksum = record.hash;
  const run: NonNullable<FileReport["applied"]> = {
    ...(record.executedAt === undefined ? {} : { at: record.executedAt }),
    ...(record.executedBy === undefined ? {} : { by: record.executedBy }),
    ...(record.runnerVersion === undefined ? {} : { runnerVersion: record.runnerVersion }),
  };
  if (Object.keys(run).length > 0) file.applied = run;
}

/**
 * `migrate --drift`, under the lock, once the pending files ran: compares again (the files just
 * applied, and another runner, may have changed what is live), then applies again the files whose
 * resources drifted.
 */
async function repairDrift<F extends PlannedFile>(
  target: MigrationTarget<F>,
  drift: NonNullable<MigrationTarget<F>["drift"]>,
  files: readonly F[],
  entry: ConnectionReport,
  options: RunnerOptions,
): Promise<void> {
  const found = await drift.read(files, entry.files);
  entry.drift = found;
  if (!found.resources.some((r) => r.reapply)) return;
  entry.drift = await drift.repair(files, entry.files, found, options.signal);
  for (const r of entry.drift.resources) {
    if (r.result === undefined) continue;
    options.progress.notice(
      `${target.name}: ${r.resource} had drifted: ${r.file} ${
        r.result === "reapplied" ? "applied again" : "refused by the cluster"
      }${r.remaining?.length ? `; ${r.remaining.length} difference(s) remain` : ""}`,
    );
  }
}

// Runs each file's work, in order: applying it, or writing, moving or dropping its record.
async function run<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  entry: ConnectionReport,
  options: RunnerOptions,
): Promise<void> {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const command = COMMANDS[options.command];
  const work = entry.files.filter((f) => command.isWork(f.action));
  options.progress.start(target.name, work.length, entry.files.length, command.verb);
  let n = 0;
  for (const report of work) {
    if (options.signal?.aborted) {
      throw new MigrationError(
        "interrupted",
        `connection "${target.name}": interrupted before ${report.path}; it and later files ` +
          `did not run`,
      );
    }
    const file = byPath.get(report.path);
    try {
      if (report.action === "drop") {
        await target.dropRecord(report.path);
        report.result = "dropped";
      } else if (report.action === "record" || report.action === "rename") {
        // The new record first: a run stopped in between leaves both, and the next run reads
        // the file as applied and the old path as missing; nothing runs twice.
        await target.record(file!, new Date());
        if (report.action === "rename") await target.dropRecord(report.renamedFrom!);
        report.result = report.action === "rename" ? "moved" : "recorded";
      } else await applyOne(target, file!, report, entry);
    } catch (error) {
      report.result = "failed";
      throw error;
    }
    options.progress.file(target.name, ++n, work.length, report);
    if (report.notice) options.progress.notice(`${target.name}: ${report.notice}`);
  }
}

async function applyOne<F extends PlannedFile>(
  target: MigrationTarget<F>,
  file: F,
  report: FileReport,
  entry: ConnectionReport,
): Promise<void> {
  const outcome = await target.apply(file, new Date());
  if (outcome.alreadyRecorded) {
    // Another runner applied it meanwhile: it is no longer a pending file, late or not.
    delete report.outOfOrder;
    report.action = "skip";
    entry.skipped++;
  } else entry.applied++;
  report.result = outcome.result;
  report.ms = outcome.ms;
  if (outcome.status !== undefined) report.status = outcome.status;
  const mask = target.mask ?? ((text: string) => text);
  if (outcome.notice) report.notice = mask(outcome.notice);
  if (outcome.reindex) {
    const { source, index, alias } = outcome.reindex;
    report.reindex = {
      ...outcome.reindex,
      source: mask(source),
      index: mask(index),
      alias: mask(alias),
    };
  }
}

// The file as the report shows it: what it sends and defines, with placeholder values masked.
// Decisions are taken on the real values first: two files of one resource stay one resource.
function masked(file: FileReport, mask: MigrationTarget<PlannedFile>["mask"]): FileReport {
  if (mask === undefined) return file;
  return {
    ...file,
    ...(file.request === undefined ? {} : { request: mask(file.request) }),
    ...(file.resource === undefined ? {} : { resource: mask(file.resource) }),
  };
}

// Failures of the run are reported; anything else is a bug and propagates.
function runError<F extends PlannedFile>(
  error: unknown,
  target: MigrationTarget<F>,
  signal: AbortSignal | undefined,
): RunError {
  if (error instanceof MigrationFailure) {
    return { kind: "failure", message: error.message, ...error.detail };
  }
  if (error instanceof PlanError) {
    return {
      kind: "plan",
      message: `${error.message} (nothing was written on this connection)`,
      connection: error.connection,
      ...(error.file === undefined ? {} : { file: error.file }),
    };
  }
  if (isMigrationError(error, "lock")) {
    return { kind: "lock", message: error.message, connection: target.name };
  }
  if (isMigrationError(error, "interrupted")) {
    return { kind: "interrupted", message: error.message, connection: target.name };
  }
  const message = target.failure(error);
  if (message !== undefined) return { kind: "failure", message, connection: target.name };
  // A driver's own abort error, from a request Ctrl-C cut short.
  if (signal?.aborted) {
    return { kind: "interrupted", message: "interrupted", connection: target.name };
  }
  throw error;
}
