// What a `@Lockable` call gets when its key stayed held for its whole wait.

/**
 * A `@Lockable` call that waited `waitTime` without the lock of its key: the method did not run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LockNotAcquiredError } from "@thaw/thaw/tasks";
 *
 * const error = new LockNotAcquiredError("order-42", "in-process", 0);
 * assert.equal(error.key, "order-42");
 * assert.match(error.message, /"order-42".*lock manager in-process/);
 * ```
 */
export class LockNotAcquiredError extends Error {
  /** The lock's key, as the method's `key` gave it. */
  readonly key: string;
  /** The lock manager: `in-process`, or the bean's name. */
  readonly lockManager: string;

  /**
   * The refusal of one call.
   *
   * @param key the lock's key
   * @param lockManager `in-process`, or the bean's name
   * @param waitMs how long the call waited, in milliseconds
   * @param where the method, `Orders.ship()`
   */
  constructor(key: string, lockManager: string, waitMs: number, where?: string) {
    super(
      `${where === undefined ? "" : `${where}: `}the lock "${key}" of the lock manager ` +
        `${lockManager} stayed held for the whole wait (${waitMs} ms, waitTime)`,
    );
    this.name = "LockNotAcquiredError";
    this.key = key;
    this.lockManager = lockManager;
  }
}
