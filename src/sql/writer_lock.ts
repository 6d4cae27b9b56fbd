// One writer at a time among the handles of a SQLite pool, waited for without blocking the
// thread. SQLite's own wait for a write lock (its busy timeout) is a sleep of the whole thread
// with node:sqlite and bun:sqlite: the handle that holds the lock, in the same thread, could not
// go on to commit, and both would stall until the timeout.

/** A lock that callers take in turn, the first to ask first. */
export class WriterLock {
  #held = false;
  readonly #queue: (() => void)[] = [];

  /** Resolves once the caller holds the lock; rejects with `timedOut()` after `ms`. */
  acquire(ms: number, timedOut: () => Error): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#queue.splice(this.#queue.indexOf(grant), 1);
        reject(timedOut());
      }, ms);
      this.#queue.push(grant);
    });
  }

  /** Hands the lock to the next caller waiting, if any. */
  release(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#held = false;
    else next();
  }
}
