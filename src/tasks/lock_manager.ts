// The one interface `@Lockable` and `@SchedulerLock` take their locks through (Winter Boot's
// `lockManager`, ShedLock's provider): in the process by default for `@Lockable`, or a bean of the
// app's that keeps them in a database or Redis, so that runs never overlap across replicas.

/** A lock taken: what gives it back, and, where its manager keeps a lease, what renews it. */
export interface HeldLock {
  /** Gives the lock back, whatever the run's outcome; twice is once. */
  release(): Promise<void>;
  /**
   * The lock's fencing token, where its manager gives one (every manager Thaw ships, Redis's when
   * asked with `fenced`): greater for each new holder of the key, so that a store its holder
   * writes to can refuse the writes of one that lost the lock and does not know it yet. The SQL
   * managers keep that promise for locks asked with a `minHoldMs` of 1 or more: a release without
   * one deletes the lock's row, and its token with it.
   */
  readonly token?: number | undefined;
  /**
   * Moves the end of the lock's lease to `leaseMs` from now, while the lease has not ended:
   * `false` once the lock was lost (its lease ended: another may hold it) or given back. Rejects
   * when the store cannot say. Every manager Thaw ships has it.
   */
  renew?(leaseMs: number): Promise<boolean>;
}

/** What `@Lockable` asks of a lock manager for one run. */
export interface LockRequest {
  /** The lock's key, from the method's arguments (`order-42`). */
  readonly key: string;
  /** Milliseconds to wait while another holder has the key; 0: one try. */
  readonly waitMs: number;
  /**
   * Milliseconds after which a lock whose holder never gave it back (its process killed) ends of
   * itself. A holder still running past it may lose the lock: set it above the longest run.
   */
  readonly leaseMs: number;
  /**
   * Milliseconds from its taking that the lock lasts at least, given back or not (ShedLock's
   * `lockAtLeastFor`, which `@SchedulerLock` passes, 0 included): a run that ends at once still
   * keeps a replica whose clock is a little behind from running it again. Given, a release only
   * shortens the lock, as ShedLock's does, and a store that keeps a record per name (a table's
   * row) keeps it; absent (`@Lockable`'s keys, made of data), a release ends the lock and removes
   * its record. At most `leaseMs`.
   */
  readonly minHoldMs?: number | undefined;
  /**
   * Asks for a fencing token (`HeldLock.token`): `RedisLockManager` then keeps a counter per key
   * beside the lock (a key that outlives it); the SQL managers give every lock one.
   */
  readonly fenced?: boolean | undefined;
  /**
   * Aborted when the app closes, once its runs had their time to finish: the wait ends,
   * `undefined`. A request whose signal has aborted still tries once: a free key is taken.
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Takes the locks of `@Lockable` methods and `@SchedulerLock` jobs. Thaw ships
 * {@linkcode SqlLockManager} (the app's datasource), `SqlLockProvider` (a driver's own pool) and
 * `RedisLockManager`; subclass it for a store of your own and declare the subclass as a bean.
 * `@Lockable({ lockManager })` names the bean; `@SchedulerLock` takes the app's one
 * `LockManager`, or the one its `lockManager` names. A manager keeps the lock `minHoldMs` from its
 * taking when asked to.
 *
 * @example A lock manager in memory, for one process
 * ```ts
 * import assert from "node:assert/strict";
 * import { type HeldLock, LockManager, type LockRequest } from "@thaw/thaw/tasks";
 *
 * class OneTry extends LockManager {
 *   readonly #held = new Set<string>();
 *   acquire({ key }: LockRequest): Promise<HeldLock | undefined> {
 *     if (this.#held.has(key)) return Promise.resolve(undefined);
 *     this.#held.add(key);
 *     return Promise.resolve({
 *       release: () => Promise.resolve(void this.#held.delete(key)),
 *     });
 *   }
 * }
 *
 * const locks = new OneTry();
 * const request = { key: "order-42", waitMs: 0, leaseMs: 60_000 };
 * const held = await locks.acquire(request);
 * assert.notEqual(held, undefined);
 * assert.equal(await locks.acquire(request), undefined);
 * await held!.release();
 * assert.notEqual(await locks.acquire(request), undefined);
 * ```
 */
export abstract class LockManager {
  /**
   * The lock of `request.key`, waiting up to `request.waitMs` while another holder has it:
   * `undefined` when the wait ended without it (or `signal` was aborted). Rejects when the store
   * cannot say (the database is down), naming the store, never its credentials. Its release ends
   * the lock at once, or `request.minHoldMs` after its taking, whichever is later.
   */
  abstract acquire(request: LockRequest): Promise<HeldLock | undefined>;
}
