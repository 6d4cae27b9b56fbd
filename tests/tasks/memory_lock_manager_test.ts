// The in-process lock manager: first come first served, and a least hold kept after a release.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MemoryLockManager } from "../../src/tasks/memory_lock_manager.ts";

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
});
