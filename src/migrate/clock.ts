/**
 * Where a runner's time comes from: what time it is, a wait, and a timer for work in the
 * background. {@linkcode systemClock} reads the real clock and is everyone's default; a test gives
 * a clock of its own, so that a lock's lease (minutes in production) runs in virtual time, without
 * waiting for it.
 *
 * @module
 */

/** A timer set with {@linkcode Clock.after}. */
export interface Timer {
  /** Stops the timer: its task does not run. Nothing happens once it ran, or a second time. */
  cancel(): void;
}

/** The time, waits and background timers of a runner (a lock's poll and its lease). */
export interface Clock {
  /** The time, in milliseconds since the epoch, as `Date.now()` gives it. */
  now(): number;
  /**
   * Resolves once `ms` have passed (0 or less: at the next turn). When `signal` aborts, it rejects
   * with the signal's reason at once, and at once when it already has.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Runs `task` once, `ms` from now, unless the timer is cancelled first: work in the background
   * (a lease's renewal), which never keeps the process alive on its own. The clock does not wait
   * for a promise `task` returns, which must not reject; a test's clock may wait for it before
   * time moves on.
   */
  after(ms: number, task: () => void | Promise<void>): Timer;
}

/** The real clock: `Date.now()`, and the runtime's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
  after(ms, task) {
    const timer = unref(setTimeout(() => void task(), Math.max(0, ms)));
    return { cancel: () => clearTimeout(timer) };
  },
};

// A forgotten background timer must not keep the process alive.
function unref(
  timer: ReturnType<typeof setTimeout>,
): ReturnType<typeof setTimeout> {
  const t = timer as unknown as { unref?: () => void };
  if (typeof t.unref === "function") t.unref();
  else {
    const deno = (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno;
    deno?.unrefTimer(timer as unknown as number);
  }
  return timer;
}
