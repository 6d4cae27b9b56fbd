import { definedFields } from "../../defined_fields.ts";
import type { Applied, AppliedFiles, FileRecord } from "../driver.ts";
import type { UndoStep } from "../plan/undo_plan.ts";
import type {
  CallbackReport,
  ConnectionDrift,
  ConnectionReport,
  FileDecision,
  FileReport,
  FileResult,
  UnlockOutcome,
} from "../run_report.ts";
import type { ConnectionCallback } from "./target_work.ts";

/** What was done with one file of the work list. */
export interface FileOutcome {
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

/** What the report says of the connection's settings, fixed for the run. */
export interface RunSettings {
  /** The connection's callbacks. */
  readonly callbacks: readonly ConnectionCallback<unknown>[];
  readonly strictOrder: boolean;
  readonly validateOnMigrate: boolean;
}

const NO_SETTINGS: RunSettings = { callbacks: [], strictOrder: false, validateOnMigrate: false };

/**
 * One connection while it runs: the decisions last taken (the work list, never edited), the
 * records they were taken on, and what was done with each file. The report is made of it.
 */
export class ConnectionRun {
  /** The decisions, in run order; replaced whole when taken again under the lock. */
  #decided: readonly FileDecision[] = [];
  /** The records the decisions were taken on, where the report shows what they say. */
  #shownRecords: ReadonlyMap<string, FileRecord> | undefined;
  /** The records the decisions were taken on. */
  #records: ReadonlyMap<string, FileRecord> = new Map();
  /** `undo`: what it undoes, newest first, as last planned. */
  #undoSteps: readonly UndoStep[] = [];
  /** What was done, by path. */
  readonly #done = new Map<string, FileOutcome>();
  readonly #settings: RunSettings;
  #drift: ConnectionDrift | undefined;
  #unlocked: UnlockOutcome | undefined;
  /** What this run did with each callback, by path. */
  readonly #callbackRuns = new Map<string, { runs: number; ms?: number }>();

  constructor(settings: RunSettings = NO_SETTINGS) {
    this.#settings = settings;
  }

  /** The decisions last taken, in run order. */
  get decided(): readonly FileDecision[] {
    return this.#decided;
  }

  /** The records the decisions were taken on. */
  get records(): ReadonlyMap<string, FileRecord> {
    return this.#records;
  }

  /** `undo`: what it undoes, newest first, as last planned. */
  get undoSteps(): readonly UndoStep[] {
    return this.#undoSteps;
  }

  get strictOrder(): boolean {
    return this.#settings.strictOrder;
  }

  get validateOnMigrate(): boolean {
    return this.#settings.validateOnMigrate;
  }

  /** What `--drift` found last, if it was asked. */
  get drift(): ConnectionDrift | undefined {
    return this.#drift;
  }

  /** The decisions taken (again): they replace the ones before, whole. */
  takeDecisions(decided: readonly FileDecision[]): void {
    this.#decided = decided;
  }

  /** The records the decisions were taken on; `shown`: the report says what each says. */
  takeRecords(records: ReadonlyMap<string, FileRecord>, shown: boolean): void {
    this.#records = records;
    if (shown) this.#shownRecords = records;
  }

  /** `undo`'s plan: its steps, and the decisions that show them. */
  planUndo(steps: readonly UndoStep[], decided: readonly FileDecision[]): void {
    this.#undoSteps = steps;
    this.#decided = decided;
  }

  /** What `--drift` found (again). */
  driftFound(drift: ConnectionDrift): void {
    this.#drift = drift;
  }

  /** What `unlock` did. */
  unlockedWith(outcome: UnlockOutcome): void {
    this.#unlocked = outcome;
  }

  /** What was done with the file at `path`. */
  did(path: string, outcome: FileOutcome): void {
    this.#done.set(path, outcome);
  }

  /** The file at `path` has a record: read before, or written by this run. */
  isRecorded(path: string): boolean {
    return this.#records.has(path) || this.#done.get(path)?.result === "recorded";
  }

