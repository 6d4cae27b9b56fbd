// The wait of a lock manager over a store that cannot tell when a lock is given back (a table, a
// Redis key): one try, then tries again after a pause that grows up to a bound, until the lock is
// taken, the wait runs out, or the signal aborts. The pauses are the clock's, so that a test's
// clock can drive them; each is cut to what is left of the wait, and the last try is at its end.
import type { Clock } from "../runtime/clock.ts";
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";
import type { HeldLock, LockRequest } from "./lock_manager.ts";
import { shownKey } from "./shown_key.ts";
import { shownValue } from "../shown_value.ts";

/** The first pause after a try that found the lock held, in milliseconds. */
const FIRST_PAUSE_MS = 5;
/** The longest pause: how late at most a waiter sees a lock given back. */
export const LONGEST_PAUSE_MS = 200;

/**
 * `request`, when its key is text and its times whole milliseconds the store can keep; else a
 * `TypeError` that `who` (`SqlLockManager`) starts.
 */
export function checkLockRequest(request: LockRequest, who: string): LockRequest {
  if (typeof request !== "object" || request === null) {
    throw new TypeError(`${who}: acquire() takes { key, waitMs, leaseMs, minHoldMs?, signal? }`);
  }
  const { key, waitMs, leaseMs } = request;
  if (typeof key !== "string" || key === "") {
    throw new TypeError(`${who}: the lock's key must be a non-empty text, got ${shownValue(key)}`);
  }
  if (typeof waitMs !== "number" || !(waitMs >= 0) || waitMs > MAX_DURATION_MS) {
    throw new TypeError(
      `${who}: waitMs of the lock ${shownKey(key)} is ${shownValue(waitMs)}; it is a number ` +
        `of milliseconds from 0 to ${MAX_DURATION_MS}`,
    );
  }
  if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0 || leaseMs > MAX_DURATION_MS) {
    throw new TypeError(
      `${who}: leaseMs of the lock ${shownKey(key)} is ${shownValue(leaseMs)}; it is a whole ` +
        `number of milliseconds from 1 to ${MAX_DURATION_MS}`,
    );
  }
  if (request.fenced !== undefined && typeof request.fenced !== "boolean") {
    throw new TypeError(
      `${who}: fenced of the lock ${shownKey(key)} is ${shownValue(request.fenced)}; it is true ` +
        "or false",
    );
  }
  const { minHoldMs = 0 } = request;
  if (!Number.isSafeInteger(minHoldMs) || minHoldMs < 0 || minHoldMs > leaseMs) {
    throw new TypeError(
      `${who}: minHoldMs of the lock ${shownKey(key)} is ${shownValue(minHoldMs)}; it is a whole ` +
        `number of milliseconds from 0 to its leaseMs (${leaseMs})`,
    );
  }
  return request;
}

/**
 * `leaseMs` of a renewal of the lock `key`, when it is a whole number of milliseconds the store
 * can keep; else a `TypeError` that `who` starts.
 */
export function checkRenewal(leaseMs: number, key: string, who: string): number {
  if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0 || leaseMs > MAX_DURATION_MS) {
    throw new TypeError(
      `${who}: renew(leaseMs) of the lock ${shownKey(key)}: ${shownValue(leaseMs)} is no whole ` +
        `number of milliseconds from 1 to ${MAX_DURATION_MS}`,
    );
  }
  return leaseMs;
}

/**
 * Tries `attempt` until it gives a lock, for `request.waitMs` at most: the lock, or `undefined`
 * once the wait ran out or `request.signal` aborted (after one try, aborted or not). A try that
 * rejects (the store is down) ends the wait with its rejection.
 */
export async function pollLock(
  request: LockRequest,
  attempt: () => Promise<HeldLock | undefined>,
  clock: Clock,
): Promise<HeldLock | undefined> {
  const { waitMs, signal } = request;
  // Even when the signal has aborted (the app is closing), one try: a run the close lets finish
  // takes a free key; the signal only cuts the waits after a try.
  const deadline = clock.monotonic() + waitMs;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    const held = await attempt();
    if (held !== undefined) return held;
    const left = deadline - clock.monotonic();
    if (left <= 0 || signal?.aborted) return undefined;
    // Spread over its second half, so that waiters that found the lock held together do not all
    // try again together, and no pause is longer than the longest.
    const wait = Math.min(left, pause * (0.5 + Math.random() / 2));
    try {
      await clock.sleep(wait, signal);
    } catch (error) {
      if (signal?.aborted) return undefined;
      throw error;
    }
    pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
  }
}
