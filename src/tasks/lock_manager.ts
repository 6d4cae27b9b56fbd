// The one interface `@Lockable` takes its locks through (Winter Boot's `lockManager`): in the
// process by default, or a bean of the app's that keeps them in a database or Redis, so that runs
// of one key never overlap across replicas.

/** A lock taken: what gives it back. */
export interface HeldLock {
  /** Gives the lock back, whatever the run's outcome; twice is once. */
  release(): Promise<void>;
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
   * Aborted when the app closes, once its runs had their time to finish: the wait ends,
   * `undefined`. A request whose signal has aborted still tries once: a free key is taken.
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Takes the locks of `@Lockable` methods. Subclass it for a store of your own, declare the
 * subclass as a bean, and name the bean in `@Lockable({ lockManager })`.
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
   * cannot say (the database is down), naming the store, never its credentials.
   */
  abstract acquire(request: LockRequest): Promise<HeldLock | undefined>;
}
