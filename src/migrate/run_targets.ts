import { type Command, flywayRefusals, type MigrationCommand } from "./command/command.ts";
import { COMMANDS } from "./command/commands.ts";
import type { Mask } from "../config/secrets_mask.ts";
import {
  type Applied,
  type AppliedFiles,
  AppliedThenFailed,
  type DriftInspection,
  type DriverConnection,
  type FileRecord,
  type MigrationTarget,
} from "./driver.ts";
import {
  ConnectionFailure,
  isMigrationError,
  MigrationError,
  MigrationFailure,
  MigrationFileError,
  PlanError,
} from "./migration_error.ts";
import { decideFiles, withChangedUndos } from "./plan/file_decisions.ts";
import { decideUndo } from "./command/undo.ts";
import {
  compareVersions,
  fileVersion,
  isRepeatable,
  versionedName,
} from "./plan/migration_name.ts";
import { baselineMarkerPath } from "./plan/baseline_marker.ts";
import { inProgressFile, inProgressRecord } from "./plan/in_progress_marker.ts";
import type { UndoableFile } from "./plan/undo_pairs.ts";
import type { UndoStep } from "./plan/undo_plan.ts";
import { readVersionRecords } from "./plan/version_state.ts";
import { undoAdvice } from "./plan/undo_name.ts";
import { isCodeFile } from "./code/code_file.ts";
import { CodeLoadError, loadDown } from "./code/load_code.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "./option_names.ts";
import type { PlannedFile } from "./plan/planned_file.ts";
import type { CallbackEvent } from "./plan/callback_name.ts";
import type { EachFileCallbacks, PlannedCallback } from "./plan/planned_callback.ts";
import type {
  CallbackReport,
  ConnectionDrift,
  ConnectionReport,
  FileDecision,
  FileReport,
  FileResult,
  Progress,
  RunError,
  RunReport,
  UnlockOutcome,
} from "./run_report.ts";

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
  /**
   * `migrate --target`, `baseline --version`: files above this version are left as they are;
   * `undo --target`: the applied versions above it are undone.
   */
  readonly target?: string;
  /** `undo --count`: the newest applied versions it undoes. */
  readonly count?: number;
  readonly lockTimeoutMs: number;
  readonly progress: Progress;
  /** How messages name the options: as the caller spells them; the command line's by default. */
  readonly optionNames?: OptionNames;
  /** Stops the run between two files (Ctrl-C); the lock is still released. */
  readonly signal?: AbortSignal;
  /**
   * Where the targets count their requests (the driver context's counter): each connection's
   * total is its report's `requests`. None: 0.
   */
  readonly requests?: { of(connection: string): number };
}

/** A connection's settings the engine applies: off where not given. */
export type ConnectionSettings = Pick<DriverConnection, "strictOrder" | "validateOnMigrate">;

/**
 * A callback file of a connection: planned (`file`) where Thaw runs its event, listed only where
 * it is a Flyway event Thaw does not run.
 */
export interface ConnectionCallback<F> {
  readonly path: string;
  readonly event: string;
  readonly file?: F;
}

/** One opened target and what to run on it. */
export interface TargetWork<F extends PlannedFile> {
  readonly target: MigrationTarget<F>;
  readonly files: readonly F[];
  /** Its callbacks, in the order they run at their event. */
  readonly callbacks?: readonly ConnectionCallback<F>[];
  /** The other files in the connection's folder, listed in the report. */
  readonly ignored?: readonly string[];
  /** Its connection's settings: strict order and validate-on-migrate, both off when absent. */
  readonly settings?: ConnectionSettings;
  /** What the report may show of its files (its driver's mask); as they are when absent. */
  readonly mask?: Mask;
  /** Its undo files (`U<version>__…`), planned: what `undo` runs. */
  readonly undoFiles?: readonly F[];
  /** Its versioned files, each with its undo where it has one (`pairUndos`). */
  readonly undoable?: readonly UndoableFile[];
  /** Its driver's `undoRefusal`: why an undo file cannot undo its versioned file. */
  readonly undoRefusal?: (file: F, undo: F) => string | undefined;
}

/**
 * Runs planned files on their targets, one target after the other: reads the records, decides
 * per file, stops there for `status`, `validate` and `--dry-run`; otherwise takes the lock
 * (the target creates its records store first), reads the records again (another runner may
 * have applied files while this one waited), decides again and applies the pending files in
 * order. The decisions are the work list and stay as they were taken; what was done is kept
 * beside them, and the report is made of both once each connection is done. The first failure
 * stops the run; every target is closed.
 */
export async function runTargets<F extends PlannedFile>(
  work: readonly TargetWork<F>[],
  options: RunnerOptions,
): Promise<RunReport> {
  const started = Date.now();
  const connections: ConnectionReport[] = [];
  let error: RunError | undefined;
  // `undo` plans (and refuses) every connection before it runs any: a plan refused on one
  // connection must leave the others as they were, not undone above a version no checkout left.
  const planFirst = options.command === "undo";
  const runs: { run: ConnectionRun; ms: number; rest?: (() => Promise<void>) | undefined }[] = [];
  const timed = async (i: number, step: () => Promise<void>): Promise<void> => {
    const at = Date.now();
    try {
      await step();
    } catch (thrown) {
      error = runError(thrown, work[i].target, options.signal);
    } finally {
      runs[i].ms += Date.now() - at;
    }
  };
  const report = (i: number): void => {
    const { target, ignored = [] } = work[i];
    connections.push(
      runs[i].run.report(target.name, ignored, {
        requests: options.requests?.of(target.name) ?? 0,
        ms: runs[i].ms,
      }),
    );
  };
  try {
    for (let next = 0; next < work.length && !options.signal?.aborted; next++) {
      runs[next] = { run: new ConnectionRun(), ms: 0 };
      await timed(next, async () => {
        const rest = await runTarget(work[next], runs[next].run, options);
        if (planFirst) runs[next].rest = rest;
        else await rest?.();
      });
      if (!planFirst) report(next);
      if (error !== undefined) break;
    }
    for (let next = 0; planFirst && next < runs.length; next++) {
      const rest = runs[next].rest;
      if (error === undefined && rest !== undefined && !options.signal?.aborted) {
        await timed(next, rest);
      }
      report(next);
    }
  } finally {
    await closeAll(work.map((w) => w.target), error !== undefined);
  }
  return {
    command: options.dryRun && options.command === "migrate" ? "dry-run" : options.command,
    ...(options.dryRun ? { dryRun: true as const } : {}),
    connections,
    ms: Date.now() - started,
    ...(error === undefined ? {} : { error }),
  };
}

