// A `@Daemon({ singleton: true })`: run on one replica at a time, by whichever holds its lock. The
// others try to take it once a second; the holder renews its lease every third of it, and its
// run's signal aborts once the lease may be lost (a renewal refused, or none confirmed for two
// thirds of the lease), a third of the lease before another replica can take over. The fencing
// token it is given covers what the run does should it see the abort later than that (a paused
// process, a clock that jumped): a store that keeps the greatest token it saw refuses the late
// writes.
import type { ContextLogger } from "../context/class_record.ts";
import { type Clock, systemClock } from "../runtime/clock.ts";
import { LeaseKeeper } from "./lease_keeper.ts";
import type { HeldLock, LockManager } from "./lock_manager.ts";

// How often a replica that waits for the lock tries to take it (more often where a third of the
// lease is shorter): how late at most, past the lease, it takes over from a holder that died.
const TAKE_RETRY_MS = 1000;

/** What a singleton daemon's run is given beside its signal. */
export interface DaemonLease {
  /**
   * The fencing token of this holding: greater for each new holder of the daemon's lock, on any
   * replica. Write it with what the run changes, and refuse a change that carries a smaller token
   * than one already seen.
   */
  readonly token: number;
}

/** A held lock that renews: what a singleton daemon needs of its lock manager's locks. */
type RenewableLock = HeldLock & {
  readonly token: number;
  renew(leaseMs: number): Promise<boolean>;
};

/** How a singleton daemon holds its lock. */
export interface SingletonSettings {
  /** `daemon:<name>`: the lock every replica asks for. */
  readonly key: string;
  /** The lease, in ms: how long a replica killed while holding the lock keeps the others waiting. */
  readonly leaseMs: number;
  /** Names the lock manager in errors: `LockManager bean "locks" (SqlLockManager)`. */
  readonly managerName: string;
}

/** One replica's side of a singleton daemon. */
export class SingletonDaemon {
  readonly #manager: LockManager;
  readonly #settings: SingletonSettings;
  readonly #run: (signal: AbortSignal, lease: DaemonLease) => Promise<unknown>;
  readonly #logger: ContextLogger;
  readonly #clock: Clock;

  constructor(
    manager: LockManager,
    settings: SingletonSettings,
    run: (signal: AbortSignal, lease: DaemonLease) => Promise<unknown>,
    logger: ContextLogger,
    clock: Clock = systemClock,
  ) {
    this.#manager = manager;
    this.#settings = settings;
    this.#run = run;
    this.#logger = logger;
    this.#clock = clock;
  }

  /**
   * Waits for the lock until `signal` aborts, then runs the daemon while it holds it, and gives
   * it back. Resolves when the run ended (nothing once `signal` aborted before the lock came);
   * rejects with the run's error, or, when the lease was lost under a run that then ended, with
   * an error that says so: the supervisor starts it again, waiting for the lock.
   */
  async run(signal: AbortSignal): Promise<unknown> {
    const { key, leaseMs } = this.#settings;
    // While another replica holds the lock: one try per interval, never a busy poll of the store.
    const retry = Math.min(TAKE_RETRY_MS, Math.max(1, Math.floor(leaseMs / 3)));
    let held: HeldLock | undefined;
    let takenAt = 0;
    for (let failures = 0;;) {
      if (signal.aborted) return undefined;
      takenAt = this.#clock.monotonic();
      try {
        held = await this.#manager.acquire({
          key,
          waitMs: 0,
          leaseMs,
          // Kept a millisecond at least: the next holder's token is then greater (a row or a key
          // the release deleted would forget the last one).
          minHoldMs: 1,
          fenced: true,
          signal,
        });
        failures = 0;
      } catch (error) {
        // The store out of reach: tried again at the same pace, so that the daemon runs again
        // within a second of its coming back (the supervisor's backoff would wait a minute).
        if (++failures === 1 || failures % 20 === 0) {
          this.#logger.error(
            `@Daemon ${key}: could not take its lock (${failures} time` +
              `${failures === 1 ? "" : "s"} in a row); trying again`,
            error,
          );
        }
      }
      if (held !== undefined) break;
      try {
        await this.#clock.sleep(retry, signal);
      } catch {
        return undefined;
      }
    }
    const hold = { renewing: undefined as Promise<unknown> | undefined };
    try {
      const lock = this.#renewable(held);
      if (signal.aborted) return undefined;
      return await this.#hold(lock, signal, hold, takenAt);
    } finally {
      // A renewal still under way could land after the release and hold the lock a lease more:
      // waited for, a lease at most, whatever it answers.
      const renewing = hold.renewing;
      if (renewing !== undefined) {
        const bound = new AbortController();
        await Promise.race([
          renewing.then(() => {}, () => {}),
          this.#clock.sleep(leaseMs, bound.signal).catch(() => {}),
        ]);
        bound.abort();
      }
      await held.release();
    }
  }

  // Runs the daemon while `lock` holds: its signal aborts with the app's, or once the lease may
  // be lost. `hold.renewing` is the renewal under way, for the release to wait for.
  async #hold(
    lock: RenewableLock,
    appSignal: AbortSignal,
    hold: { renewing: Promise<unknown> | undefined },
    takenAt: number,
  ): Promise<unknown> {
    const { key, leaseMs } = this.#settings;
    const controller = new AbortController();
    let lost: string | undefined;
    const lease = new LeaseKeeper((ms) => lock.renew(ms), leaseMs, this.#clock, (why) => {
      lost = why;
      controller.abort(new Error(`@Daemon ${key}: the lease was lost: ${why}`));
    });
    const onClose = () => controller.abort(appSignal.reason);
    appSignal.addEventListener("abort", onClose, { once: true });
    const aborted = new Promise<void>((resolve) =>
      controller.signal.addEventListener("abort", () => resolve(), { once: true })
    );
    try {
      // A first renewal that hangs ends at the watchdog, or at the app's close.
      if (!controller.signal.aborted) await Promise.race([lease.start(takenAt), aborted]);
      if (appSignal.aborted) return undefined;
      if (lost !== undefined || !lease.confirmed) {
        const why = lost ?? `its lease could not be confirmed (${lease.failure})`;
        throw new Error(`@Daemon ${key}: the lock was taken, but ${why}`);
      }
      const result = await this.#run(controller.signal, { token: lock.token });
      if (lost !== undefined && !appSignal.aborted) {
        throw new Error(`@Daemon ${key}: its run ended once the lease was lost: ${lost}`);
      }
      return result;
    } finally {
      lease.stop();
      hold.renewing = lease.renewing;
      appSignal.removeEventListener("abort", onClose);
    }
  }

  // `held`, when it renews and has a token; else it is given back, and the error names the
  // manager that cannot hold a singleton's lease.
  #renewable(held: HeldLock): RenewableLock {
    if (typeof held.renew === "function" && typeof held.token === "number") {
      return held as RenewableLock;
    }
    throw new Error(
      `@Daemon ${this.#settings.key}: the ${this.#settings.managerName} gives locks without ` +
        "renew() or a fencing token, which a singleton daemon needs: use SqlLockManager, " +
        "SqlLockProvider or RedisLockManager, or give your manager's locks both",
    );
  }
}
