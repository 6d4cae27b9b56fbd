// The scheduler's locks in virtual time: @SchedulerLock, and a LockManager that misbehaves.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type HeldLock, LockManager } from "../../src/tasks/lock_manager.ts";
import { FakeClock, settle } from "../fake_clock.ts";
import { deferred } from "../deferred.ts";
import { job, MemoryLocks, scheduled, T0, testHost } from "./scheduler_fixtures.ts";

describe("@SchedulerLock", () => {
  const locked = (run: () => unknown, lock: unknown = { name: "digest", lockAtMostFor: "10m" }) =>
    job({ fixedRate: 1000 }, run, { lock });

  it("takes the lock before each run and releases it after", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    let n = 0;
    const { scheduler } = scheduled(
      [
        locked(() => void n++, { name: "digest", lockAtMostFor: "10m", lockAtLeastFor: "PT30S" }),
      ],
      testHost({ locks }),
      { clock },
    );
    scheduler.start();
    await clock.advance(1500);
    assert.equal(n, 2);
    assert.deepEqual(locks.taken, [
      { key: "digest", waitMs: 0, leaseMs: 600_000, minHoldMs: 30_000 },
      { key: "digest", waitMs: 0, leaseMs: 600_000, minHoldMs: 30_000 },
    ]);
    assert.deepEqual(locks.released, ["digest", "digest"]);
  });

  it("skips the run when another replica holds the lock, quietly", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    locks.holder = "other";
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled([locked(() => void n++)], host, { clock });
    scheduler.start();
    await clock.advance(2500);
    assert.equal(n, 0);
    assert.deepEqual(host.logged, []);
  });

  it("skips the run, and says why, when the lock cannot be taken", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    locks.holder = "broken";
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled([locked(() => void n++)], host, { clock });
    scheduler.start();
    await clock.advance(1500);
    assert.equal(n, 0);
    assert.equal(host.logged.length, 2);
    assert.match(
      host.logged[0].message,
      /@Scheduled Jobs\.run: the lock "digest" could not be taken; this run is skipped/,
    );
    assert.equal((host.logged[0].error as Error).message, "database down");
  });

  it("logs a lock it could not release, and a run longer than lockAtMostFor", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    locks.failUnlock = true;
    const host = testHost({ locks });
    const slow = deferred();
    const { scheduler } = scheduled(
      [
        locked(() => slow.promise, { name: "digest", lockAtMostFor: "2s" }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(3000);
    slow.resolve();
    await settle();
    assert.deepEqual(host.logged.map((l) => l.level), ["warn", "error"]);
    assert.match(host.logged[0].message, /ran 3000 ms, longer than lockAtMostFor \(2000 ms\)/);
    assert.match(host.logged[1].message, /could not be released; it ends at lockAtMostFor/);
  });
});