/** What was done with one file of the work list. */
interface FileOutcome {
  readonly result: FileResult;
  /** The file ran (as opposed to its record alone being written or dropped). */
  readonly ran?: true;
  /** Another runner recorded it first: it was skipped after all. */
  readonly alreadyRecorded?: boolean;
  readonly ms?: number;
  readonly status?: number;
  readonly notice?: string;
  readonly reindex?: Applied["reindex"];
}

/**
 * One connection while it runs: the decisions last taken (the work list, never edited), the
 * records they were taken on, and what was done with each file. The report is made of it.
 */
class ConnectionRun {
  /** The decisions, in run order; replaced whole when taken again under the lock. */
  decided: readonly FileDecision[] = [];
  /** The records the decisions were taken on, where the report shows what they say. */
  shownRecords: ReadonlyMap<string, FileRecord> | undefined;
  /** The records the decisions were taken on. */
  records: ReadonlyMap<string, FileRecord> = new Map();
  /** `undo`: what it undoes, newest first, as last planned. */
  undoSteps: readonly UndoStep[] = [];
  /** What was done, by path. */
  readonly done = new Map<string, FileOutcome>();
  strictOrder = false;
  validateOnMigrate = false;
  drift: ConnectionDrift | undefined;
  unlocked: UnlockOutcome | undefined;
  /** The connection's callbacks, and what this run did with each, by path. */
  callbacks: readonly ConnectionCallback<unknown>[] = [];
  readonly callbackRuns = new Map<string, { runs: number; ms?: number }>();

  /**
   * Counts a run of the callback at `path`; `ms` where it was timed on its own (an each-migrate
   * callback is timed with its file).
   */
  ranCallback(path: string, ms?: number): void {
    const before = this.callbackRuns.get(path) ?? { runs: 0 };
    const total = ms === undefined ? before.ms : (before.ms ?? 0) + ms;
    this.callbackRuns.set(path, {
      runs: before.runs + 1,
      ...(total === undefined ? {} : { ms: total }),
    });
  }

  /** What the report says of `decision`, with what was done with it. */
  file(decision: FileDecision): FileReport {
    const outcome = this.done.get(decision.path);
    if (outcome === undefined) {
      return this.shownRecords === undefined ? decision : withRun(decision, this.shownRecords);
    }
    const { alreadyRecorded, result, ms, status, notice, reindex } = outcome;
    let file: FileReport = decision;
    if (alreadyRecorded) {
      // Another runner applied it meanwhile: it is no longer a pending file, late or not.
      const { outOfOrder: _late, ...rest } = decision;
      file = { ...rest, action: "skip" };
    }
    return {
      ...file,
      result,
      ...(ms === undefined ? {} : { ms }),
      ...(status === undefined ? {} : { status }),
      ...(notice === undefined ? {} : { notice }),
      ...(reindex === undefined ? {} : { reindex }),
    };
  }

  /** Each file as the report shows it so far: its decision, and what was done with it. */
  files(): FileReport[] {
    return this.decided.map((d) => this.file(d));
  }

  /** The applied files as `--drift` reads them. */
  applied(): AppliedFiles {
    return { decided: this.files(), records: this.records };
  }

