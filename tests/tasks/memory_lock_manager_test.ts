// The in-process lock manager: first come first served, and a least hold kept after a release.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { MemoryLockManager } from "../../src/tasks/memory_lock_manager.ts";
import type { LockRequest } from "../../src/tasks/lock_manager.ts";
import { watchChild } from "../child_output.ts";
import { scriptCommand } from "../runtime.ts";

describe("MemoryLockManager", () => {
  it("hands a released key to the first waiter, in the order they asked", async () => {
    const locks = new MemoryLockManager();
    const first = await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 });
    assert.notEqual(first, undefined);
    const order: string[] = [];
    const waiting = ["b", "c"].map((who) =>
      locks.acquire({ key: "k", waitMs: 60_000, leaseMs: 1000 }).then((held) => {
        order.push(who);
        return held;
      })
    );
    assert.equal(await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 }), undefined);
    await first!.release();
    const b = await waiting[0];
    assert.deepEqual(order, ["b"]);
    await b!.release();
    await (await waiting[1])!.release();
    assert.deepEqual(order, ["b", "c"]);
  });

  it("gives each new holder a greater token, and renews a lock while it is held", async () => {
    const locks = new MemoryLockManager();
    const request = { key: "daemon", waitMs: 60_000, leaseMs: 1000 };
    const first = (await locks.acquire(request))!;
    const waiting = locks.acquire(request);
    assert.equal(await first.renew!(1000), true);
    await assert.rejects(first.renew!(1.5), /renew\(leaseMs\) of the lock "daemon"/);
    await first.release();
    assert.equal(await first.renew!(1000), false);
    const second = (await waiting)!;
    assert.ok(second.token! > first.token!, `${second.token} after ${first.token}`);
    await second.release();
  });

  it("keeps a released key until minHoldMs after its taking", async () => {
    const locks = new MemoryLockManager();
    const takenAt = performance.now();
    const held = await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000, minHoldMs: 200 });
    await held!.release();
    assert.equal(await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 }), undefined);
    const next = await locks.acquire({ key: "k", waitMs: 60_000, leaseMs: 1000 });
    assert.notEqual(next, undefined);
    assert.ok(performance.now() - takenAt >= 200, "not before its least hold");
    await next!.release();
    assert.notEqual(await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 }), undefined);
  });

  it("refuses a request the other managers refuse, naming the key and what is wrong", async () => {
    const locks = new MemoryLockManager();
    const wrong: [Partial<LockRequest>, RegExp][] = [
      [{ key: "" }, /MemoryLockManager: the lock's key must be a non-empty text, got ""/],
      [{ waitMs: -1 }, /waitMs of the lock "k" is -1/],
      [{ waitMs: NaN }, /waitMs of the lock "k" is NaN/],
      // A timer holds 2^31 - 1 ms: a longer one fires at once, and the wait would end at once.
      [{ waitMs: 2 ** 31 }, /waitMs of the lock "k" is 2147483648/],
      [{ leaseMs: 0 }, /leaseMs of the lock "k" is 0/],
      [{ minHoldMs: NaN }, /minHoldMs of the lock "k" is NaN/],
      [{ minHoldMs: -5 }, /minHoldMs of the lock "k" is -5/],
      [{ minHoldMs: 1001 }, /minHoldMs of the lock "k" is 1001; .* to its leaseMs \(1000\)/],
    ];
    for (const [change, message] of wrong) {
      await assert.rejects(
        locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000, ...change } as LockRequest),
        (error: Error) => error instanceof TypeError && message.test(error.message),
        JSON.stringify(change),
      );
    }
    // Nothing was taken by a refused request.
    assert.notEqual(await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 }), undefined);
  });

  it("lets the process end while a released lock keeps its least hold", async () => {
    const script = fileURLToPath(new URL("../fixtures/memory_lock_hold.ts", import.meta.url));
    const [command, args] = scriptCommand(script);
    const child = watchChild(command, args);
    await child.line(/^released$/);
    // Held for 2^31 - 1 ms after its release: a timer that kept the process alive would hold it
    // for 24 days; the test's own time-out ends a run that waits on it.
    assert.equal(await child.exited, 0, child.stderr());
  });
});
