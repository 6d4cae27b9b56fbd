// The work under the lock: each file of the work list applied, undone, or its record written,
// moved or dropped, in order.
import type { Mask } from "../../config/secrets_mask.ts";
import { definedFields } from "../../defined_fields.ts";
import type { MigrationCommand } from "../command/command.ts";
import { COMMANDS } from "../command/commands.ts";
import { type Applied, AppliedThenFailed, type MigrationTarget } from "../driver.ts";
import { MigrationError } from "../migration_error.ts";
import { inProgressRecord } from "../plan/in_progress_marker.ts";
import { compareVersions, versionedName } from "../plan/migration_name.ts";
import type { EachFileCallbacks } from "../plan/planned_callback.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import { readVersionRecords } from "../plan/version_state.ts";
import type { FileDecision } from "../run_report.ts";
import type { ConnectionRun, FileOutcome } from "./connection_run.ts";
import type { RunnerOptions } from "./target_work.ts";

/** Runs each file's work, in order: applying it, or writing, moving or dropping its record. */
export async function runWork<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  run: ConnectionRun,
  options: RunnerOptions,
  mask: Mask = (text) => text,
  around: EachFileCallbacks<F> = { before: [], after: [] },
): Promise<void> {
  const command = COMMANDS[options.command];
  const work = workList(run, command);
  options.progress.start(target.name, work.length, run.decided.length, command.verb);
  const doing = new FileWork(target, files, run, options, mask, around, work);
  for (const decision of work) {
    if (options.signal?.aborted) {
      throw new MigrationError(
        "interrupted",
        `connection "${target.name}": interrupted before ${decision.path}; it and later files ` +
          `did not run`,
      );
    }
    await doing.run(decision);
  }
}

// The decisions that are work: `undo`'s newest first, as it planned; every other command's in run
// order.
function workList(run: ConnectionRun, command: MigrationCommand): FileDecision[] {
  const work = run.decided.filter((f) => command.isWork(f.action));
  if (command.name !== "undo") return work;
  const undoOrder = new Map(run.undoSteps.map((step, i) => [step.path, i]));
  const rank = (path: string) => undoOrder.get(path) ?? undoOrder.size;
  return work.sort((a, b) => rank(a.path) - rank(b.path));
}

