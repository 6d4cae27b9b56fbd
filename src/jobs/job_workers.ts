// The workers of one app, one per `@JobHandler` queue, and the pruning of old done jobs: started
// with the app, woken by the enqueues this process sees commit, closed before the beans stop.
import type { ContextLogger } from "../context/class_record.ts";
import type { JobStore } from "./job_store.ts";
import type { JobWorker } from "./job_worker.ts";

// Done jobs are pruned this often, or as often as the retention if shorter, but not more than
// once a second.
const PRUNE_EVERY_MS = 60_000;
const PRUNE_AT_MOST_EVERY_MS = 1000;

/** The app's workers. */
export class JobWorkers {
  readonly #byQueue = new Map<string, JobWorker>();
  #store: JobStore | undefined;
  #retentionMs = 0;
  #logger: ContextLogger;
  #pruner: ReturnType<typeof setInterval> | undefined;
  #started = false;

  constructor(logger: ContextLogger) {
    this.#logger = logger;
  }

  /** What `jobs()` hands it once the beans are made: the store and a worker per handler. */
  attach(store: JobStore, retentionMs: number, workers: readonly JobWorker[]): void {
    this.#store = store;
    this.#retentionMs = retentionMs;
    for (const worker of workers) this.#byQueue.set(worker.queue, worker);
  }

  /** A job of `queue` can be taken: its worker in this process looks now (every worker: none given). */
  readonly wake = (queue?: string): void => {
    if (queue === undefined) { for (const worker of this.#byQueue.values()) worker.wake(); }
    else this.#byQueue.get(queue)?.wake();
  };

  /** Starts every worker and the pruning; a second call does nothing. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const worker of this.#byQueue.values()) worker.start();
    const store = this.#store;
    if (store === undefined || this.#retentionMs === 0 || this.#byQueue.size === 0) return;
    this.#pruner = setInterval(() => {
      store.prune(this.#retentionMs).catch((error) =>
        this.#logger.error("jobs: could not delete the done jobs past jobs.retention", error)
      );
    }, Math.max(PRUNE_AT_MOST_EVERY_MS, Math.min(PRUNE_EVERY_MS, this.#retentionMs)));
    // A pruning due is no reason to keep a process that has nothing else to do alive.
    (this.#pruner as { unref?: () => void }).unref?.();
  }

  /**
   * Stops taking jobs; the running ones have their signal aborted and `timeoutMs` to end. Logs
   * how many still ran then: their jobs are taken again once their lease ends.
   */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.#pruner);
    const left = await Promise.all(
      [...this.#byQueue.values()].map(async (w) => [w.queue, await w.close(timeoutMs)] as const),
    );
    for (const [queue, running] of left) {
      if (running === 0) continue;
      (this.#logger.warn ?? this.#logger.error).call(
        this.#logger,
        `@JobHandler("${queue}"): ${running} run${running === 1 ? "" : "s"} still going ` +
          `${timeoutMs} ms after the close began (server.shutdown-timeout); ` +
          `${running === 1 ? "its job is" : "their jobs are"} taken again once the lease ends`,
      );
    }
  }
}
