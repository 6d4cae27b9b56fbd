import type { Clock, Timer } from "../runtime/clock.ts";
import type { HeldLock } from "../tasks/lock_manager.ts";

/**
 * What a wait on the LockManager ends with when the scheduler stops. A symbol, not an Error:
 * creating one would be code a bundler keeps in every app, scheduled or not.
 */
export const STOPPED: unique symbol = Symbol("the scheduler stopped");

/**
 * The scheduler's waits on its LockManager, each bounded: a store that never answers must not
 * hold a job for ever, nor, once the scheduler stops, keep the process alive with a timer.
 */
export class LockWaits {
  readonly #clock: Clock;
  // The waits in progress, by what ends each.
  readonly #ends = new Set<() => void>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * `promise`, or a rejection once `ms` have passed without an answer, or once {@linkcode stop}
   * is called (with {@linkcode STOPPED}, which is not logged).
   */
  within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: Timer | undefined;
    let reject: (reason: unknown) => void = () => {};
    const waited = Promise.race([
      promise,
      new Promise<never>((_, rejectWait) => {
        timer = this.#clock.after(
          ms,
          () => rejectWait(new Error(`the LockManager did not ${what} it within ${ms} ms`)),
          { keepAlive: true },
        );
        reject = rejectWait;
      }),
    ]);
    const end = () => {
      timer?.cancel();
      reject(STOPPED);
    };
    this.#ends.add(end);
    return waited.finally(() => {
      timer?.cancel();
      this.#ends.delete(end);
    });
  }

  /** Ends every wait in progress with {@linkcode STOPPED}. */
  stop(): void {
    for (const end of [...this.#ends]) end();
  }
}

/**
 * Releases a lock taken after its taker gave up waiting (or the scheduler stopped): else no
 * replica could run the job until the lock's end, counted from its late taking.
 */
export function releaseLate(taking: Promise<HeldLock | undefined>): void {
  taking.then((late) => late?.release?.()).catch(() => {});
}