// The records of undos a decision replaces: a version applied (again, or from another file) loses
// its undo records in its transaction; a version whose last record is dropped (repair) too.
function replacedRecords(
  records: Iterable<string>,
  work: readonly FileDecision[],
): (decision: FileDecision) => string[] {
  const versions = readVersionRecords(records);
  return (decision) => {
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
}

// One connection's work list as it runs: each file done, counted and shown in the progress.
class FileWork<F extends PlannedFile> {
  readonly #target: MigrationTarget<F>;
  readonly #run: ConnectionRun;
  readonly #options: RunnerOptions;
  readonly #mask: Mask;
  readonly #around: EachFileCallbacks<F>;
  readonly #total: number;
  readonly #byPath: ReadonlyMap<string, F>;
  readonly #undoOf: ReadonlyMap<string, F | "down" | undefined>;
  readonly #replacedBy: (decision: FileDecision) => string[];
  #shown = 0;

  constructor(
    target: MigrationTarget<F>,
    files: readonly F[],
    run: ConnectionRun,
    options: RunnerOptions,
    mask: Mask,
    around: EachFileCallbacks<F>,
    work: readonly FileDecision[],
  ) {
    this.#target = target;
    this.#run = run;
    this.#options = options;
    this.#mask = mask;
    this.#around = around;
    this.#total = work.length;
    const byPath = new Map(files.map((f) => [f.path, f]));
    this.#byPath = byPath;
    this.#undoOf = new Map(
      run.undoSteps.map((
        step,
      ) => [step.path, step.undo === "down" ? "down" : byPath.get(step.undo)]),
    );
    this.#replacedBy = replacedRecords(run.records.keys(), work);
  }

  /** Does the work of `decision`, and shows it; what failed is shown failed, and thrown. */
  async run(decision: FileDecision): Promise<void> {
    try {
      const outcome = decision.action === "undo"
        ? await this.#undo(decision)
        : await this.#one(decision);
      this.#run.did(decision.path, outcome);
      if (outcome.ran && !outcome.alreadyRecorded) this.#counted(this.#around.after.length);
    } catch (error) {
      if (!(error instanceof AppliedThenFailed)) {
        this.#run.did(decision.path, { result: "failed" });
        throw error;
      }
      // The file ran and is recorded; a callback after it stopped the run.
      this.#run.did(decision.path, appliedOutcome(error.applied, this.#mask));
      this.#counted(error.ranAfter);
      this.#show(decision);
      throw error.failure;
    }
    this.#show(decision);
  }

  // The each-file callbacks that ran around a file: timed with it, their runs are counted, not
  // their time.
  #counted(ranAfter: number): void {
    for (const callback of [...this.#around.before, ...this.#around.after.slice(0, ranAfter)]) {
      this.#run.ranCallback(callback.path);
    }
  }

  // The file's line in the progress, and its notice.
  #show(decision: FileDecision): void {
    const report = this.#run.file(decision);
    this.#options.progress.file(this.#target.name, ++this.#shown, this.#total, report);
    if (report.notice) this.#options.progress.notice(`${this.#target.name}: ${report.notice}`);
  }

  // The planned file a decision runs or records.
  #file(decision: FileDecision): F {
    const file = this.#byPath.get(decision.path);
    if (file === undefined) {
      throw new Error(`connection "${this.#target.name}": no planned file ${decision.path}`);
    }
    return file;
  }

  // Undoes a version, by its undo file or its `down`.
  async #undo(decision: FileDecision): Promise<FileOutcome> {
    const file = this.#file(decision);
    const undo = this.#undoOf.get(decision.path);
    if (undo === undefined) {
      throw new Error(`connection "${this.#target.name}": no undo planned for ${decision.path}`);
    }
    const around = this.#around;
    const undone = around.before.length + around.after.length === 0
      ? await this.#target.undo(file, undo, new Date())
      : await this.#target.undo(file, undo, new Date(), around);
    return appliedOutcome(undone, this.#mask);
  }

  // One file's work: applying it, or writing, moving or dropping its record.
  async #one(decision: FileDecision): Promise<FileOutcome> {
    const target = this.#target;
    const replaced = this.#replacedBy(decision);
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
      await target.record(this.#file(decision), new Date(), decision.renamedFrom);
      const { renamedFrom } = decision;
      if (decision.action === "rename" && renamedFrom !== undefined) {
        await target.dropRecord(renamedFrom);
      }
      for (const path of replaced) await target.dropRecord(path);
      return { result: decision.action === "rename" ? "moved" : "recorded" };
    }
    return appliedOutcome(await this.#apply(decision, replaced), this.#mask);
  }

  // Applies a file, between its each-migrate callbacks: they surround the files that run, not
  // records written or dropped.
  #apply(decision: FileDecision, replaced: readonly string[]): Promise<Applied> {
    const file = this.#file(decision);
    const around = this.#around;
    const undoRecords = decision.action === "apply" ? replaced : [];
    return undoRecords.length > 0
      ? this.#target.apply(file, new Date(), { around, undoRecords })
      : around.before.length + around.after.length === 0
      ? this.#target.apply(file, new Date())
      : this.#target.apply(file, new Date(), { around });
  }
}

// What the report shows of a file that ran.
function appliedOutcome(outcome: Applied, mask: Mask): FileOutcome {
  return {
    result: outcome.result,
    ran: true,
    ...(outcome.alreadyRecorded ? { alreadyRecorded: true } : {}),
    ms: outcome.ms,
    ...definedFields({ status: outcome.status }),
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
