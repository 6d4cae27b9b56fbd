// What a target's run does under its lock: the files decided again (another runner may have
// written meanwhile), the work run between its callbacks, drifted files applied again, and the
// lock released.
import type { DriftInspection, MigrationTarget } from "../driver.ts";
import { MigrationFailure } from "../migration_error.ts";
import type { EachFileCallbacks } from "../plan/planned_callback.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import { markBaseline } from "./baseline_mark.ts";
import { planned } from "./callbacks.ts";
import type { ConnectionRun } from "./connection_run.ts";
import { decideAll } from "./decisions.ts";
import type { TargetRun } from "./target_run.ts";
import type { RunnerOptions } from "./target_work.ts";
import { checkUndoCode, refuseUndoPlan } from "./undo_checks.ts";
import { runWork } from "./work.ts";

/**
 * Takes the target's lock, runs what is left to run under it, and releases it; a failure that
 * rolled back the run's work leaves none of it done.
 */
export async function runLocked<F extends PlannedFile>(
  t: TargetRun<F>,
  drift: DriftInspection<F> | undefined,
  repair: boolean,
): Promise<void> {
  const { target, run, options } = t;
  await target.lock(
    options.lockTimeoutMs,
    (holder) => options.progress.notice(`${target.name}: waiting for the lock of ${holder}`),
    options.signal,
  );
  let done = false;
  try {
    await underLock(t, drift, repair);
    done = true;
  } finally {
    // A failing release must not hide why the run stopped.
    await target.release().catch((error) => {
      rolledBack(run, error);
      if (done) throw error;
    });
  }
}

// The run under the lock, between its callbacks: afterMigrateError (afterUndoError) where it
// fails once beforeMigrate (beforeUndo) began.
async function underLock<F extends PlannedFile>(
  t: TargetRun<F>,
  drift: DriftInspection<F> | undefined,
  repair: boolean,
): Promise<void> {
  const { events, fire } = t;
  let started = false;
  try {
    await decideLocked(t, () => started = true);
    await lockedWork(t, drift, repair);
    // As in Flyway, afterMigrate's own failure runs no afterMigrateError: every file ran.
    started = false;
    if (events !== undefined) await fire(events.after);
  } catch (error) {
    rolledBack(t.run, error);
    // Best effort, as Flyway's: the failure that stopped the run stays the one reported.
    if (started && events !== undefined) await fire(events.error, true);
    throw error;
  }
}

// The files decided again under the lock, between the validate callbacks (under
// flyway_compatible, as Flyway validates on migrate and undo) and after beforeMigrate
// (beforeUndo), which `started` says has begun.
async function decideLocked<F extends PlannedFile>(
  t: TargetRun<F>,
  started: () => void,
): Promise<void> {
  const { target, callbacks, run, command, validatesFirst, fire, events } = t;
  // `undo` undoes no more under the lock than it planned before it (decideUndo).
  const plannedUndo = command.name === "undo" ? run.undoSteps : undefined;
  if (validatesFirst) await fire("beforeValidate");
  decideAll(t, await target.readRecords(), plannedUndo, true);
  if (validatesFirst) await fire("afterValidate");
  if (events !== undefined) {
    started();
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
  command.warn?.(target.name, run.decided, t.options.progress);
}

// The work decided under the lock, `baseline`'s marker, and drifted files applied again.
async function lockedWork<F extends PlannedFile>(
  t: TargetRun<F>,
  drift: DriftInspection<F> | undefined,
  repair: boolean,
): Promise<void> {
  const { target, files, callbacks, run, options, command, events } = t;
  // Decided again under the lock: another runner may have changed the records meanwhile.
  const pending = run.decided.some((f) => command.isWork(f.action));
  const around: EachFileCallbacks<F> = events !== undefined
    ? { before: planned(callbacks, events.beforeEach), after: planned(callbacks, events.afterEach) }
    : { before: [], after: [] };
  if (pending || !repair) {
    await runWork(target, [...files, ...t.undoFiles], run, options, t.mask, around);
  }
  if (command.name === "baseline") await markBaseline(target, files, run, options.target);
  if (drift !== undefined && command.writes) await repairDrift(target, drift, files, run, options);
}

// A failure that rolled back what the run did on the connection (SQLite's run transaction):
// no file of it is done, whatever it reported; the failed one stays failed.
function rolledBack(run: ConnectionRun, error: unknown): void {
  if (error instanceof MigrationFailure && error.earlierRolledBack) run.rollBack();
}

/**
 * `migrate --drift`, under the lock, once the pending files ran: compares again (the files just
 * applied, and another runner, may have changed what is live), then applies again the files whose
 * resources drifted.
 */
async function repairDrift<F extends PlannedFile>(
  target: MigrationTarget<F>,
  drift: DriftInspection<F>,
  files: readonly F[],
  run: ConnectionRun,
  options: RunnerOptions,
): Promise<void> {
  // What the files just applied did counts: a file applied in this run is an applied one.
  const found = await drift.read(files, run.applied());
  run.driftFound(found);
  if (!found.resources.some((r) => r.reapply)) return;
  const repaired = await drift.repair(files, run.applied(), found, options.signal);
  run.driftFound(repaired);
  for (const r of repaired.resources) {
    if (r.result === undefined) continue;
    options.progress.notice(
      `${target.name}: ${r.resource} had drifted: ${r.file} ${
        r.result === "reapplied" ? "applied again" : "refused by the cluster"
      }${r.remaining?.length ? `; ${r.remaining.length} difference(s) remain` : ""}`,
    );
  }
}
