// The worker of one queue in one process: takes due jobs while it has room for them, runs each with
// its handler, and writes how it ended. It is woken by an enqueue this process sees commit, by a
// run ending, and otherwise looks again every poll interval (another process's enqueues, a delay
// coming due, a lease running out). A store that cannot be read is tried again after a growing wait.
import type { ContextLogger } from "../context/class_record.ts";
import { runDetached } from "../events/detached_run.ts";
import { Backoff } from "../runtime/backoff.ts";
import type { FoundHandler } from "./job_handler.ts";
import { runJob } from "./job_run.ts";
import type { JobStore, TakenJob } from "./job_store.ts";
import type { JobsTelemetry } from "./jobs_telemetry.ts";
import { type NextStep, nextStep } from "./run_outcome.ts";

// How long the loop goes on without giving timers and I/O a turn.
const YIELD_AFTER_MS = 10;

// The waits after the store failed to answer, in a row.
const STORE_BACKOFF = new Backoff({ delay: 500, multiplier: 2, maxDelay: 30_000, jitter: 250 });

/** One run in progress. */
interface Running {
  readonly controller: AbortController;
  readonly ended: Promise<void>;
}

/** How a worker waits and what it is given. */
export interface WorkerSettings {
  /** How often it looks for due jobs nobody woke it for, in ms. */
  readonly pollMs: number;
  readonly logger: ContextLogger;
  /** Where the app has OpenTelemetry's API: each run's span and metrics. */
  readonly telemetry?: JobsTelemetry | undefined;
}

/** The worker of one `@JobHandler`'s queue. */
export class JobWorker {
  readonly #store: JobStore;
  readonly #handler: FoundHandler;
  readonly #settings: WorkerSettings;
  // Each run, not each job: a run that outlived its lease may run beside its job's next run.
  readonly #running = new Set<Running>();
  #open = false;
  #closing = false;
  // Once the close's wait ended: what still runs writes its end once, not again, and a wait to
  // write it again ends (`#closedNow`), so that no timer outlives the close.
  #closed = false;
  readonly #closedNow = new AbortController();
  // Aborted as the close begins: a take that waits for jobs to come (SQS) ends then.
  readonly #stopTaking = new AbortController();
  // Set by a wake that came while the worker was busy, so that its next wait does not begin;
  // the wait that sees it clears it.
  #woken = false;
  // The wait under way: a wake ends it when it is one a wake may end; a close ends any.
  #waiting: { readonly resolve: () => void; readonly wakeable: boolean } | undefined;
  #loop: Promise<void> | undefined;

  constructor(store: JobStore, handler: FoundHandler, settings: WorkerSettings) {
    this.#store = store;
    this.#handler = handler;
    this.#settings = settings;
  }

  /** The queue it runs. */
  get queue(): string {
    return this.#handler.queue;
  }

  /** How many runs are in progress. */
  get running(): number {
    return this.#running.size;
  }

