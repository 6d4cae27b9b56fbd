import type { MigrationTarget } from "../driver.ts";
import {
  ConnectionFailure,
  isMigrationError,
  MigrationFailure,
  PlanError,
} from "../migration_error.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { ConnectionReport, RunError, RunReport } from "../run_report.ts";
import { runTarget } from "./before_lock.ts";
import type { ConnectionRun } from "./connection_run.ts";
import { connectionRun } from "./target_run.ts";
import type { RunnerOptions, TargetWork } from "./target_work.ts";
import { definedFields } from "../../defined_fields.ts";

export type {
  ConnectionCallback,
  ConnectionSettings,
  PlannedFile,
  RunnerOptions,
  TargetWork,
} from "./target_work.ts";

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
  const targets = new TargetsRun(work, options);
  try {
    await targets.runAll();
  } finally {
    await closeAll(work.map((w) => w.target), targets.error !== undefined);
  }
  return {
    command: options.dryRun && options.command === "migrate" ? "dry-run" : options.command,
    ...(options.dryRun ? { dryRun: true as const } : {}),
    connections: targets.reports,
    ms: Date.now() - started,
    ...definedFields({ error: targets.error }),
  };
}

// One connection's run, the time spent on it, and what is left of it to run under its lock
// (`undo`, which plans every connection first).
interface Timed {
  readonly run: ConnectionRun;
  ms: number;
  rest?: (() => Promise<void>) | undefined;
}

// The targets' runs, in order, with the first failure, which stops them.
class TargetsRun<F extends PlannedFile> {
  readonly #work: readonly TargetWork<F>[];
  readonly #options: RunnerOptions;
  readonly #runs: Timed[] = [];
  readonly #reports: ConnectionReport[] = [];
  #error: RunError | undefined;

  constructor(work: readonly TargetWork<F>[], options: RunnerOptions) {
    this.#work = work;
    this.#options = options;
  }

  /** The first failure, which stopped the run. */
  get error(): RunError | undefined {
    return this.#error;
  }

  /** Each connection's report, in order, so far. */
  get reports(): ConnectionReport[] {
    return this.#reports;
  }

  /**
   * Runs every target. `undo` plans (and refuses) every connection before it runs any: a plan
   * refused on one connection must leave the others as they were, not undone above a version no
   * checkout left.
   */
  async runAll(): Promise<void> {
    const planFirst = this.#options.command === "undo";
    for (let i = 0; i < this.#work.length && !this.#options.signal?.aborted; i++) {
      const timed: Timed = { run: connectionRun(this.#work[i], this.#options), ms: 0 };
      this.#runs[i] = timed;
      await this.#timed(i, async () => {
        const rest = await runTarget(this.#work[i], timed.run, this.#options);
        if (planFirst) timed.rest = rest;
        else await rest?.();
      });
      if (!planFirst) this.#report(i);
      if (this.#error !== undefined) break;
    }
    if (planFirst) await this.#runPlanned();
  }

  // `undo`, once every connection is planned: what is left of each, in order, until one fails.
  async #runPlanned(): Promise<void> {
    for (let i = 0; i < this.#runs.length; i++) {
      const rest = this.#runs[i].rest;
      if (this.#error === undefined && rest !== undefined && !this.#options.signal?.aborted) {
        await this.#timed(i, rest);
      }
      this.#report(i);
    }
  }

  // Runs a step of target `i`, timed; its failure is the run's.
  async #timed(i: number, step: () => Promise<void>): Promise<void> {
    const at = Date.now();
    try {
      await step();
    } catch (thrown) {
      this.#error = runError(thrown, this.#work[i].target, this.#options.signal);
    } finally {
      this.#runs[i].ms += Date.now() - at;
    }
  }

  #report(i: number): void {
    const { target, ignored = [] } = this.#work[i];
    const { run, ms } = this.#runs[i];
    const requests = this.#options.requests?.of(target.name) ?? 0;
    this.#reports.push(run.report(target.name, ignored, { requests, ms }));
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
      ...definedFields({ file: error.file }),
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
