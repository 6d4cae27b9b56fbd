import type { SchedulerClock, SchedulerTimer } from "../../src/scheduling/scheduler.ts";

interface Pending {
  readonly at: number;
  readonly order: number;
  readonly task: () => void;
}

/** Lets every promise chain that can move on do so: one turn of the event loop, no time. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * A scheduler's clock whose time moves only when the test moves it: days of schedule pass in no
 * real time. `early` makes every timer fire that many milliseconds before it is due, as real
 * timers sometimes do. {@linkcode VirtualClock.stepWall} sets the wall clock alone (NTP, a VM
 * resumed), as the real one can be.
 */
export class VirtualClock implements SchedulerClock {
  #now: number;
  #order = 0;
  readonly #pending: Pending[] = [];
  readonly early: number;
  /** The longest wait a timer was set for. */
  longestWait = 0;

  constructor(start: number, early = 0) {
    this.#now = start;
    this.early = early;
  }

  #wallShift = 0;

  now(): number {
    return this.#now + this.#wallShift;
  }

  monotonic(): number {
    return this.#now;
  }

  /** Sets the wall clock `ms` forward (back, when negative); timers and the monotonic clock go on. */
  stepWall(ms: number): void {
    this.#wallShift += ms;
  }

  setTimer(ms: number, task: () => void): SchedulerTimer {
    this.longestWait = Math.max(this.longestWait, ms);
    // Early by `early`, but never by the whole wait: a timer set again for the rest fires on time.
    const at = this.#now + (ms > this.early ? ms - this.early : ms);
    const entry = { at, order: this.#order++, task };
    this.#pending.push(entry);
    return {
      cancel: () => {
        const i = this.#pending.indexOf(entry);
        if (i >= 0) this.#pending.splice(i, 1);
      },
    };
  }

  /** Timers pending. */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Moves time forward by `ms`, firing each timer when its time comes (in order), and letting
   * what it started run before time moves on.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (;;) {
      const next = [...this.#pending].sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (next === undefined || next.at > end) break;
      this.#pending.splice(this.#pending.indexOf(next), 1);
      this.#now = Math.max(this.#now, next.at);
      next.task();
      await settle();
    }
    this.#now = end;
    await settle();
  }
}

/** A promise with its resolve and reject in hand. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
