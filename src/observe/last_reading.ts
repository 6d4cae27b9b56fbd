// A figure read for a gauge at each collection (a consumer group's lag, an outbox's backlog) from
// a source that may be slow or gone: one read at a time, and a collection that waits for it a
// bounded time, answering the last figure a read finished with.

/** The last value a read finished with; reads one at a time, each waited for a bounded time. */
export class LastReading<T> {
  readonly #timeoutMs: number;
  #last: T;
  #pending: Promise<void> | undefined;

  /** `initial` is the answer until a read finished; each waits `timeoutMs` at most. */
  constructor(initial: T, timeoutMs: number) {
    this.#last = initial;
    this.#timeoutMs = timeoutMs;
  }

  /** Whether a read is under way: the next {@linkcode LastReading.value} waits for it. */
  get underway(): boolean {
    return this.#pending !== undefined;
  }

  /**
   * Starts `read` unless a read is under way, then waits for the read under way for the time
   * given at most: answers the value of the last read that finished by then. A read that fails
   * leaves the last value (a broker that is gone: its health component says it is down).
   */
  async value(read: () => Promise<T>): Promise<T> {
    if (this.#pending === undefined) {
      this.#pending = read().then(
        (value) => {
          this.#last = value;
        },
        () => {},
      ).finally(() => {
        this.#pending = undefined;
      });
    }
    await within(this.#pending, this.#timeoutMs);
    return this.#last;
  }
}

// Resolves when `promise` settles or `ms` passed, whichever comes first; the timer cleared.
function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
