// Keeps the runs of `@Daemon` beans going while the app runs: a run that throws, or ends, is
// started again after a capped exponential backoff (1 s, doubling, at most 1 minute, back to 1 s
// after a run that lasted that minute); the close
// aborts their signal and waits for each run to settle, up to a bound, naming those that did not.
import type { ContextLogger } from "../context/class_record.ts";
import { Backoff } from "../runtime/backoff.ts";
import { type Clock, systemClock } from "../runtime/clock.ts";

/** One copy of a daemon to keep running. */
export interface DaemonRun {
  /** `reindexer#1`: the daemon's name and its copy, as the log names it. */
  readonly name: string;
  readonly run: (signal: AbortSignal) => Promise<unknown>;
}

/** Spring Boot's and most supervisors' shape: 1 s, doubling, at most a minute. */
export const DEFAULT_BACKOFF: Backoff = /* @__PURE__ */ new Backoff({
  delay: 1000,
  multiplier: 2,
  maxDelay: 60_000,
});

/** Runs daemons, restarts them, and stops them. */
export class DaemonSupervisor {
  readonly #runs: readonly DaemonRun[];
  readonly #logger: ContextLogger;
  readonly #clock: Clock;
  readonly #backoff: Backoff;
  readonly #abort = new AbortController();
  readonly #loops: Promise<void>[] = [];
  // Each run now in progress, by daemon: what the close waits for.
  readonly #current = new Map<string, Promise<unknown>>();
  /** Restarts so far, all daemons. */
  restarts = 0;
  /** The daemons now waiting to be restarted. */
  readonly inBackoff: Set<string> = new Set();

  constructor(runs: readonly DaemonRun[], logger: ContextLogger, options: {
    readonly clock?: Clock | undefined;
    readonly backoff?: Backoff | undefined;
  } = {}) {
    this.#runs = runs;
    this.#logger = logger;
    this.#clock = options.clock ?? systemClock;
    this.#backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  /** Starts every run; a second call does nothing. */
  start(): void {
    if (this.#loops.length > 0 || this.#abort.signal.aborted) return;
    for (const daemon of this.#runs) this.#loops.push(this.#keep(daemon));
  }

  /**
   * Aborts the signal, then waits up to `timeoutMs` for every run to settle: the names of those
   * that did not (logged), none when all did.
   */
  async stop(timeoutMs: number): Promise<string[]> {
    this.#abort.abort(new Error("the application is closing"));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const all = Promise.all(this.#loops).then(() => "done" as const);
    const outcome = await Promise.race([all, timedOut]);
    clearTimeout(timer);
    if (outcome === "done") return [];
    const left = [...this.#current.keys()];
    this.#logger.error(
      `@Daemon: ${left.join(", ")} did not end within ${timeoutMs} ms (server.shutdown-timeout) ` +
        "of their signal's abort: left running; let run(signal) end when signal aborts",
    );
    return left;
  }

  async #keep(daemon: DaemonRun): Promise<void> {
    const signal = this.#abort.signal;
    for (let failures = 0; !signal.aborted; failures++) {
      const started = this.#clock.monotonic();
      // A turn later, apart from the caller of start(); not at all once the app closes.
      const running = Promise.resolve().then(() => signal.aborted ? undefined : daemon.run(signal));
      this.#current.set(daemon.name, running);
      let failure: unknown;
      let failed = false;
      try {
        await running;
      } catch (error) {
        failed = true;
        failure = error;
      } finally {
        this.#current.delete(daemon.name);
      }
      if (signal.aborted) return;
      // A run that lasted the longest delay was healthy: its end is a new trouble, not the same
      // one again, and waits the first delay (as Kubernetes resets a crash loop's backoff).
      if (this.#clock.monotonic() - started >= this.#backoff.maxDelay) failures = 0;
      const delay = this.#backoff.delayOf(failures + 1);
      const why = failed ? "failed" : "ended while the application runs";
      this.#logger.error(
        `@Daemon ${daemon.name} ${why}; restarting in ${delay} ms`,
        ...(failed ? [failure] : []),
      );
      this.inBackoff.add(daemon.name);
      try {
        await this.#clock.sleep(delay, signal);
      } catch {
        return;
      } finally {
        this.inBackoff.delete(daemon.name);
      }
      this.restarts++;
    }
  }
}
