// How Thaw's Redis clients wait before reconnecting: from about 50 ms, doubling, never past 2 s,
// so that a Redis restart is met within seconds and a Redis that stays down is not hammered.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { REDIS_RECONNECT } from "../../src/runtime/redis_reconnect.ts";

describe("REDIS_RECONNECT", () => {
  it("waits 50 ms first, doubling, at most 2 s, whatever the jitter picks", () => {
    for (const random of [() => 0, () => 0.5, () => 0.999]) {
      const waits = Array.from({ length: 12 }, (_, i) => REDIS_RECONNECT.delayOf(i + 1, random));
      assert.ok(waits[0] >= 50 && waits[0] <= 75, `first: ${waits[0]}`);
      assert.ok(waits.every((ms) => ms >= 50 && ms <= 2000), waits.join(", "));
      assert.ok(waits[11] >= 1000, `the last waits near the bound: ${waits[11]}`);
    }
    assert.deepEqual(REDIS_RECONNECT.boundsOf(12), { min: 1000, max: 2000 });
  });
});