  /** The connection's report. */
  report(
    name: string,
    ignored: readonly string[],
    { requests, ms }: { requests: number; ms: number },
  ): ConnectionReport {
    const outcomes = [...this.done.values()];
    const late = outcomes.filter((o) => o.alreadyRecorded).length;
    return {
      name,
      state: "ran",
      files: this.files(),
      ...(ignored.length > 0 ? { ignored: [...ignored] } : {}),
      ...(this.callbacks.length > 0
        ? {
          callbacks: this.callbacks.map((c): CallbackReport => ({
            path: c.path,
            event: c.event,
            ...(c.file === undefined ? { supported: false as const } : {}),
            ...this.callbackRuns.get(c.path),
          })),
        }
        : {}),
      applied: outcomes.filter((o) => o.ran && !o.alreadyRecorded && o.result !== "undone").length,
      skipped: this.decided.filter((d) => d.action === "skip").length + late,
      requests,
      ms,
      ...(this.strictOrder ? { strictOrder: true as const } : {}),
      ...(this.validateOnMigrate ? { validateOnMigrate: true as const } : {}),
      ...(this.drift === undefined ? {} : { drift: this.drift }),
      ...(this.unlocked === undefined ? {} : { unlocked: this.unlocked.unlocked }),
      ...(this.unlocked?.note === undefined ? {} : { note: this.unlocked.note }),
    };
  }
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

// Decides the files of one target; returns what is left to run under its lock, if anything.
async function runTarget<F extends PlannedFile>(
  work: TargetWork<F>,
  run: ConnectionRun,
  options: RunnerOptions,
): Promise<(() => Promise<void>) | undefined> {
  const command = COMMANDS[options.command];
  const force = options.force === true;
  if (command.alone) {
    run.unlocked = await command.alone(work.target, force);
    return undefined;
  }
  const t = targetRun(work, run, options, command, force);
  const { target, callbacks, events } = t;
  const drift = await decideUnlocked(t);
  const pending = run.decided.filter((f) => command.isWork(f.action));
  // `migrate --drift` takes the lock for drifted files too, even with nothing pending.
  const repair = drift !== undefined && command.writes && !options.dryRun &&
    run.drift!.resources.some((r) => r.reapply);
  // Migrate callbacks run on every migrate, as Flyway runs them, with nothing pending too.
  // Each-migrate and error callbacks need work to surround or a failure: not the lock alone.
  // Undo's run on every undo, the same way.
  const called = events !== undefined && callbacks.some((c) =>
    c.file !== undefined &&
    (c.event === events.before || c.event === events.after ||
      (t.validatesFirst && VALIDATE_EVENTS.has(c.event)))
  );
  if (events !== undefined) unsupportedCallbacks(target.name, callbacks, options.progress);
  // A file marked in progress is refused under the lock, where the mark cannot be a live run's:
  // taken for it, with nothing pending too.
  const marked = command.writes && run.decided.some((d) => d.inProgress === true);
  // `baseline --force` over the records of an earlier baseline that wrote no marker: the marker.
  const unmarked = command.name === "baseline" &&
    baselineMark(t.files, (path) => run.records.has(path), run.records, options.target) !==
      undefined;
  if (options.dryRun || (pending.length === 0 && !repair && !called && !marked && !unmarked)) {
    command.warn?.(target.name, run.decided, options.progress);
    return undefined;
  }
  return () => runLocked(t, drift, repair);
}

// One target's run, as its command, options and connection settings make it.
interface TargetRun<F extends PlannedFile> {
  readonly target: MigrationTarget<F>;
  readonly files: readonly F[];
  readonly undoFiles: readonly F[];
  readonly undoable: readonly UndoableFile[];
  readonly undoRefusal?: (file: F, undo: F) => string | undefined;
  readonly callbacks: readonly ConnectionCallback<F>[];
  readonly mask: Mask | undefined;
  readonly run: ConnectionRun;
  readonly options: RunnerOptions;
  readonly command: MigrationCommand;
  readonly force: boolean;
  readonly strict: boolean;
  readonly validateOnMigrate: boolean;
  /** `validate`, not in a dry run: its callbacks run. */
  readonly validating: boolean;
  /** `migrate`, not in a dry run: its callbacks run. */
  readonly migrating: boolean;
  /**
   * `migrate` or `undo` under flyway_compatible, not in a dry run: validated first, as Flyway
   * does, between the validate callbacks.
   */
  readonly validatesFirst: boolean;
  /** The events of the run's callbacks around its work (`migrate`, `undo`, not in a dry run). */
  readonly events: WorkEvents | undefined;
  /** The report shows what each record says of its run. */
  readonly showsRuns: boolean;
  readonly callbackPaths: ReadonlySet<string>;
  readonly fire: (event: CallbackEvent, stopped?: boolean) => Promise<void>;
}

function targetRun<F extends PlannedFile>(
  {
    target,
    files,
    settings,
    mask,
    callbacks = [],
    undoFiles = [],
    undoable = [],
    undoRefusal,
  }: TargetWork<F>,
  run: ConnectionRun,
  options: RunnerOptions,
  command: MigrationCommand,
  force: boolean,
): TargetRun<F> {
  run.callbacks = callbacks;
  const strict = options.strictOrder ?? settings?.strictOrder ?? false;
  run.strictOrder = strict;
  const validateOnMigrate = settings?.validateOnMigrate ?? false;
  run.validateOnMigrate = validateOnMigrate;
  return {
    target,
    files,
    undoFiles,
    undoable,
    ...(undoRefusal === undefined ? {} : { undoRefusal }),
    callbacks,
    mask,
    run,
    options,
    command,
    force,
    strict,
    validateOnMigrate,
    // Only migrate, undo and validate run callbacks, and never in a dry run: status, baseline
    // and repair list them.
    validating: command.name === "validate" && !options.dryRun,
    migrating: command.name === "migrate" && !options.dryRun,
    validatesFirst: (command.name === "migrate" || command.name === "undo") && !options.dryRun &&
      validateOnMigrate,
    events: options.dryRun ? undefined : WORK_EVENTS[command.name],
    // A run that writes no record reports what each record says of its run: the records stay so.
    // One that writes them would report what they said before it replaced them.
    showsRuns: !command.writes || options.dryRun,
    callbackPaths: new Set(callbacks.map((c) => c.path)),
    fire: (event, stopped = false) =>
      fireCallbacks(target, callbacks, event, run, options.progress, stopped),
  };
}

// Decides every file from the records read, and refuses what the command refuses.
function decideAll<F extends PlannedFile>(
  t: TargetRun<F>,
  all: ReadonlyMap<string, FileRecord>,
  plannedUndo?: readonly UndoStep[],
  locked = false,
): void {
  const { run, options, command, files, force, callbackPaths } = t;
  // A callback an earlier version ran as a migration has a record: it is no missing file to
  // refuse or report. `repair` drops it, whatever it sorts after.
  const repairing = command.name === "repair";
  const read = new Map([...all].filter(([path]) => repairing || !callbackPaths.has(path)));
  const records = new Map([...read].map(([path, record]) => [path, record.hash]));
  // `undo --target` names the version to undo down to: no file is above a target of its own.
  const forward = command.name === "undo" ? undefined : options.target;
  const decide = (target?: string) =>
    withChangedUndos(
      decideFiles(files, records, command.name, force, target),
      t.undoFiles,
      records,
      command.name,
      force,
    );
  run.decided = decide(forward).map((file) =>
    masked(
      repairing && callbackPaths.has(file.path) ? { ...file, action: "drop" } : file,
      t.mask,
    )
  );
  run.decided = unfinished(t.target.name, run.decided, read, command.name, locked);
  // Before anything is written: the first check needs no lock, the second sees what another
  // runner wrote while this one waited. `validate` reports them with the changed files.
  // Flyway validates every applied file, those above a --target too; for `undo`, as they are
  // found, before the versions to undo are marked.
  const edited = !t.validateOnMigrate ? [] : flywayRefusals(
    forward === undefined ? run.decided : decide(),
  );
  run.records = read;
  if (t.showsRuns) run.shownRecords = read;
  command.refuse?.(t.target.name, run.decided, records, {
    force,
    strictOrder: t.strict,
    edited,
    optionNames: options.optionNames ?? COMMAND_LINE_NAMES,
  });
  // Planned once the applied files passed validation, as Flyway validates before it undoes.
  if (command.name === "undo") {
    const undo = decideUndo(
      t.target.name,
      run.decided,
      t.undoable,
      records,
      {
        ...(options.target === undefined ? {} : { target: options.target }),
        ...(options.count === undefined ? {} : { count: options.count }),
        // Flyway's `undo -target` undoes the target too.
        ...(t.validateOnMigrate ? { inclusive: true as const } : {}),
      },
      plannedUndo,
    );
    run.undoSteps = undo.steps;
    run.decided = undoRequests(undo.decided, t);
    refuseUndoPairs(t);
  }
}

/**
 * The marks of files a run began and never ended (MySQL/MariaDB, where nothing rolls a file back;
 * {@linkcode inProgressMarkerPath}): each file is shown `inProgress`; `repair` drops the marks; any
 * other command that writes is refused under the lock (`locked`), naming the first, before
 * anything is written, since what ran of it may be committed and only a person can tell what.
 * Before the lock, a mark may be a live runner's, in the middle of its file: shown, not refused.
 */
function unfinished(
  connection: string,
  decided: readonly FileDecision[],
  records: ReadonlyMap<string, FileRecord>,
  command: Command,
  locked: boolean,
): FileDecision[] {
  const marks = [...records.keys()].flatMap((path) => {
    const record = inProgressRecord(path);
    return record === undefined ? [] : [{ path, record }];
  });
  if (marks.length === 0) return [...decided];
  const paths = decided.map((d) => d.path);
  const files = new Set(marks.map((m) => inProgressFile(m.record, paths)));
  const shown = decided.map((d) => files.has(d.path) ? { ...d, inProgress: true as const } : d);
  if (command === "repair") {
    return [...shown, ...marks.map((m): FileDecision => ({ path: m.path, action: "drop" }))];
  }
  if (!COMMANDS[command].writes || !locked) return shown;
  const first = marks[0];
  const mark = records.get(first.path)!;
  const when = [
    mark.executedAt !== undefined && `at ${mark.executedAt}`,
    mark.executedBy !== undefined && `by ${mark.executedBy}`,
  ].filter(Boolean).join(" ");
  throw new PlanError(
    connection,
    new MigrationFileError(
      inProgressFile(first.record, paths),
      `was begun by a run that never ended${when === "" ? "" : ` (${when})`}: it was killed or ` +
        `lost its connection in the middle of ${first.record}, and what ran of it may be ` +
        `committed (MySQL/MariaDB run a file in no transaction). Fix the database by hand, then ` +
        `run "repair", which drops the mark` +
        (marks.length > 1 ? ` (and ${marks.length - 1} more file(s) like it)` : ""),
    ),
  );
}

// Everything before the lock: the records read, every file decided, the validate callbacks and
// the drift read. Returns how the target compares its live system, when asked to.
async function decideUnlocked<F extends PlannedFile>(
  t: TargetRun<F>,
): Promise<DriftInspection<F> | undefined> {
  const { target, files, callbacks, run, options, command, validating } = t;
  // What this run would run, refused before anything where this runtime cannot run it.
  const runsEvents: ReadonlySet<string> = new Set([
    ...(command.name === "migrate" ? MIGRATE_EVENTS : []),
    ...(command.name === "undo" ? UNDO_EVENTS : []),
    ...(validating || t.validatesFirst ? VALIDATE_EVENTS : []),
  ]);
  refuseUnrunnable(target.name, callbacks.filter((c) => runsEvents.has(c.event)));
  if (validating) await t.fire("beforeValidate");
  let records: ReadonlyMap<string, FileRecord>;
  try {
    records = await target.readRecords();
  } catch (error) {
    // A listing still shows what this checkout holds, rather than "(no files)": each file, its
    // state unknown; the run fails all the same, with why the records could not be read.
    if (command.listsUnknown) {
      run.decided = files.map((file): FileDecision => ({ path: file.path, action: "unknown" }));
    }
    throw error;
  }
  decideAll(t, records);
  // A dry run imports no code: a missing `down` is found by the run itself, before it runs any.
  if (command.name === "undo" && !options.dryRun) await checkUndoCode(t);
  if (command.name === "undo") await refuseUndoPlan(t);
  if (command.name === "migrate") {
    const byPath = new Map(files.map((f) => [f.path, f]));
    refuseUnrunnable(
      target.name,
      run.decided.filter((d) => d.action === "apply" || d.action === "reapply")
        .map((d) => ({ path: d.path, file: byPath.get(d.path) })),
    );
  }
  if (t.migrating) {
    recordedCallbacks(target.name, callbacks, records, options.progress, options.optionNames);
  }
  const drift = options.drift === true && command.drift ? target.drift : undefined;
  if (drift) run.drift = await drift.read(files, run.applied());
  if (validating && passes(run, target.name)) await t.fire("afterValidate");
  return drift;
}

// Under the lock: the files decided again (another runner may have written meanwhile), the
// work run between the migrate callbacks, drifted files applied again, and the lock released.
async function runLocked<F extends PlannedFile>(
  t: TargetRun<F>,
  drift: DriftInspection<F> | undefined,
  repair: boolean,
): Promise<void> {
  const { target, files, callbacks, run, options, command, validatesFirst, fire } = t;
  const { events } = t;
  await target.lock(
    options.lockTimeoutMs,
    (holder) => options.progress.notice(`${target.name}: waiting for the lock of ${holder}`),
    options.signal,
  );
  let done = false;
  let started = false;
  // `undo` undoes no more under the lock than it planned before it (decideUndo).
  const plannedUndo = command.name === "undo" ? run.undoSteps : undefined;
  try {
    // Under flyway_compatible, Flyway validates on migrate and undo, and fires the validate
    // events.
    if (validatesFirst) await fire("beforeValidate");
    decideAll(t, await target.readRecords(), plannedUndo, true);
    if (validatesFirst) await fire("afterValidate");
    if (events !== undefined) {
      started = true;
      await fire(events.before);
      // beforeMigrate (beforeUndo) may have changed what the decisions read.
      if (callbacks.some((c) => c.event === events.before)) {
        decideAll(t, await target.readRecords(), plannedUndo, true);
      }
    }
    if (command.name === "undo") {
      await checkUndoCode(t);
      // Again: another runner may have changed what the first check read.
      await refuseUndoPlan(t);
    }
    command.warn?.(target.name, run.decided, options.progress);
    // Decided again under the lock: another runner may have changed the records meanwhile.
    const pending = run.decided.some((f) => command.isWork(f.action));
    const around = events !== undefined
      ? {
        before: planned(callbacks, events.beforeEach),
        after: planned(callbacks, events.afterEach),
      }
      : { before: [], after: [] };
    if (pending || !repair) {
      await runWork(target, [...files, ...t.undoFiles], run, options, t.mask, around);
    }
    if (command.name === "baseline") await markBaseline(target, files, run, options.target);
    if (drift !== undefined && command.writes) {
      await repairDrift(target, drift, files, run, options);
    }
    // As in Flyway, afterMigrate's own failure runs no afterMigrateError: every file ran.
    started = false;
    if (events !== undefined) await fire(events.after);
    done = true;
  } catch (error) {
    rolledBack(run, error);
    // Best effort, as Flyway's: the failure that stopped the run stays the one reported.
    if (started && events !== undefined) await fire(events.error, true);
    throw error;
  } finally {
    // A failing release must not hide why the run stopped.
    await target.release().catch((error) => {
      rolledBack(run, error);
      if (done) throw error;
    });
  }
}

// A failure that rolled back what the run did on the connection (SQLite's run transaction):
// no file of it is done, whatever it reported; the failed one stays failed.
function rolledBack(run: ConnectionRun, error: unknown): void {
  if (!(error instanceof MigrationFailure && error.earlierRolledBack)) return;
  for (const [path, outcome] of run.done) {
    if (outcome.result !== "failed") run.done.delete(path);
  }
}

// What the file's record says of its run (a renamed file's: the record it takes over), where it
// says anything, and the checksum it holds.
function withRun(file: FileDecision, records: ReadonlyMap<string, FileRecord>): FileReport {
  const record = records.get(file.path) ??
    (file.renamedFrom === undefined ? undefined : records.get(file.renamedFrom));
  if (record === undefined) return file;
  const applied: NonNullable<FileReport["applied"]> = {
    ...(record.executedAt === undefined ? {} : { at: record.executedAt }),
    ...(record.executedBy === undefined ? {} : { by: record.executedBy }),
    ...(record.runnerVersion === undefined ? {} : { runnerVersion: record.runnerVersion }),
  };
  return {
    ...file,
    recordChecksum: record.hash,
    ...(Object.keys(applied).length > 0 ? { applied } : {}),
  };
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
  run: ConnectionRun,
  options: RunnerOptions,
): Promise<void> {
  // What the files just applied did counts: a file applied in this run is an applied one.
  const found = await drift.read(files, run.applied());
  run.drift = found;
  if (!found.resources.some((r) => r.reapply)) return;
  run.drift = await drift.repair(files, run.applied(), found, options.signal);
  for (const r of run.drift.resources) {
    if (r.result === undefined) continue;
    options.progress.notice(
      `${target.name}: ${r.resource} had drifted: ${r.file} ${
        r.result === "reapplied" ? "applied again" : "refused by the cluster"
      }${r.remaining?.length ? `; ${r.remaining.length} difference(s) remain` : ""}`,
    );
  }
}

// Runs each file's work, in order: applying it, or writing, moving or dropping its record.
async function runWork<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  run: ConnectionRun,
  options: RunnerOptions,
  mask: Mask = (text) => text,
  around: EachFileCallbacks<F> = { before: [], after: [] },
): Promise<void> {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const command = COMMANDS[options.command];
  // `undo` goes newest first, as it planned; every other command in run order.
  const undoOrder = new Map(run.undoSteps.map((step, i) => [step.path, i]));
  const work = run.decided.filter((f) => command.isWork(f.action));
  if (command.name === "undo") work.sort((a, b) => undoOrder.get(a.path)! - undoOrder.get(b.path)!);
  // A version applied (again, or from another file) loses its undo records in its transaction.
  const versions = readVersionRecords(run.records.keys());
  // A version whose last record is dropped (repair) loses them too.
  const replacedBy = (decision: FileDecision): string[] => {
    const version = inProgressRecord(decision.path) === undefined
      ? versionedName(decision.path)
      : undefined;
    if (version === undefined) return [];
    if (decision.action !== "drop") return versions.replacedBy(decision.path, version);
    const kept = versions.versioned.some((r) =>
      r.path !== decision.path && compareVersions(r.version, version) === 0 &&
      !work.some((w) => w.action === "drop" && w.path === r.path)
    );
    return kept ? [] : versions.undoRecordsOf(version);
  };
  const undoOf = new Map<string, F | "down" | undefined>(
    run.undoSteps.map((step) => [step.path, step.undo === "down" ? "down" : byPath.get(step.undo)]),
  );
  options.progress.start(target.name, work.length, run.decided.length, command.verb);
  let n = 0;
  for (const decision of work) {
    if (options.signal?.aborted) {
      throw new MigrationError(
        "interrupted",
        `connection "${target.name}": interrupted before ${decision.path}; it and later files ` +
          `did not run`,
      );
    }
    const file = byPath.get(decision.path);
    // Timed with the file they surround: their runs are counted, not their time.
    const counted = (ranAfter: number) => {
      for (const callback of [...around.before, ...around.after.slice(0, ranAfter)]) {
        run.ranCallback(callback.path);
      }
    };
    const done = () => {
      const report = run.file(decision);
      options.progress.file(target.name, ++n, work.length, report);
      if (report.notice) options.progress.notice(`${target.name}: ${report.notice}`);
    };
    try {
      const outcome = decision.action === "undo"
        ? appliedOutcome(
          around.before.length + around.after.length === 0
            ? await target.undo(file!, undoOf.get(decision.path)!, new Date())
            : await target.undo(file!, undoOf.get(decision.path)!, new Date(), around),
          mask,
        )
        : await runOne(
          target,
          file,
          decision,
          mask,
          around,
          replacedBy(decision),
        );
      run.done.set(decision.path, outcome);
      if (outcome.ran && !outcome.alreadyRecorded) counted(around.after.length);
    } catch (error) {
      if (!(error instanceof AppliedThenFailed)) {
        run.done.set(decision.path, { result: "failed" });
        throw error;
      }
      // The file ran and is recorded; a callback after it stopped the run.
      run.done.set(decision.path, appliedOutcome(error.applied, mask));
      counted(error.ranAfter);
      done();
      throw error.failure;
    }
    done();
  }
}

