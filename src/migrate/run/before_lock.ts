// What a target's run does before its lock: the records read, every file decided and refused
// where the command refuses it, the validate callbacks and the drift read.
import { COMMANDS } from "../command/commands.ts";
import type { DriftInspection, FileRecord } from "../driver.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { FileDecision } from "../run_report.ts";
import { baselineMark } from "./baseline_mark.ts";
import {
  firedEvents,
  passes,
  recordedCallbacks,
  refuseUnrunnable,
  unsupportedCallbacks,
  VALIDATE_EVENTS,
} from "./callbacks.ts";
import type { ConnectionRun } from "./connection_run.ts";
import { decideAll } from "./decisions.ts";
import { type TargetRun, targetRun } from "./target_run.ts";
import type { RunnerOptions, TargetWork } from "./target_work.ts";
import { runLocked } from "./under_lock.ts";
import { checkUndoCode, refuseUndoPlan } from "./undo_checks.ts";

/** Decides the files of one target; returns what is left to run under its lock, if anything. */
export async function runTarget<F extends PlannedFile>(
  work: TargetWork<F>,
  run: ConnectionRun,
  options: RunnerOptions,
): Promise<(() => Promise<void>) | undefined> {
  const command = COMMANDS[options.command];
  const force = options.force === true;
  if (command.alone) {
    run.unlockedWith(await command.alone(work.target, force));
    return undefined;
  }
  const t = targetRun(work, run, options, command, force);
  const drift = await decideUnlocked(t);
  // `migrate --drift` takes the lock for drifted files too, even with nothing pending.
  const repair = drift !== undefined && command.writes && !options.dryRun &&
    run.drift?.resources.some((r) => r.reapply) === true;
  if (t.events !== undefined) unsupportedCallbacks(t.target.name, t.callbacks, options.progress);
  if (options.dryRun || (!repair && !needsLock(t))) {
    command.warn?.(t.target.name, run.decided, options.progress);
    return undefined;
  }
  return () => runLocked(t, drift, repair);
}

// Whether the run takes the lock, drift aside: for work, or callbacks, or a refusal under it.
function needsLock<F extends PlannedFile>(t: TargetRun<F>): boolean {
  const { run, command, events, options } = t;
  const pending = run.decided.some((f) => command.isWork(f.action));
  // Migrate callbacks run on every migrate, as Flyway runs them, with nothing pending too.
  // Each-migrate and error callbacks need work to surround or a failure: not the lock alone.
  // Undo's run on every undo, the same way.
  const called = events !== undefined && t.callbacks.some((c) =>
    c.file !== undefined &&
    (c.event === events.before || c.event === events.after ||
      (t.validatesFirst && VALIDATE_EVENTS.has(c.event)))
  );
  // A file marked in progress is refused under the lock, where the mark cannot be a live run's:
  // taken for it, with nothing pending too.
  const marked = command.writes && run.decided.some((d) => d.inProgress === true);
  // `baseline --force` over the records of an earlier baseline that wrote no marker: the marker.
  const unmarked = command.name === "baseline" &&
    baselineMark(t.files, (path) => run.records.has(path), run.records, options.target) !==
      undefined;
  return pending || called || marked || unmarked;
}

// Everything before the lock: the records read, every file decided, the validate callbacks and
// the drift read. Returns how the target compares its live system, when asked to.
async function decideUnlocked<F extends PlannedFile>(
  t: TargetRun<F>,
): Promise<DriftInspection<F> | undefined> {
  const { target, files, callbacks, run, options, command, validating } = t;
  // What this run would run, refused before anything where this runtime cannot run it.
  const runsEvents = firedEvents(command.name, validating || t.validatesFirst);
  refuseUnrunnable(target.name, callbacks.filter((c) => runsEvents.has(c.event)));
  if (validating) await t.fire("beforeValidate");
  const records = await readRecords(t);
  decideAll(t, records);
  // A dry run imports no code: a missing `down` is found by the run itself, before it runs any.
  if (command.name === "undo" && !options.dryRun) await checkUndoCode(t);
  if (command.name === "undo") await refuseUndoPlan(t);
  if (command.name === "migrate") refuseUnrunnableWork(t);
  if (t.migrating) {
    recordedCallbacks(target.name, callbacks, records, options.progress, options.optionNames);
  }
  const drift = options.drift === true && command.drift ? target.drift : undefined;
  if (drift) run.driftFound(await drift.read(files, run.applied()));
  if (validating && passes(run, target.name)) await t.fire("afterValidate");
  return drift;
}

// The target's records. A listing still shows what this checkout holds where they cannot be
// read, rather than "(no files)": each file, its state unknown; the run fails all the same, with
// why the records could not be read.
async function readRecords<F extends PlannedFile>(
  t: TargetRun<F>,
): Promise<ReadonlyMap<string, FileRecord>> {
  try {
    return await t.target.readRecords();
  } catch (error) {
    if (t.command.listsUnknown) {
      t.run.takeDecisions(
        t.files.map((file): FileDecision => ({ path: file.path, action: "unknown" })),
      );
    }
    throw error;
  }
}

// `migrate` refuses, before it writes anything, a file to apply that this runtime cannot run.
function refuseUnrunnableWork<F extends PlannedFile>(t: TargetRun<F>): void {
  const byPath = new Map(t.files.map((f) => [f.path, f]));
  refuseUnrunnable(
    t.target.name,
    t.run.decided.filter((d) => d.action === "apply" || d.action === "reapply")
      .map((d) => ({ path: d.path, file: byPath.get(d.path) })),
  );
}