  /**
   * A failure rolled back what the run did on the connection (SQLite's run transaction): no file
   * of it is done, whatever it reported; the failed one stays failed.
   */
  rollBack(): void {
    for (const [path, outcome] of this.#done) {
      if (outcome.result !== "failed") this.#done.delete(path);
    }
  }

  /**
   * Counts a run of the callback at `path`; `ms` where it was timed on its own (an each-migrate
   * callback is timed with its file).
   */
  ranCallback(path: string, ms?: number): void {
    const before = this.#callbackRuns.get(path) ?? { runs: 0 };
    const total = ms === undefined ? before.ms : (before.ms ?? 0) + ms;
    this.#callbackRuns.set(path, { runs: before.runs + 1, ...definedFields({ ms: total }) });
  }

  /** What the report says of `decision`, with what was done with it. */
  file(decision: FileDecision): FileReport {
    const outcome = this.#done.get(decision.path);
    if (outcome === undefined) {
      return this.#shownRecords === undefined ? decision : withRun(decision, this.#shownRecords);
    }
    const { alreadyRecorded, result, ms, status, notice, reindex } = outcome;
    let file: FileReport = decision;
    if (alreadyRecorded) {
      // Another runner applied it meanwhile: it is no longer a pending file, late or not.
      const { outOfOrder: _late, ...rest } = decision;
      file = { ...rest, action: "skip" };
    }
    return { ...file, result, ...definedFields({ ms, status, notice, reindex }) };
  }

  /** Each file as the report shows it so far: its decision, and what was done with it. */
  files(): FileReport[] {
    return this.#decided.map((d) => this.file(d));
  }

  /** The applied files as `--drift` reads them. */
  applied(): AppliedFiles {
    return { decided: this.files(), records: this.#records };
  }

  /** The connection's report. */
  report(
    name: string,
    ignored: readonly string[],
    { requests, ms }: { requests: number; ms: number },
  ): ConnectionReport {
    const outcomes = [...this.#done.values()];
    const late = outcomes.filter((o) => o.alreadyRecorded).length;
    const callbacks = this.#callbackReports();
    return {
      name,
      state: "ran",
      files: this.files(),
      ...(ignored.length > 0 ? { ignored: [...ignored] } : {}),
      ...(callbacks.length > 0 ? { callbacks } : {}),
      applied: outcomes.filter((o) => o.ran && !o.alreadyRecorded && o.result !== "undone").length,
      skipped: this.#decided.filter((d) => d.action === "skip").length + late,
      requests,
      ms,
      ...(this.#settings.strictOrder ? { strictOrder: true as const } : {}),
      ...(this.#settings.validateOnMigrate ? { validateOnMigrate: true as const } : {}),
      ...definedFields({
        drift: this.#drift,
        unlocked: this.#unlocked?.unlocked,
        note: this.#unlocked?.note,
      }),
    };
  }

  // The connection's callbacks, with what this run did with each.
  #callbackReports(): CallbackReport[] {
    return this.#settings.callbacks.map((c): CallbackReport => ({
      path: c.path,
      event: c.event,
      ...(c.file === undefined ? { supported: false as const } : {}),
      ...this.#callbackRuns.get(c.path),
    }));
  }
}

// What the file's record says of its run (a renamed file's: the record it takes over), where it
// says anything, and the checksum it holds.
function withRun(file: FileDecision, records: ReadonlyMap<string, FileRecord>): FileReport {
  const record = records.get(file.path) ??
    (file.renamedFrom === undefined ? undefined : records.get(file.renamedFrom));
  if (record === undefined) return file;
  const applied: NonNullable<FileReport["applied"]> = definedFields({
    at: record.executedAt,
    by: record.executedBy,
    runnerVersion: record.runnerVersion,
  });
  return {
    ...file,
    recordChecksum: record.hash,
    ...(Object.keys(applied).length > 0 ? { applied } : {}),
  };
}
