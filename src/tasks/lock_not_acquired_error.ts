// What a `@Lockable` call gets when its key stayed held for its whole wait, or for as much of it as
// the app's close left.
import { shownKey } from "./shown_key.ts";

/**
 * A `@Lockable` call that waited `waitTime` without the lock of its key (or less, the app
 * closing): the method did not run.
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
   * @param closing whether the wait was cut short because the app was closing
   */
  constructor(
    key: string,
    lockManager: string,
    waitMs: number,
    where?: string,
    closing = false,
  ) {
    super(
      `${where === undefined ? "" : `${where}: `}the lock ${shownKey(key)} of the lock manager ` +
        (closing
          ? `${lockManager} was held, and the app was closing: the call stopped waiting for it ` +
            `before its wait (${waitMs} ms, waitTime) ended`
          : `${lockManager} stayed held for the whole wait (${waitMs} ms, waitTime)`),
    );
    this.name = "LockNotAcquiredError";
    this.key = key;
    this.lockManager = lockManager;
  }
}
