// The polling wait of the lock managers over a virtual clock: time moves only when the wait
// sleeps, so that any wait, of milliseconds or of hours, is checked at once and exactly.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Clock } from "../../src/runtime/clock.ts";
import type { HeldLock } from "../../src/tasks/lock_manager.ts";
import { checkLockRequest, LONGEST_PAUSE_MS, pollLock } from "../../src/tasks/lock_polling.ts";
import { propertyOptions } from "../property.ts";

/** A clock whose time moves by each sleep, and that records them. */
function virtualClock(onSleep: (now: number) => void = () => {}) {
  let now = 0;
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => now,
    monotonic: () => now,
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      sleeps.push(ms);
      now += Math.max(0, ms);
      onSleep(now);
      return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve();
    },
    after: () => ({ cancel() {} }),
  };
  return { clock, sleeps, now: () => now };
}

const LOCK: HeldLock = { release: () => Promise.resolve() };

describe("pollLock", () => {
  it("tries until the lock comes, within the wait, each pause bounded", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
        async (waitMs, freeAt) => {
          const { clock, sleeps, now } = virtualClock();
          const tries: number[] = [];
          const held = await pollLock(
            { key: "k", waitMs, leaseMs: 1 },
            () => {
              tries.push(now());
              return Promise.resolve(freeAt !== undefined && now() >= freeAt ? LOCK : undefined);
            },
            clock,
          );
          assert.equal(tries[0], 0, "the first try is at once");
          for (const pause of sleeps) {
            assert.ok(pause >= 0 && pause <= LONGEST_PAUSE_MS, `${pause}`);
          }
          assert.ok(now() <= waitMs, "never waits past waitMs");
          if (freeAt !== undefined && freeAt <= waitMs) {
            assert.equal(held, LOCK);
            // Seen at most one longest pause after it was given back.
            assert.ok(now() - freeAt <= LONGEST_PAUSE_MS, `${now()} for ${freeAt}`);
          } else {
            assert.equal(held, undefined);
            assert.equal(tries.at(-1), waitMs, "the last try is at the end of the wait");
          }
        },
      ),
      propertyOptions(200),
    );
  });

  it("ends with nothing once the signal aborts, after one try at least; a failing try rejects", async () => {
    const abort = new AbortController();
    const { clock } = virtualClock((now) => {
      if (now > 1000) abort.abort();
    });
    const held = await pollLock(
      { key: "k", waitMs: 60_000, leaseMs: 1, signal: abort.signal },
      () => Promise.resolve(undefined),
      clock,
    );
    assert.equal(held, undefined);
    // Already aborted (the app is closing): one try still, and no wait after it.
    let tries = 0;
    assert.equal(
      await pollLock({ key: "k", waitMs: 60_000, leaseMs: 1, signal: abort.signal }, () => {
        tries++;
        return Promise.resolve(undefined);
      }, clock),
      undefined,
    );
    assert.equal(tries, 1);
    const free: HeldLock = { release: () => Promise.resolve() };
    assert.equal(
      await pollLock(
        { key: "k", waitMs: 0, leaseMs: 1, signal: abort.signal },
        () => Promise.resolve(free),
        clock,
      ),
      free,
    );
    await assert.rejects(
      pollLock({ key: "k", waitMs: 0, leaseMs: 1 }, () => Promise.reject(new Error("down")), clock),
      /down/,
    );
  });

  it("refuses requests that are none, naming the key", () => {
    const who = "Locks";
    assert.throws(() => checkLockRequest(null as never, who), /Locks: acquire\(\) takes/);
    assert.throws(
      () => checkLockRequest({ key: "k", waitMs: Infinity, leaseMs: 1 }, who),
      /waitMs of the lock "k" is Infinity/,
    );
    assert.throws(
      () => checkLockRequest({ key: "k", waitMs: 0, leaseMs: 1.5 }, who),
      /leaseMs of the lock "k" is 1.5/,
    );
    assert.throws(() => checkLockRequest({ key: 42 as never, waitMs: 0, leaseMs: 1 }, who), /42/);
  });
});
