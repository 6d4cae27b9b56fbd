/**
 * Bounds the password checks (PBKDF2 derivations) that run at once. Each takes a core for tens of
 * milliseconds by design, so a flood of HTTP Basic requests with wrong passwords, which anyone can
 * send, would otherwise take every core from the app's other routes. Checks past the bound wait
 * in a queue of their own, in order; past the queue's length a check is not run at all, and its
 * request is answered at once (503) rather than left to wait behind the flood.
 *
 * @module
 */

/**
 * Runs password checks, at most `parallel` at once and `waiting` more queued.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PasswordCheckQueue } from "./password_check_queue.ts";
 *
 * const queue = new PasswordCheckQueue(1, 1);
 * let release: (value: string) => void = () => {};
 * const held = new Promise<string>((resolve) => release = resolve);
 * const first = queue.run(() => held);
 * const second = queue.run(() => Promise.resolve("second"));
 * assert.equal(queue.run(() => Promise.resolve("third")), undefined, "the queue is full");
 * release("first");
 * assert.deepEqual(await Promise.all([first, second]), ["first", "second"]);
 * ```
 */
export class PasswordCheckQueue {
  readonly #parallel: number;
  readonly #capacity: number;
  // The checks waiting for a place, in the order they came.
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  /** A queue running `parallel` checks at once (1 or more), with `waiting` places (0 or more). */
  constructor(parallel: number, waiting: number) {
    if (!Number.isSafeInteger(parallel) || parallel < 1) {
      throw new RangeError(`PasswordCheckQueue: parallel must be 1 or more, got ${parallel}`);
    }
    if (!Number.isSafeInteger(waiting) || waiting < 0) {
      throw new RangeError(`PasswordCheckQueue: waiting must be 0 or more, got ${waiting}`);
    }
    this.#parallel = parallel;
    this.#capacity = waiting;
  }

  /** Runs `check` once a place is free; `undefined` at once, `check` not run, when all are taken. */
  run<T>(check: () => Promise<T>): Promise<T> | undefined {
    if (this.#running >= this.#parallel && this.#waiting.length >= this.#capacity) return undefined;
    return this.#enter().then(check).finally(() => this.#leave());
  }

  #enter(): Promise<void> {
    if (this.#running < this.#parallel) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.#waiting.push(() => {
        this.#running++;
        resolve();
      })
    );
  }

  #leave(): void {
    this.#running--;
    this.#waiting.shift()?.();
  }
}

/**
 * The checks a Basic authenticator runs at once by default: one fewer than the cores (at least
 * one), so that a flood of wrong passwords leaves a core to the event loop.
 */
export function defaultParallelChecks(): number {
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: unknown } }).navigator
    ?.hardwareConcurrency;
  return typeof cores === "number" && Number.isSafeInteger(cores) ? Math.max(1, cores - 1) : 1;
}
