/** What a job asks of a lock: its name and how long it may, and must, be held. */
export interface LockConfiguration {
  /** The lock's name: the same on every replica for one job. */
  readonly name: string;
  /**
   * Milliseconds after which the lock ends even if its holder never released it (a process
   * killed mid-run): set it well above the job's longest run.
   */
  readonly lockAtMostFor: number;
  /**
   * Milliseconds the lock is held at least, released or not: a job that ends at once is still
   * not run by a replica whose clock is a little behind.
   */
  readonly lockAtLeastFor: number;
}

/** A lock taken: what releases it. */
export interface SimpleLock {
  /** Releases the lock, or shortens it to `lockAtLeastFor` from when it was taken. */
  unlock(): Promise<void>;
}

/**
 * Takes the locks of `@SchedulerLock` jobs, so that a job runs on one replica per tick (ShedLock's
 * model). Subclass it for a store of your own and declare the subclass as a bean; Thaw ships
 * {@linkcode SqlLockProvider} over PostgreSQL, MariaDB/MySQL and SQLite.
 *
 * @example A lock held in memory, for one process (tests)
 * ```ts
 * import assert from "node:assert/strict";
 * import { type LockConfiguration, LockProvider, type SimpleLock } from "@thaw/thaw";
 *
 * class MemoryLockProvider extends LockProvider {
 *   readonly held = new Map<string, number>();
 *   lock(config: LockConfiguration): Promise<SimpleLock | undefined> {
 *     const now = Date.now();
 *     if ((this.held.get(config.name) ?? 0) > now) return Promise.resolve(undefined);
 *     this.held.set(config.name, now + config.lockAtMostFor);
 *     return Promise.resolve({
 *       unlock: () => {
 *         this.held.set(config.name, now + config.lockAtLeastFor);
 *         return Promise.resolve();
 *       },
 *     });
 *   }
 * }
 *
 * const locks = new MemoryLockProvider();
 * const config = { name: "digest", lockAtMostFor: 60_000, lockAtLeastFor: 0 };
 * const lock = await locks.lock(config);
 * assert.notEqual(lock, undefined);
 * assert.equal(await locks.lock(config), undefined);
 * await lock!.unlock();
 * assert.notEqual(await locks.lock(config), undefined);
 * ```
 */
export abstract class LockProvider {
  /**
   * Takes the lock named `config.name` until `lockAtMostFor` from now, unless another holder's
   * has not ended yet: then `undefined`, and the job's run is skipped. Throws when the store
   * cannot say (the database is down): the run is skipped too, and the error logged.
   */
  abstract lock(config: LockConfiguration): Promise<SimpleLock | undefined>;

  /**
   * Throws, saying why, when this provider could never take `config`'s lock (a name its store
   * cannot hold). `bootstrap` asks it for each `@SchedulerLock` job, so that such a lock stops
   * the start rather than failing every run. The default takes every lock.
   */
  check(_config: LockConfiguration): void {}
}
