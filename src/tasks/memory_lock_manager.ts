// The lock manager `@Lockable` uses when it names none: locks of one process, in a map. A holder
// cannot die apart from the process that holds the map, so no lease is kept.
import { systemClock } from "../runtime/clock.ts";
import { type HeldLock, LockManager, type LockRequest } from "./lock_manager.ts";
import { checkLockRequest, checkRenewal } from "./lock_polling.ts";
import { LeasedLock } from "./release_once.ts";

interface Waiter {
  readonly granted: (lock: HeldLock) => void;
  readonly minHoldMs: number;
}

/** Locks in memory, for one process: waiters get a key in the order they asked. */
export class MemoryLockManager extends LockManager {
  // The keys held, each with those waiting for it, first come first.
  readonly #held = new Map<string, Waiter[]>();
  // The last fencing token given, any key: each new holder's is greater.
  #token = 0;

  acquire(request: LockRequest): Promise<HeldLock | undefined> {
    try {
      checkLockRequest(request, "MemoryLockManager");
    } catch (error) {
      return Promise.reject(error);
    }
    const { key, waitMs, minHoldMs = 0, signal } = request;
    const waiting = this.#held.get(key);
    if (waiting === undefined) {
      this.#held.set(key, []);
      return Promise.resolve(this.#lock(key, minHoldMs));
    }
    if (waitMs <= 0 || signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const done = (lock: HeldLock | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(lock);
      };
      const waiter: Waiter = { granted: done, minHoldMs };
      const give = () => {
        const list = this.#held.get(key);
        const at = list === undefined ? -1 : list.indexOf(waiter);
        if (list !== undefined && at >= 0) list.splice(at, 1);
        done(undefined);
      };
      const onAbort = give;
      const timer = setTimeout(give, waitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      waiting.push(waiter);
    });
  }

  // A holder cannot lose a lock of the process it lives in: a renewal holds while it is held.
  #lock(key: string, minHoldMs: number): HeldLock {
    const until = performance.now() + minHoldMs;
    return new LeasedLock(
      () => {
        this.#handOverAt(key, until);
        return Promise.resolve();
      },
      ++this.#token,
      (leaseMs) => {
        try {
          checkRenewal(leaseMs, key, "MemoryLockManager");
        } catch (error) {
          return Promise.reject(error);
        }
        return Promise.resolve(true);
      },
    );
  }

  // A timer may fire a little early on the monotonic clock: it is checked again. The clock's
  // timer does not keep the process alive: nothing waits on a hold but those waiting for the key,
  // whose own timers do.
  #handOverAt(key: string, until: number): void {
    const left = until - performance.now();
    if (left > 0) systemClock.after(Math.ceil(left), () => this.#handOverAt(key, until));
    else this.#handOver(key);
  }

  // Gives the key to the first waiter, or frees it.
  #handOver(key: string): void {
    const next = this.#held.get(key)?.shift();
    if (next === undefined) this.#held.delete(key);
    else next.granted(this.#lock(key, next.minHoldMs));
  }
}
