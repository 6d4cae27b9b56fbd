// A migration target in memory, for the engine's tests (run_targets_test.ts,
// run_targets_drift_test.ts): no database, no cluster, every call logged.
import type { Applied, FileRecord, MigrationTarget } from "../../src/migrate/driver.ts";
import type { PlannedFile } from "../../src/migrate/plan/planned_file.ts";
import type { UnlockOutcome } from "../../src/migrate/run_report.ts";
import { VERSION } from "../../src/version.ts";
import { runsOnce } from "../../src/migrate/plan/file_decisions.ts";

/**
 * A target that keeps its records in memory and logs every call, so that the engine's order of
 * calls can be checked. Hooks let a test play another runner or a fault.
 */
export class MemoryTarget implements MigrationTarget<PlannedFile> {
  readonly name: string;
  strictOrder = false;
  validateOnMigrate = false;
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
  dropError?: Error;
  closeError?: Error;
  /** Thrown by `readRecords`: a host or database that is not reached. */
  readError?: Error;
  afterApply?: (path: string) => void;

  constructor(name: string) {
    this.name = name;
  }

  readRecords(): Promise<ReadonlyMap<string, FileRecord>> {
    this.calls.push("read");
    this.requests++;
    if (this.readError) return Promise.reject(this.readError);
    return Promise.resolve(
      new Map([...this.records].map(([path, hash]) => [path, { hash, ...this.runs.get(path) }])),
    );
  }

  prepare(): Promise<void> {
    this.calls.push("prepare");
    return Promise.resolve();
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

  apply(file: PlannedFile, executedAt: Date): Promise<Applied> {
    this.calls.push(`apply ${file.path}`);
    this.requests++;
    if (this.failOn?.path === file.path) return Promise.reject(this.failOn.error);
    // Another runner may have recorded it under the file's own lock (SQLite's check): this text,
    // or, for a file that runs once, any.
    const recorded = this.records.get(file.path);
    if (recorded === file.hash || (runsOnce(file) && recorded !== undefined)) {
      return Promise.resolve({ result: "applied", ms: 0, alreadyRecorded: true });
    }
    this.records.set(file.path, file.hash);
    this.#ran(file.path, executedAt);
    this.afterApply?.(file.path);
    return Promise.resolve({ result: "sent", ms: 1, status: 200 });
  }

  record(file: PlannedFile, executedAt: Date): Promise<void> {
    this.calls.push(`record ${file.path}`);
    this.requests++;
    this.records.set(file.path, file.hash);
    this.#ran(file.path, executedAt);
    return Promise.resolve();
  }

  dropRecord(path: string): Promise<void> {
    this.calls.push(`drop ${path}`);
    this.requests++;
    if (this.dropError) return Promise.reject(this.dropError);
    this.records.delete(path);
    this.runs.delete(path);
    return Promise.resolve();
  }

  #ran(path: string, executedAt: Date): void {
    this.runs.set(path, {
      executedAt: executedAt.toISOString(),
      executedBy: this.executedBy,
      runnerVersion: VERSION,
    });
  }

  failure(error: unknown): string | undefined {
    return error instanceof TypeError ? `io: ${error.message}` : undefined;
  }

  close(): Promise<void> {
    this.calls.push("close");
    return this.closeError ? Promise.reject(this.closeError) : Promise.resolve();
  }
}
