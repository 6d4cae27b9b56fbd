// A migration target in memory, for the engine's tests (run_targets_test.ts,
// run_targets_drift_test.ts): no database, no cluster, every call logged.
import type { Applied, MigrationTarget } from "../../src/migrate/driver.ts";
import type { PlannedFile } from "../../src/migrate/plan/planned_file.ts";
import type { UnlockOutcome } from "../../src/migrate/run_report.ts";

/**
 * A target that keeps its records in memory and logs every call, so that the engine's order of
 * calls can be checked. Hooks let a test play another runner or a fault.
 */
export class MemoryTarget implements MigrationTarget<PlannedFile> {
  readonly name: string;
  strictOrder = false;
  requests = 0;
  readonly records = new Map<string, string>();
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

  readRecords(): Promise<ReadonlyMap<string, string>> {
    this.calls.push("read");
    this.requests++;
    if (this.readError) return Promise.reject(this.readError);
    return Promise.resolve(new Map(this.records));
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

  apply(file: PlannedFile): Promise<Applied> {
    this.calls.push(`apply ${file.path}`);
    this.requests++;
    if (this.failOn?.path === file.path) return Promise.reject(this.failOn.error);
    // Another runner may have recorded it under the file's own lock (the SQL targets' check).
    if (this.records.get(file.path) === file.hash) {
      return Promise.resolve({ result: "applied", ms: 0, alreadyRecorded: true });
    }
    this.records.set(file.path, file.hash);
    this.afterApply?.(file.path);
    return Promise.resolve({ result: "sent", ms: 1, status: 200 });
  }

  record(file: PlannedFile): Promise<void> {
    this.calls.push(`record ${file.path}`);
    this.requests++;
    this.records.set(file.path, file.hash);
    return Promise.resolve();
  }

  dropRecord(path: string): Promise<void> {
    this.calls.push(`drop ${path}`);
    this.requests++;
    if (this.dropError) return Promise.reject(this.dropError);
    this.records.delete(path);
    return Promise.resolve();
  }

  failure(error: unknown): string | undefined {
    return error instanceof TypeError ? `io: ${error.message}` : undefined;
  }

  close(): Promise<void> {
    this.calls.push("close");
    return this.closeError ? Promise.reject(this.closeError) : Promise.resolve();
  }
}
