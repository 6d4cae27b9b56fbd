// A promise with its settling functions in hand, for code that settles it from elsewhere (an
// event, a timer, a later step): what `Promise.withResolvers` gives, which Node 20 lacks.

/**
 * A promise and the functions that settle it. `resolve` and `reject` are bound: either may be
 * passed on as a callback. The first call settles the promise; later ones do nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Deferred } from "./deferred.ts";
 *
 * const ready = new Deferred<number>();
 * setTimeout(ready.resolve, 0, 42);
 * assert.equal(await ready.promise, 42);
 * ```
 */
export class Deferred<T = void> {
  /** Settles once `resolve` or `reject` is first called. */
  readonly promise: Promise<T>;
  // Set by the promise's executor, which runs before the constructor returns.
  #resolve: (value: T | PromiseLike<T>) => void = ignore;
  #reject: (reason: unknown) => void = ignore;

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Resolves the promise with `value` (a promise: as it settles). */
  readonly resolve = (value: T | PromiseLike<T>): void => this.#resolve(value);

  /** Rejects the promise with `reason`. */
  readonly reject = (reason: unknown): void => this.#reject(reason);
}

function ignore(): void {}