describe("@SchedulerLock's manager", () => {
  it("is the one its lockManager names, when the app has several", async () => {
    const clock = new FakeClock(T0);
    const [first, second] = [new MemoryLocks(), new MemoryLocks()];
    const host = testHost({ locks: first, named: { first, second } });
    const { scheduler } = scheduled(
      [
        job({ fixedRate: 1000 }, () => {}, {
          lock: { name: "digest", lockAtMostFor: "1m", lockManager: "second" },
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(1);
    assert.deepEqual(first.taken, []);
    assert.deepEqual(second.taken.map((request) => request.key), ["digest"]);
    await scheduler.stop(1000);
  });
});

describe("a LockManager that misbehaves", () => {
  it("one that never answers: the run is skipped at lockAtMostFor, and the next tick tries again", async () => {
    const clock = new FakeClock(T0);
    let calls = 0;
    const locks = new (class extends LockManager {
      acquire(): Promise<HeldLock | undefined> {
        calls++;
        return calls === 1
          ? new Promise(() => {})
          : Promise.resolve({ release: () => Promise.resolve() });
      }
    })();
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedDelay: 1000 }, () => void n++, {
          lock: { name: "digest", lockAtMostFor: "5s" },
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(5000);
    assert.equal(n, 0);
    assert.match(
      host.logged[0].message,
      /the lock "digest" could not be taken; this run is skipped/,
    );
    assert.match((host.logged[0].error as Error).message, /did not take it within 5000 ms/);
    await clock.advance(1000);
    assert.equal(n, 1);
  });

  it("a lock taken only after stop(): the run never starts, and the lock goes back", async () => {
    const clock = new FakeClock(T0);
    const grant = deferred<HeldLock | undefined>();
    let unlocked = 0;
    const locks = new (class extends LockManager {
      acquire(): Promise<HeldLock | undefined> {
        return grant.promise;
      }
    })();
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedRate: "1h" }, () => void n++, {
          lock: { name: "digest", lockAtMostFor: "10s" },
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(1);
    // Nothing runs yet: stop() need not wait for a run that has not begun.
    assert.equal(await scheduler.stop(1000), undefined);
    grant.resolve({ release: () => void unlocked++ as unknown as Promise<void> });
    await clock.advance(60_000);
    assert.equal(n, 0, "nothing runs after stop()");
    assert.equal(unlocked, 1, "the lock taken late is released");
    assert.deepEqual(host.logged, []);
    assert.equal(clock.pending, 0, "no timer outlives the scheduler");
  });

  it("a LockManager that never answers leaves no timer behind once stopped", async () => {
    const clock = new FakeClock(T0);
    const locks = new (class extends LockManager {
      acquire(): Promise<HeldLock | undefined> {
        return new Promise(() => {});
      }
    })();
    const host = testHost({ locks });
    const { scheduler } = scheduled(
      [
        job({ fixedRate: "1h" }, () => {}, { lock: { name: "digest", lockAtMostFor: "10m" } }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(1);
    await scheduler.stop(1000);
    assert.equal(clock.pending, 0);
    assert.deepEqual(host.logged, []);
  });

  it("a lock granted after its taker gave up waiting is released, not left to block every replica", async () => {
    const clock = new FakeClock(T0);
    const grant = deferred<HeldLock | undefined>();
    let unlocked = 0;
    let calls = 0;
    const locks = new (class extends LockManager {
      acquire(): Promise<HeldLock | undefined> {
        calls++;
        return calls === 1 ? grant.promise : Promise.resolve(undefined);
      }
    })();
    const { scheduler } = scheduled(
      [
        job({ fixedRate: "1h" }, () => {}, { lock: { name: "digest", lockAtMostFor: "5s" } }),
      ],
      testHost({ locks }),
      { clock },
    );
    scheduler.start();
    await clock.advance(5001); // the wait is given up
    grant.resolve({ release: () => void unlocked++ as unknown as Promise<void> });
    await clock.advance(1);
    assert.equal(unlocked, 1);
  });

  it("a release() that never answers is given up at lockAtMostFor, and the schedule goes on", async () => {
    const clock = new FakeClock(T0);
    const locks = new (class extends LockManager {
      acquire(): Promise<HeldLock | undefined> {
        return Promise.resolve({ release: () => new Promise<void>(() => {}) });
      }
    })();
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedDelay: 1000 }, () => void n++, {
          lock: { name: "digest", lockAtMostFor: "2s" },
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(3500);
    assert.equal(n, 2);
    assert.match(host.logged[0].message, /could not be released; it ends at lockAtMostFor/);
  });

  it("null is a lock held elsewhere; anything else that is not a lock skips the run, said", async () => {
    for (const [answer, runs, logged] of [[null, 0, 0], [true, 0, 1], [{}, 0, 1]] as const) {
      const clock = new FakeClock(T0);
      const locks = new (class extends LockManager {
        acquire(): Promise<HeldLock | undefined> {
          return Promise.resolve(answer as unknown as HeldLock);
        }
      })();
      const host = testHost({ locks });
      let n = 0;
      const { scheduler } = scheduled(
        [
          job({ fixedRate: 1000 }, () => void n++, {
            lock: { name: "digest", lockAtMostFor: "1m" },
          }),
        ],
        host,
        { clock },
      );
      scheduler.start();
      await clock.advance(1);
      assert.equal(n, runs, JSON.stringify(answer));
      assert.equal(host.logged.length, logged, JSON.stringify(host.logged));
      if (logged > 0) {
        assert.match(
          (host.logged[0].error as Error).message,
          /neither a lock \(with release\(\)\) nor undefined/,
        );
      }
    }
  });
});
