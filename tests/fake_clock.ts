import type { Clock, Timer } from "../src/runtime/clock.ts";

/** A sleep or a timer's task, due at `at` on the monotonic clock. */
interface Pending {
  readonly at: number;
  /** Set order: what is due at the same time fires in the order it was set. */
  readonly order: number;
  readonly kind: "sleep" | "task";
  fire(): void;
}

/** Lets every promise chain that can move on do so: one turn of the event loop, no time. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * A {@linkcode Clock} whose time moves only when the test moves it, so that a lease of minutes or
 * days of schedule pass in no real time. Requests still go to a real node (or a loopback server)
 * and take real time; no virtual time passes meanwhile, as on a fast network.
 *
 * Time moves with {@linkcode FakeClock.advance} (by an amount, firing what falls due, in order,
 * and letting what each timer started run before the next fires), {@linkcode FakeClock.next} (to
 * the next timer), or {@linkcode FakeClock.drive}, which moves it to the next timer each time the
 * code under test waits on the clock: `sleeps` sleeps pending (a runner polling for a lock) and
 * no background task (a renewal) still running. What happens in between is ordered by the clock
 * itself, never by a real sleep.
 *
 * `early` makes every timer fire that many milliseconds before it is due, as real timers
 * sometimes do. {@linkcode FakeClock.stepWall} sets the wall clock alone (NTP, a VM resumed), as
 * the real one can be.
 */
export class FakeClock implements Clock {
  #now: number;
  #wallShift = 0;
  #order = 0;
  readonly #early: number;
  readonly #pending: Pending[] = [];
  // Background tasks started and not settled yet.
  readonly #running = new Set<Promise<unknown>>();
  // Conditions someone waits for, checked again on every change.
  readonly #watchers = new Set<{ test: () => boolean; resolve(): void }>();
  /** The longest wait a timer was set for. */
  longestWait = 0;

  /** @param start the time it shows first; the real time by default */
  constructor(start: number = Date.now(), options: { readonly early?: number } = {}) {
    this.#now = start;
    this.#early = options.early ?? 0;
  }

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

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.#remove(entry);
        reject(signal?.reason);
      };
      const entry = this.#add(ms, "sleep", () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  after(ms: number, task: () => void | Promise<void>): Timer {
    const entry = this.#add(ms, "task", () => {
      const running = Promise.resolve(task());
      this.#running.add(running);
      const settled = () => {
        this.#running.delete(running);
        this.#changed();
      };
      // A rejection stays unhandled, as on the real clock: the test runner reports it.
      running.then(settled, (error) => {
        settled();
        throw error;
      });
    });
    return { cancel: () => this.#remove(entry) };
  }

  /** Sleeps pending: code waiting on this clock. */
  get sleeping(): number {
    return this.#pending.filter((p) => p.kind === "sleep").length;
  }

  /** Timers pending (sleeps and tasks), soonest first: when each falls due. */
  get due(): number[] {
    return this.#sorted().map((p) => p.at);
  }

  /** How many timers are pending (sleeps and tasks). */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Moves the time `ms` on, firing every timer due by then (those set meanwhile too), in order,
   * each at its own time, and letting what it started run (a turn of the event loop) before the
   * next fires. A request it starts does not end meanwhile: {@linkcode FakeClock.drive} waits
   * for that.
   */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    await settle();
    for (let p = this.#sorted()[0]; p !== undefined && p.at <= until; p = this.#sorted()[0]) {
      this.#fire(p);
      await settle();
    }
    this.#now = Math.max(this.#now, until);
    await settle();
  }

  /** Moves the time to the soonest timer and fires it; false when no timer is set. */
  next(): boolean {
    const soonest = this.#sorted()[0];
    if (soonest === undefined) return false;
    this.#fire(soonest);
    return true;
  }

  /** Resolves once `count` sleeps are pending. */
  whenSleeping(count = 1): Promise<void> {
    return this.#until(() => this.sleeping >= count);
  }

  /** Resolves once every background task started so far has settled. */
  settled(): Promise<void> {
    return this.#until(() => this.#running.size === 0);
  }

  /**
   * Moves the time until `work` settles, and returns its outcome: each time `sleeps` sleeps are
   * pending (every runner the test drives waits on the clock) and no background task runs, to the
   * next timer. With `sleeps` 0, time moves whenever no background task runs. With `tasks: false`,
   * it moves whatever background tasks are doing: for tasks that never end (a renewal that hangs).
   */
  async drive<T>(
    work: Promise<T>,
    options: { readonly sleeps?: number; readonly tasks?: boolean } = {},
  ): Promise<T> {
    const { sleeps = 1, tasks = true } = options;
    let done = false;
    const finished = () => {
      done = true;
      this.#changed();
    };
    work.then(finished, finished);
    const idle = () =>
      this.sleeping >= sleeps && (!tasks || this.#running.size === 0) && this.#pending.length > 0;
    for (;;) {
      await this.#until(() => done || idle());
      if (done) return await work;
      // Looked at again: what woke this up may have changed since.
      if (idle()) this.next();
    }
  }

  #add(ms: number, kind: Pending["kind"], fire: () => void): Pending {
    this.longestWait = Math.max(this.longestWait, ms);
    const wait = Math.max(0, ms);
    // Early by `early`, but never by the whole wait: a timer set again for the rest fires on time.
    const at = this.#now + (wait > this.#early ? wait - this.#early : wait);
    const entry = { at, order: this.#order++, kind, fire };
    this.#pending.push(entry);
    this.#changed();
    return entry;
  }

  #remove(entry: Pending): void {
    const i = this.#pending.indexOf(entry);
    if (i === -1) return;
    this.#pending.splice(i, 1);
    this.#changed();
  }

  #fire(entry: Pending): void {
    this.#remove(entry);
    this.#now = Math.max(this.#now, entry.at);
    entry.fire();
  }

  #sorted(): Pending[] {
    return [...this.#pending].sort((a, b) => a.at - b.at || a.order - b.order);
  }

  #until(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.#watchers.add({ test, resolve }));
  }

  #changed(): void {
    for (const w of this.#watchers) {
      if (!w.test()) continue;
      this.#watchers.delete(w);
      w.resolve();
    }
  }
}