/**
 * `baseline`, once its records are written: the marker record of its version (`--version`, else
 * the newest version recorded), at the checksum of the newest file recorded at or below it, so
 * that `undo` stops above the versions it adopted ({@linkcode baselineMarkerPath}). The records
 * already there count (`--force` over a baseline of a Thaw that wrote no marker). Written last: a
 * run stopped before leaves no marker above records that were not written.
 */
async function markBaseline<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  run: ConnectionRun,
  version: string | undefined,
): Promise<void> {
  const recorded = (path: string) =>
    run.records.has(path) || run.done.get(path)?.result === "recorded";
  const mark = baselineMark(files, recorded, run.records, version);
  if (mark === undefined) return;
  await target.record({ ...mark.file, path: baselineMarkerPath(mark.version) }, new Date());
}

/**
 * The marker `baseline` writes: its version (`version`, else the newest recorded), and the
 * newest recorded versioned file at or below it, whose checksum it takes; `undefined` where no
 * such file is recorded, or the marker of that version is in `records` already.
 */
function baselineMark<F extends PlannedFile>(
  files: readonly F[],
  recorded: (path: string) => boolean,
  records: ReadonlyMap<string, FileRecord>,
  version: string | undefined,
): { file: F; version: string } | undefined {
  const adopted = files.filter((f) => {
    const of = isRepeatable(f.path) ? undefined : fileVersion(f.path);
    return of !== undefined && recorded(f.path) &&
      (version === undefined || compareVersions(of, version) <= 0);
  });
  if (adopted.length === 0) return undefined;
  const newest = adopted.reduce((a, b) =>
    compareVersions(fileVersion(b.path)!, fileVersion(a.path)!) > 0 ? b : a
  );
  const at = version ?? fileVersion(newest.path)!;
  return records.has(baselineMarkerPath(at)) ? undefined : { file: newest, version: at };
}

