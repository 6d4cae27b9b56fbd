/**
 * Where time comes from, for the migration runners (a lock's poll and its lease) and the
 * scheduler (its jobs' ticks): what time it is, a wait, and a timer. {@linkcode systemClock} reads
 * the real clock and is everyone's default; a test gives a clock of its own, so that a lease of
 * minutes or days of schedule pass in virtual time, without waiting for them.
 *
 * @module
 */

/** A timer set with {@linkcode Clock.after}. */
export interface Timer {
  /** Stops the timer: its task does not run. Nothing happens once it ran, or a second time. */
  cancel(): void;
}

/** How a timer of {@linkcode Clock.after} holds the process. */
export interface TimerOptions {
  /**
   * Whether the timer keeps the process alive until it fires: a served app's schedules are its
   * work; a lease's renewal, in the background, is not (the default).
   */
  readonly keepAlive?: boolean;
}

/** The time, waits and timers of a runner or a scheduler. */
export interface Clock {
  /** The wall clock, in milliseconds since the epoch, as `Date.now()` gives it. */
  now(): number;
  /**
   * Milliseconds from an arbitrary start, never stepped (NTP, a resumed VM): what a period is
   * counted on, so that a wall clock set back does not stall it.
   */
  monotonic(): number;
  /**
   * Resolves once `ms` have passed (0 or less: at the next turn). When `signal` aborts, it rejects
   * with the signal's reason at once, and at once when it already has.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Runs `task` once, `ms` from now (at most 2^31 - 1, which real timers hold), unless the timer
   * is cancelled first. The clock does not wait for a promise `task` returns, which must not
   * reject; a test's clock may wait for it before time moves on.
   */
  after(ms: number, task: () => void | Promise<void>, options?: TimerOptions): Timer;
}

/** The real clock: `Date.now()`, `performance.now()`, and the runtime's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
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
  after(ms, task, options) {
    const timer = setTimeout(() => void task(), Math.max(0, ms));
    if (options?.keepAlive !== true) unref(timer);
    return { cancel: () => clearTimeout(timer) };
  },
};

// A forgotten background timer must not keep the process alive.
function unref(timer: ReturnType<typeof setTimeout>): void {
  const t = timer as unknown as { unref?: () => void };
  if (typeof t.unref === "function") t.unref();
  else {
    const deno = (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno;
    deno?.unrefTimer(timer as unknown as number);
  }
}
