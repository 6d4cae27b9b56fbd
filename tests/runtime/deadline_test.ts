import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deadline } from "../../src/runtime/deadline.ts";
import { Deferred } from "../../src/runtime/deferred.ts";

describe("deadline", () => {
  it("gives the promise's value when it comes first", async () => {
    assert.equal(await deadline(Promise.resolve(42), 60_000, () => new Error("late")), 42);
  });

  it("gives the promise's own failure when it comes first", async () => {
    const own = new Error("refused");
    await assert.rejects(deadline(Promise.reject(own), 60_000, () => new Error("late")), own);
  });

  it("rejects with late()'s error once the time passed, the promise still pending", async () => {
    const never = new Deferred<number>();
    const late = new Error("no answer within 1 ms");
    await assert.rejects(deadline(never.promise, 1, () => late), late);
  });

  it("asks late() for its error only when the time passed", async () => {
    let asked = 0;
    await deadline(Promise.resolve(), 60_000, () => (asked += 1, new Error("late")));
    assert.equal(asked, 0);
  });
});