// One file's work: applying it, or writing, moving or dropping its record.
async function runOne<F extends PlannedFile>(
  target: MigrationTarget<F>,
  file: F | undefined,
  decision: FileDecision,
  mask: Mask,
  around: EachFileCallbacks<F>,
  replaced: readonly string[],
): Promise<FileOutcome> {
  if (decision.action === "drop") {
    await target.dropRecord(decision.path);
    // The undo records of a version whose record is gone would read the next file of that
    // version undone.
    for (const path of replaced) await target.dropRecord(path);
    return { result: "dropped" };
  }
  if (decision.action === "record" || decision.action === "rename") {
    // The new record first: a run stopped in between leaves both, and the next run reads
    // the file as applied and the old path as missing; nothing runs twice.
    await target.record(file!, new Date(), decision.renamedFrom);
    if (decision.action === "rename") await target.dropRecord(decision.renamedFrom!);
    for (const path of replaced) await target.dropRecord(path);
    return { result: decision.action === "rename" ? "moved" : "recorded" };
  }
  // Each-migrate callbacks surround the files that run, not records written or dropped.
  const undoRecords = decision.action === "apply" ? replaced : [];
  const outcome = undoRecords.length > 0
    ? await target.apply(file!, new Date(), { around, undoRecords })
    : around.before.length + around.after.length === 0
    ? await target.apply(file!, new Date())
    : await target.apply(file!, new Date(), { around });
  return appliedOutcome(outcome, mask);
}

