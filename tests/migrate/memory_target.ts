// A migration target in memory, for the engine's tests (run/run_targets_test.ts,
// run/run_targets_drift_test.ts): no database, no cluster, every call logged.
import {
  type Applied,
  type ApplyAlso,
  type CallbackRun,
  type FileRecord,
  type MigrationTarget,
  TargetIo,
} from "../../src/migrate/driver.ts";
import type { RequestCounter } from "../../src/migrate/request_counter.ts";
import {
  type RunnerOptions,
  runTargets,
  type TargetWork,
} from "../../src/migrate/run/run_targets.ts";
import type { PlannedFile } from "../../src/migrate/plan/planned_file.ts";
import type {
  EachFileCallbacks,
  PlannedCallback,
} from "../../src/migrate/plan/planned_callback.ts";
import type { RunReport, UnlockOutcome } from "../../src/migrate/run_report.ts";
import { VERSION } from "../../src/version.ts";
import { runsOnce } from "../../src/migrate/plan/file_decisions.ts";
import { downRecordPath } from "../../src/migrate/plan/undo_name.ts";

/**
 * A target that keeps its records in memory and logs every call, so that the engine's order of
 * calls can be checked. Hooks let a test play another runner or a fault.
 */
export class MemoryTarget implements MigrationTarget<PlannedFile> {
  readonly name: string;
  /** Its connection's `migrations.strict_order`, as {@linkcode runMemoryTargets} passes it. */
  strictOrder = false;
  /** Its connection's `migrations.flyway_compatible`, as {@linkcode runMemoryTargets} passes it. */
  validateOnMigrate = false;
  /** Calls that stand for a request, counted in the run's counter too. */
  requests = 0;
  readonly records = new Map<string, string>();
  /**
   * What each record says of its run, beside its checksum in `records`: written by `apply` and
   * `record`; a record set in `records` alone says nothing of its run.
   */
  readonly runs = new Map<string, Omit<FileRecord, "hash">>();
  /** Who this target's records name as their writer. */
  executedBy = "tester@memory";
  readonly calls: string[] = [];
  /** Runs while this target waits for its lock (another runner records files meanwhile). */
  whileLocking?: () => void;
  failOn?: { path: string; error: Error };
  lockError?: Error;
  releaseError?: Error;
  dropError?: Error | undefined;
  closeError?: Error;
  /** Thrown by `readRecords`: a host or database that is not reached. */
  readError?: Error;
  afterApply?: (path: string) => void;

  readonly #io: TargetIo;

