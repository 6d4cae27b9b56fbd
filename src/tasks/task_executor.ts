// One executor of `@Async` runs: at most `maxSize` at once, at most `queueCapacity` waiting, in
// the order they came. A run starts on a task of its own, never in the caller's stack, and
// outside the caller's bindings (its transaction): `leave` says how.
import { AsyncLocalStorage } from "node:async_hooks";
import { TaskRejectedError } from "./task_rejected_error.ts";

/** The bounds of one executor: `thaw.task.execution.pool.*`, or a named one's. */
export interface ExecutorBounds {
  /** Runs at once. */
  readonly maxSize: number;
  /** Runs waiting for a slot; one more is refused. */
  readonly queueCapacity: number;
}

/** What an executor counted since it was made (Spring's `executor.*` meters). */
export interface ExecutorCounts {
  readonly active: number;
  readonly queued: number;
  readonly completed: number;
  readonly rejected: number;
}

/** What a close gave up on once its period ended. */
export interface LeftAtClose {
  /** Queued runs dropped, never started: their calls reject with `TaskRejectedError`. */
  readonly dropped: number;
  /** Runs still running, abandoned: nothing can stop them, and they may still finish. */
  readonly abandoned: number;
}

interface Waiting {
  readonly start: () => void;
  readonly drop: (error: Error) => void;
}

/** Runs functions apart from their callers, within bounds. */
export class TaskExecutor {
  readonly name: string;
  readonly bounds: ExecutorBounds;
  readonly #leave: <T>(fn: () => T) => T;
  readonly #queue: Waiting[] = [];
  #active = 0;
  #completed = 0;
  #rejected = 0;
  #closed = false;
  /** Queued runs the close dropped, never started. */
  dropped = 0;
  /** Runs still running when the close gave up on them. */
  abandoned = 0;
  // Resolved each time a run ends, for the close that waits on them.
  #idle: (() => void) | undefined;

  constructor(name: string, bounds: ExecutorBounds, leave: <T>(fn: () => T) => T) {
    this.name = name;
    this.bounds = bounds;
    this.#leave = leave;
  }

  /** What it counted so far. */
  get counts(): ExecutorCounts {
    return {
      active: this.#active,
      queued: this.#queue.length,
      completed: this.#completed,
      rejected: this.#rejected,
    };
  }

  /**
   * Runs `run` once a slot is free, on a task of its own: the promise of its result, or a
   * `TaskRejectedError` (and `run` never runs) when the queue is full or the executor closed.
   */
  submit<T>(run: () => T | Promise<T>): Promise<T> {
    if (this.#closed) return this.#refuse("the application is closing");
    const { maxSize, queueCapacity } = this.bounds;
    if (this.#active >= maxSize && this.#queue.length >= queueCapacity) {
      return this.#refuse(
        `its ${maxSize} runs (max-size) are busy and its queue of ${queueCapacity} ` +
          "(queue-capacity) is full",
      );
    }
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.#active++;
        // Once the caller's stack has unwound (a microtask: a timer's task would cost each run a
        // millisecond or more, where runtimes clamp it), in the async context it was queued in,
        // and outside its bindings.
        queueMicrotask(() =>
          this.#leave(() => {
            let result: Promise<T>;
            try {
              result = Promise.resolve(run());
            } catch (error) {
              result = Promise.reject(error);
            }
            result.then(resolve, reject).finally(() => this.#ended());
          })
        );
      };
      if (this.#active < maxSize) {
        start();
        return;
      }
      // Started by the run whose end frees a slot, so in that run's async context (its caller,
      // seen by the security context, its trace) unless put back in the caller's.
      const inCaller = AsyncLocalStorage.snapshot();
      this.#queue.push({ start: () => inCaller(start), drop: reject });
    });
  }

  /**
   * Stops taking runs, lets those running and queued finish for `awaitMs`, then gives up on the
   * rest: the queued ones are dropped (they reject with `TaskRejectedError`), the running ones
   * abandoned (a promise cannot be stopped: they go on, and may still settle their calls).
   */
  async shutdown(awaitMs: number): Promise<LeftAtClose> {
    this.#closed = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const period = new Promise<void>((resolve) => timer = setTimeout(resolve, awaitMs));
    try {
      while (this.#active + this.#queue.length > 0) {
        const ended = new Promise<void>((resolve) => this.#idle = resolve);
        if (await Promise.race([ended.then(() => false), period.then(() => true)])) break;
      }
    } finally {
      clearTimeout(timer);
      this.#idle = undefined;
    }
    const left = { dropped: this.#queue.length, abandoned: this.#active };
    this.dropped += left.dropped;
    this.abandoned += left.abandoned;
    for (const waiting of this.#queue.splice(0)) {
      waiting.drop(new TaskRejectedError(this.name, "dropped at close, never started", true));
    }
    return left;
  }

  #ended(): void {
    this.#active--;
    this.#completed++;
    this.#queue.shift()?.start();
    this.#idle?.();
  }

  #refuse<T>(why: string): Promise<T> {
    this.#rejected++;
    return Promise.reject(new TaskRejectedError(this.name, why));
  }
}