// What the report shows of a file that ran.
function appliedOutcome(outcome: Applied, mask: Mask): FileOutcome {
  return {
    result: outcome.result,
    ran: true,
    ...(outcome.alreadyRecorded ? { alreadyRecorded: true } : {}),
    ms: outcome.ms,
    ...(outcome.status === undefined ? {} : { status: outcome.status }),
    ...(outcome.notice ? { notice: mask(outcome.notice) } : {}),
    ...(outcome.reindex
      ? {
        reindex: {
          ...outcome.reindex,
          source: mask(outcome.reindex.source),
          index: mask(outcome.reindex.index),
          alias: mask(outcome.reindex.alias),
        },
      }
      : {}),
  };
}

// The file as the report shows it: what it sends and defines, with placeholder values masked.
// Decisions are taken on the real values first: two files of one resource stay one resource.
function masked(file: FileDecision, mask: Mask | undefined): FileDecision {
  if (mask === undefined) return file;
  return {
    ...file,
    ...(file.request === undefined ? {} : { request: mask(file.request) }),
    ...(file.resource === undefined ? {} : { resource: mask(file.resource) }),
    ...(file.overwrites === undefined ? {} : { overwrites: mask(file.overwrites) }),
  };
}

// Failures of the run are reported; anything else is a bug and propagates.
function runError<F extends PlannedFile>(
  error: unknown,
  target: MigrationTarget<F>,
  signal: AbortSignal | undefined,
): RunError {
  // A target's own I/O error: its message as it is.
  if (error instanceof ConnectionFailure) {
    return { kind: "failure", message: error.message, connection: error.detail.connection };
  }
  if (error instanceof MigrationFailure) {
    return { kind: error.kind, message: error.message, ...error.detail };
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
  // A driver's own abort error, from a request Ctrl-C cut short.
  if (signal?.aborted) {
    return { kind: "interrupted", message: "interrupted", connection: target.name };
  }
  throw error;
}

// The events a migrate run fires.
const MIGRATE_EVENTS: ReadonlySet<string> = new Set<CallbackEvent>([
  "beforeMigrate",
  "beforeEachMigrate",
  "afterEachMigrate",
  "afterMigrate",
  "afterMigrateError",
]);

// The events of a migrate or an undo run, around its work and each of its files.
interface WorkEvents {
  readonly before: CallbackEvent;
  readonly beforeEach: CallbackEvent;
  readonly afterEach: CallbackEvent;
  readonly after: CallbackEvent;
  readonly error: CallbackEvent;
}

const WORK_EVENTS: Partial<Record<Command, WorkEvents>> = {
  migrate: {
    before: "beforeMigrate",
    beforeEach: "beforeEachMigrate",
    afterEach: "afterEachMigrate",
    after: "afterMigrate",
    error: "afterMigrateError",
  },
  undo: {
    before: "beforeUndo",
    beforeEach: "beforeEachUndo",
    afterEach: "afterEachUndo",
    after: "afterUndo",
    error: "afterUndoError",
  },
};

// The events an undo run fires.
const UNDO_EVENTS: ReadonlySet<string> = new Set<CallbackEvent>([
  "beforeUndo",
  "beforeEachUndo",
  "afterEachUndo",
  "afterUndo",
  "afterUndoError",
]);

// The events a validate fires (and a migrate under flyway_compatible).
const VALIDATE_EVENTS: ReadonlySet<string> = new Set<CallbackEvent>([
  "beforeValidate",
  "afterValidate",
]);

// A file this runtime cannot run (a `.ts` file on a Node without TypeScript) stops the run before
// it writes anything on the connection, as a file that cannot be planned does.
function refuseUnrunnable(
  connection: string,
  running: readonly { readonly path: string; readonly file?: PlannedFile | undefined }[],
): void {
  for (const { path, file } of running) {
    if (file?.unrunnable !== undefined) {
      throw new PlanError(connection, new MigrationFileError(path, file.unrunnable));
    }
  }
}

// Each version to undo shows what its undo sends: the undo file's request (none for a `down`, or
// an undo in code), not its versioned file's.
function undoRequests<F extends PlannedFile>(
  decided: readonly FileDecision[],
  t: TargetRun<F>,
): FileDecision[] {
  const undos = new Map(t.undoFiles.map((f) => [f.path, f]));
  const runs = new Map(t.run.undoSteps.map((step) => [step.path, undos.get(step.undo)]));
  return decided.map((d) => {
    if (d.action !== "undo") return d;
    const { request: _, overwrites: _o, ...rest } = d;
    const undo = runs.get(d.path);
    return masked({
      ...rest,
      ...(undo?.request === undefined ? {} : { request: undo.request }),
      ...(undo?.overwrites === undefined ? {} : { overwrites: undo.overwrites }),
    }, t.mask);
  });
}

/**
 * The undo plan's pairs, checked whole before anything runs, in a dry run too (no I/O): the driver
 * must take each undo file for the versioned file it undoes (`undoRefusal`: a reindex's undo
 * needs the index its file kept). Throws a PlanError naming the first undo file refused.
 */
function refuseUndoPairs<F extends PlannedFile>(t: TargetRun<F>): void {
  if (t.undoRefusal === undefined) return;
  const byPath = new Map([...t.files, ...t.undoFiles].map((f) => [f.path, f]));
  for (const step of t.run.undoSteps) {
    const file = byPath.get(step.path);
    const undo = step.undo === "down" ? undefined : byPath.get(step.undo);
    const why = file === undefined || undo === undefined ? undefined : t.undoRefusal(file, undo);
    if (why !== undefined) {
      throw new PlanError(t.target.name, new MigrationFileError(undo!.path, why));
    }
  }
}

/**
 * The undo plan's pairs, checked whole against what the target holds (its `undoPlanRefusal`,
 * reads only), before anything runs: a pair refused while its file runs would be refused after
 * the newer versions were undone. Throws a PlanError naming the undo file refused.
 */
async function refuseUndoPlan<F extends PlannedFile>(t: TargetRun<F>): Promise<void> {
  if (t.target.undoPlanRefusal === undefined) return;
  const byPath = new Map([...t.files, ...t.undoFiles].map((f) => [f.path, f]));
  const pairs: { file: F; undo: F }[] = [];
  for (const step of t.run.undoSteps) {
    const file = byPath.get(step.path);
    const undo = step.undo === "down" ? undefined : byPath.get(step.undo);
    if (file !== undefined && undo !== undefined) pairs.push({ file, undo });
  }
  if (pairs.length === 0) return;
  const refused = await t.target.undoPlanRefusal(pairs);
  if (refused !== undefined) {
    throw new PlanError(t.target.name, new MigrationFileError(refused.path, refused.why));
  }
}

/**
 * The undo plan's code, checked whole before anything runs: what it runs must be runnable here, a
 * migration in code it undoes by its `down` must export one (imported now: the plan undoes it),
 * and one undone by an undo file must not export one too. Throws a PlanError naming the first
 * file refused, with how many more are.
 */
async function checkUndoCode<F extends PlannedFile>(t: TargetRun<F>): Promise<void> {
  const byPath = new Map([...t.files, ...t.undoFiles].map((f) => [f.path, f]));
  const refused: { path: string; why: string }[] = [];
  for (const step of t.run.undoSteps) {
    const file = byPath.get(step.path);
    const runs = step.undo === "down" ? file : byPath.get(step.undo);
    if (runs?.unrunnable !== undefined) {
      refused.push({ path: runs.path, why: runs.unrunnable });
      continue;
    }
    if (file === undefined || !isCodeFile(file)) continue;
    let down;
    try {
      down = await loadDown(file);
    } catch (error) {
      if (!(error instanceof CodeLoadError)) throw error;
      refused.push({ path: file.path, why: error.message });
      continue;
    }
    if (step.undo === "down" && down === undefined) {
      refused.push({
        path: file.path,
        why: `is to undo, and has no undo: ${undoAdvice(file.path)}`,
      });
    }
    if (step.undo !== "down" && down !== undefined) {
      refused.push({
        path: step.undo,
        why: `undoes ${file.path}, which exports down too: keep one undo (remove this file, or ` +
          "the down export)",
      });
    }
  }
  if (refused.length === 0) return;
  const more = refused.length > 1
    ? ` (and ${refused.length - 1} more: ${refused.slice(1).map((r) => r.path).join(", ")})`
    : "";
  throw new PlanError(
    t.target.name,
    new MigrationFileError(refused[0].path, `${refused[0].why}${more}`),
  );
}

// The callbacks of `event` Thaw runs, in their order.
function planned<F>(
  callbacks: readonly ConnectionCallback<F>[],
  event: CallbackEvent,
): PlannedCallback<F>[] {
  return callbacks.flatMap((c) =>
    c.event === event && c.file !== undefined ? [{ event, path: c.path, file: c.file }] : []
  );
}

/**
 * Runs the callbacks of `event`, in order, each counted in the report and shown in the progress.
 * `stopped`: the run failed already (afterMigrateError), and a callback that fails is told, not
 * thrown: the failure that stopped the run stays the one reported.
 */
async function fireCallbacks<F extends PlannedFile>(
  target: MigrationTarget<F>,
  callbacks: readonly ConnectionCallback<F>[],
  event: CallbackEvent,
  run: ConnectionRun,
  progress: Progress,
  stopped = false,
): Promise<void> {
  for (const callback of planned(callbacks, event)) {
    let ran;
    try {
      ran = await target.runCallback(callback);
    } catch (error) {
      if (!stopped) throw error;
      progress.notice(
        `${target.name}: the ${event} callback ${callback.path} failed too: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
      continue;
    }
    run.ranCallback(callback.path, ran.ms);
    progress.step(target.name, `callback ${callback.path} (${event}, ${ran.ms} ms)`);
    if (ran.notice) progress.notice(`${target.name}: ${ran.notice}`);
  }
}

// Whether this connection alone passes `validate`: afterValidate runs only then, as in Flyway.
function passes(run: ConnectionRun, name: string): boolean {
  const connection = run.report(name, [], { requests: 0, ms: 0 });
  return COMMANDS.validate.verdict?.({ command: "validate", connections: [connection], ms: 0 }) ===
    undefined;
}

// Files earlier versions ran once as migrations, named as callbacks: they now run at each event.
function recordedCallbacks(
  name: string,
  callbacks: readonly ConnectionCallback<unknown>[],
  records: ReadonlyMap<string, FileRecord>,
  progress: Progress,
  names: OptionNames = COMMAND_LINE_NAMES,
): void {
  for (const c of callbacks) {
    if (!records.has(c.path)) continue;
    progress.notice(
      `${name}: ${c.path} has a record of a run as a migration, from an earlier version; it is ` +
        `now the ${c.event} callback${
          c.file === undefined ? ", an event Thaw does not run" : ", run at each of its events"
        } (${names.invocation("repair")} drops its record)`,
    );
  }
}

// A copied Flyway folder may hold callbacks of events Thaw does not run: said, never run.
function unsupportedCallbacks(
  name: string,
  callbacks: readonly ConnectionCallback<unknown>[],
  progress: Progress,
): void {
  for (const c of callbacks) {
    if (c.file !== undefined) continue;
    progress.notice(
      `${name}: ${c.path} is Flyway's ${c.event} callback, an event Thaw does not run: it is ` +
        "not run (docs/migrations-reference.md lists the events Thaw runs)",
    );
  }
}