  /** Starts taking jobs; a second call does nothing, nor does one after a close. */
  start(): void {
    if (this.#open || this.#closing) return;
    this.#open = true;
    this.#loop = runDetached(() => this.#run());
  }

  /** Looks for due jobs now, rather than at the end of its wait. */
  wake(): void {
    this.#woken = true;
    if (this.#waiting?.wakeable) this.#waiting.resolve();
  }

  /**
   * Stops taking jobs and aborts the signals of those running; resolves, once they ended or
   * `timeoutMs` passed, how many still run (their jobs are taken again once their lease ends).
   * A run that ends because of the close is given back untried: it runs again, never lost.
   */
  async close(timeoutMs: number): Promise<number> {
    this.#closing = true;
    this.#open = false;
    this.#stopTaking.abort();
    this.#waiting?.resolve();
    for (const { controller } of this.#running) {
      controller.abort(
        new Error(`the app is closing: the job is given back to queue "${this.queue}"`),
      );
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      (async () => {
        // A take in flight may still hand over jobs: they are given back, and waited for too.
        await this.#loop;
        await Promise.all([...this.#running].map(({ ended }) => ended));
      })(),
      new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs)),
    ]);
    clearTimeout(timer);
    this.#closed = true;
    this.#closedNow.abort();
    return this.#running.size;
  }

  async #run(): Promise<void> {
    const { concurrency, attempts, timeoutMs } = this.#handler.settings;
    let failures = 0;
    let turned = performance.now();
    while (this.#open) {
      // A meter provider registered after the start is followed: the gauges are collected then.
      this.#settings.telemetry?.follow();
      // SQLite answers with promises already settled: a backlog would chain takes, runs and ends
      // in microtasks alone, and no timer or socket would be served until it drained.
      if (performance.now() - turned > YIELD_AFTER_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        turned = performance.now();
        if (!this.#open) break;
      }
      const room = concurrency - this.#running.size;
      let full = false;
      if (room > 0) {
        this.#woken = false;
        try {
          await this.#store.reclaim(this.queue, attempts);
          // A close that began meanwhile takes nothing only to give it back.
          if (!this.#open) break;
          const jobs = await this.#store.take(
            this.queue,
            room,
            timeoutMs,
            this.#stopTaking.signal,
          );
          failures = 0;
          for (const job of jobs) this.#begin(job);
          // As many as it had room for (or a take gives): more may be due.
          full = jobs.length === Math.min(room, this.#store.takeLimit ?? room);
        } catch (error) {
          failures++;
          if (failures === 1 || failures % 20 === 0) {
            this.#settings.logger.error(
              `@JobHandler("${this.queue}") (${this.#handler.where}): could not take jobs ` +
                `(${failures} time${failures === 1 ? "" : "s"} in a row); trying again`,
              error,
            );
          }
          // Not cut short by a wake: a store that failed is given its wait.
          await this.#wait(STORE_BACKOFF.delayOf(failures), false);
          continue;
        }
      }
      if (full && this.#running.size < concurrency) continue;
      // Only a wait its timer ended gave timers their turn: a wake ends one in a microtask.
      if (await this.#wait(this.#settings.pollMs, true)) turned = performance.now();
    }
  }

  // Waits `ms`, unless closed meanwhile, or woken when `wakeable` (a wake while it was busy
  // included, which it then clears: a wake ends one wait, never every one after it). Resolves
  // whether its timer ended it.
  async #wait(ms: number, wakeable: boolean): Promise<boolean> {
    if (!this.#open) return false;
    if (wakeable && this.#woken) {
      this.#woken = false;
      return false;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = await new Promise<boolean>((resolve) => {
      this.#waiting = { resolve: () => resolve(false), wakeable };
      timer = setTimeout(() => resolve(true), ms);
    });
    clearTimeout(timer);
    this.#waiting = undefined;
    return timedOut;
  }

  #begin(job: TakenJob): void {
    const controller = new AbortController();
    // Measured once taken: the database's lease began a little before.
    const leaseEnds = performance.now() + this.#handler.settings.timeoutMs;
    const running: { controller: AbortController; ended: Promise<void> } = {
      controller,
      ended: Promise.resolve(),
    };
    running.ended = runDetached(() => this.#runJob(job, controller, leaseEnds))
      .catch((error) =>
        this.#settings.logger.error(
          `@JobHandler("${this.queue}") (${this.#handler.where}): job ${job.id}'s run failed ` +
            "outside its handler; it is taken again once its lease ends",
          error,
        )
      )
      .finally(() => {
        this.#running.delete(running);
        this.wake();
      });
    this.#running.add(running);
  }

  async #runJob(job: TakenJob, controller: AbortController, leaseEnds: number): Promise<void> {
    const { settings, where } = this.#handler;
    const { logger } = this.#settings;
    const { end, error, thrown, observed } = await runJob(this.#handler, job, {
      controller,
      telemetry: this.#settings.telemetry,
      closing: () => this.#closing,
    });
    const step = nextStep(end, job.attempt, job.attempts ?? settings.attempts, settings.backoff);
    let held = false;
    try {
      held = await this.#recorded(job, step, error, leaseEnds);
      if (!held) {
        (logger.warn ?? logger.error).call(
          logger,
          `@JobHandler("${this.queue}") (${where}): job ${job.id} ran past its lease and was ` +
            "taken again: this run's end was not recorded, and the job may run twice",
        );
      } else if (step.state === "dead") {
        logger.error(
          `@JobHandler("${this.queue}") (${where}): job ${job.id} is dead after run ` +
            `${job.attempt}: ${error}`,
        );
      }
    } catch (failure) {
      logger.error(
        `@JobHandler("${this.queue}") (${where}): could not record how job ${job.id} ended ` +
          `(${step.state}); it is taken again once its lease ends`,
        failure,
      );
    }
    observed?.end(end, held && step.state === "dead", thrown);
  }

  // Records how the run ended, trying again while the lease lasts: an end not recorded is a run
  // done again by whoever takes the job next. The last failure rejects.
  async #recorded(
    job: TakenJob,
    step: NextStep,
    error: string | undefined,
    leaseEnds: number,
  ): Promise<boolean> {
    for (let tries = 1;; tries++) {
      try {
        return await this.#store.finish(job, step, error);
      } catch (failure) {
        const wait = STORE_BACKOFF.delayOf(tries);
        if (this.#closed || performance.now() + wait >= leaseEnds) throw failure;
        await new Promise<void>((resolve) => {
          const closed = () => {
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(() => {
            this.#closedNow.signal.removeEventListener("abort", closed);
            resolve();
          }, wait);
          this.#closedNow.signal.addEventListener("abort", closed, { once: true });
        });
        if (this.#closed) throw failure;
      }
    }
  }
}
