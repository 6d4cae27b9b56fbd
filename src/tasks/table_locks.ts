// The locks of a ShedLock table, whatever runs its statements: SqlLockManager runs them on the
// app's datasource, outside the caller's transaction; SqlLockProvider through a driver's own pool.
// One taking, one release and one way to store a key, so that the two share a table and agree.
import { systemClock } from "../runtime/clock.ts";
import { SqlLockTable } from "../sql/sql_lock_table.ts";
import type { HeldLock, LockRequest } from "./lock_manager.ts";
import { checkLockRequest, checkRenewal, pollLock } from "./lock_polling.ts";
import { LeasedLock } from "./release_once.ts";

// A key the name column cannot hold as it is goes in as this and its SHA-256; so does a key that
// starts with it, so that no key is stored as another's hash.
const HASHED = "sha256:";

/**
 * Runs `work` (`what`: take, renew, release) on the table for the lock `key`, failing with an error that
 * names the store, the table and the key.
 */
export type TableRun = <T>(
  work: (locks: SqlLockTable) => Promise<T>,
  key: string,
  what: "take" | "renew" | "release",
) => Promise<T>;

/** The locks of one table, as a `LockManager` over it takes them; `run` reaches the table. */
export class TableLocks {
  readonly #who: string;
  readonly #run: TableRun;

  /** `who` starts the `TypeError` of a request that is not one: the class the user wrote. */
  constructor(who: string, run: TableRun) {
    this.#who = who;
    this.#run = run;
  }

  /**
   * The lock of `request.key`, waiting up to `request.waitMs` while another holds it: `undefined`
   * once the wait ended without it. Rejects, naming the store, the table and the key, when the
   * database fails (down, the table missing); with a `TypeError` for a request that is not one.
   */
  async acquire(request: LockRequest): Promise<HeldLock | undefined> {
    const { key, leaseMs, minHoldMs } = checkLockRequest(request, this.#who);
    const name = await storedName(key);
    return await pollLock(
      request,
      () => this.#take(key, name, leaseMs, minHoldMs),
      systemClock,
    );
  }

  async #take(
    key: string,
    name: string,
    leaseMs: number,
    minHoldMs: number | undefined,
  ): Promise<HeldLock | undefined> {
    const run = this.#run;
    const taken = await run((locks) => locks.take(name, leaseMs), key, "take");
    if (taken === undefined) return undefined;
    const { holder, token } = taken;
    return new LeasedLock(
      () => run((locks) => locks.release(name, minHoldMs, holder), key, "release"),
      token,
      async (ms) => {
        const lease = checkRenewal(ms, key, this.#who);
        return await run((locks) => locks.renew(name, lease, holder), key, "renew");
      },
    );
  }
}

/**
 * The row's name of `key`: itself where the column holds it exactly, else `sha256:` and the
 * base64url SHA-256 of its UTF-16 code units (not UTF-8: two keys with different lone surrogates
 * stay two).
 */
export async function storedName(key: string): Promise<string> {
  if (!key.startsWith(HASHED) && SqlLockTable.unstorableName(key) === undefined) return key;
  const units = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    units[2 * i] = unit & 0xff;
    units[2 * i + 1] = unit >> 8;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", units));
  const base64 = btoa(String.fromCharCode(...digest));
  return HASHED + base64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
