import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WriterLock } from "../../src/sql/writer_lock.ts";

describe("WriterLock", () => {
  it("hands the lock to the callers in the order they asked, one at a time", async () => {
    const lock = new WriterLock();
    const order: string[] = [];
    await lock.acquire(1000, () => new Error("timed out"));
    const second = lock.acquire(1000, () => new Error("timed out")).then(() => order.push("b"));
    const third = lock.acquire(1000, () => new Error("timed out")).then(() => order.push("c"));
    order.push("a");
    lock.release();
    await second;
    assert.deepEqual(order, ["a", "b"]);
    lock.release();
    await third;
    assert.deepEqual(order, ["a", "b", "c"]);
    lock.release();
    // Free again: taken at once.
    await lock.acquire(1000, () => new Error("timed out"));
  });

  it("a caller that waited too long gives up, and is not handed the lock later", async () => {
    const lock = new WriterLock();
    await lock.acquire(1000, () => new Error("never"));
    await assert.rejects(lock.acquire(1, () => new Error("gave up")), /gave up/);
    const next = lock.acquire(1000, () => new Error("never"));
    lock.release();
    await next; // the one that gave up took no turn
    lock.release();
  });
});