  /**
   * @param requests where its requests are counted (a run's); none by default. A `TypeError`
   * stands for its driver's own I/O error.
   */
  constructor(name: string, requests: RequestCounter = { count() {} }) {
    this.name = name;
    this.#io = new TargetIo(
      name,
      () => this.requests,
      requests,
      (error): error is TypeError => error instanceof TypeError,
    );
  }

  readRecords(): Promise<ReadonlyMap<string, FileRecord>> {
    return this.#io.run(() => {
      this.calls.push("read");
      this.requests++;
      if (this.readError) return Promise.reject(this.readError);
      return Promise.resolve(
        new Map([...this.records].map(([path, hash]) => [path, { hash, ...this.runs.get(path) }])),
      );
    });
  }

  lock(): Promise<void> {
    this.calls.push("lock");
    this.whileLocking?.();
    return this.lockError ? Promise.reject(this.lockError) : Promise.resolve();
  }

  release(): Promise<void> {
    this.calls.push("release");
    return this.releaseError ? Promise.reject(this.releaseError) : Promise.resolve();
  }

  unlock(): Promise<UnlockOutcome> {
    this.calls.push("unlock");
    return Promise.resolve({ unlocked: "nothing" });
  }

  apply(file: PlannedFile, executedAt: Date, also: ApplyAlso<PlannedFile> = {}): Promise<Applied> {
    const { around, undoRecords = [] } = also;
    return this.#io.run(async () => {
      // Logged as the target runs them: inside the file's work, before and after it.
      for (const c of around?.before ?? []) await this.#callback(c);
      const applied = await this.#apply(file, executedAt, undoRecords);
      for (const c of around?.after ?? []) await this.#callback(c);
      return applied;
    });
  }

  undo(
    file: PlannedFile,
    undo: PlannedFile | "down",
    executedAt: Date,
    around?: EachFileCallbacks<PlannedFile>,
  ): Promise<Applied> {
    return this.#io.run(async () => {
      for (const c of around?.before ?? []) await this.#callback(c);
      const record = undo === "down" ? { path: downRecordPath(file.path), hash: file.hash } : undo;
      this.calls.push(`undo ${file.path} with ${undo === "down" ? "down" : undo.path}`);
      this.requests++;
      if (this.failOn?.path === record.path) throw this.failOn.error;
      // Another runner may have undone it first, under the file's own lock.
      if (this.records.has(record.path)) return { result: "undone", ms: 0, alreadyRecorded: true };
      this.records.set(record.path, record.hash);
      this.#ran(record.path, executedAt);
      for (const c of around?.after ?? []) await this.#callback(c);
      return { result: "undone", ms: 1 };
    });
  }

  /** Callbacks that fail when run, by path. */
  failingCallbacks = new Map<string, Error>();

  runCallback(callback: PlannedCallback<PlannedFile>): Promise<CallbackRun> {
    return this.#io.run(() => this.#callback(callback));
  }

  #callback(callback: PlannedCallback<PlannedFile>): Promise<CallbackRun> {
    this.calls.push(`callback ${callback.path} (${callback.event})`);
    this.requests++;
    const error = this.failingCallbacks.get(callback.path);
    return error ? Promise.reject(error) : Promise.resolve({ ms: 1 });
  }

  #apply(file: PlannedFile, executedAt: Date, undoRecords: readonly string[]): Promise<Applied> {
    this.calls.push(`apply ${file.path}`);
    this.requests++;
    if (this.failOn?.path === file.path) return Promise.reject(this.failOn.error);
    // Another runner may have recorded it under the file's own lock (SQLite's check): this text,
    // or, for a file that runs once, any; a version undone, while one of its undo records is left.
    const recorded = this.records.get(file.path);
    if (
      undoRecords.length > 0
        ? !undoRecords.some((path) => this.records.has(path))
        : recorded === file.hash || (runsOnce(file) && recorded !== undefined)
    ) {
      return Promise.resolve({ result: "applied", ms: 0, alreadyRecorded: true });
    }
    for (const path of undoRecords) {
      this.records.delete(path);
      this.runs.delete(path);
    }
    this.records.set(file.path, file.hash);
    this.#ran(file.path, executedAt);
    this.afterApply?.(file.path);
    return Promise.resolve({ result: "sent", ms: 1, status: 200 });
  }

  record(file: PlannedFile, executedAt: Date): Promise<void> {
    return this.#io.run(() => {
      this.calls.push(`record ${file.path}`);
      this.requests++;
      this.records.set(file.path, file.hash);
      this.#ran(file.path, executedAt);
      return Promise.resolve();
    });
  }

  dropRecord(path: string): Promise<void> {
    return this.#io.run(() => {
      this.calls.push(`drop ${path}`);
      this.requests++;
      if (this.dropError) return Promise.reject(this.dropError);
      this.records.delete(path);
      this.runs.delete(path);
      return Promise.resolve();
    });
  }

  #ran(path: string, executedAt: Date): void {
    this.runs.set(path, {
      executedAt: executedAt.toISOString(),
      executedBy: this.executedBy,
      runnerVersion: VERSION,
    });
  }

  close(): Promise<void> {
    this.calls.push("close");
    return this.closeError ? Promise.reject(this.closeError) : Promise.resolve();
  }
}

/**
 * {@linkcode runTargets} on memory targets as the engine calls it: each target's `strictOrder` and
 * `validateOnMigrate` as its connection's settings, its `requests` as the run's count.
 */
export function runMemoryTargets(
  work: readonly (TargetWork<PlannedFile> & { readonly target: MemoryTarget })[],
  options: RunnerOptions,
): Promise<RunReport> {
  return runTargets(work.map((w) => ({ settings: w.target, ...w })), {
    requests: {
      of: (name) =>
        work.filter((w) => w.target.name === name).reduce((n, w) => n + w.target.requests, 0),
    },
    ...options,
  });
}
