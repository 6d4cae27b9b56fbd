import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { FailureStreak, kindOf } from "../../../src/kafka/listener/failure_streak.ts";
import { propertyOptions } from "../../property.ts";

// A failure as the Kafka client gives them: a few kinds, each with numbers that change.
const failureArb = fc.record({
  kind: fc.constantFrom("Connection to b{n}:9092 failed.", "fetch failed {n} times.", "refused"),
  n: fc.nat(1000),
}).map(({ kind, n }) => new Error(kind.replace("{n}", String(n))));

describe("FailureStreak", () => {
  it("says the first, each new kind at once, and every tenth; numbers make no new kind", () => {
    fc.assert(
      fc.property(fc.array(failureArb, { maxLength: 200 }), (failures) => {
        const streak = new FailureStreak();
        const seen = new Set<string>();
        let said = 0;
        for (const [i, error] of failures.entries()) {
          const kind = error.message.replace(/\d+/g, "#");
          const expected = !seen.has(kind) || (i + 1) % 10 === 0;
          seen.add(kind);
          const says = streak.failed(error);
          assert.equal(says, expected, `failure ${i + 1}: ${error.message}`);
          if (says) said += 1;
        }
        assert.equal(streak.count, failures.length);
        assert.ok(said <= seen.size + Math.floor(failures.length / 10));
      }),
      propertyOptions(),
    );
  });

  it("starts again after a success: the same kind is said again", () => {
    const streak = new FailureStreak();
    assert.equal(streak.failed(new Error("refused")), true);
    assert.equal(streak.failed(new Error("refused")), false);
    streak.succeeded();
    assert.equal(streak.count, 0);
    assert.equal(streak.failed(new Error("refused")), true);
  });

  it("keeps 16 kinds a streak at most: past them, every tenth only", () => {
    const streak = new FailureStreak();
    const says = Array.from(
      { length: 30 },
      (_, i) => streak.failed(new Error(`kind ${"x".repeat(i)}`)),
    );
    assert.deepEqual(says.map((s, i) => s ? i + 1 : 0).filter((n) => n > 0), [
      ...Array.from({ length: 16 }, (_, i) => i + 1),
      20,
      30,
    ]);
  });
});

describe("kindOf", () => {
  it("tells apart the refusals one message of the client wraps", () => {
    const wrapped = (inner: string) =>
      Object.assign(new AggregateError([new Error(inner)], "Received response with error (v17)"), {
        code: "PLT_KFK_RESPONSE",
      });
    assert.notEqual(kindOf(wrapped("offset out of range")), kindOf(wrapped("not the leader")));
    assert.equal(kindOf(wrapped("broker 1")), kindOf(wrapped("broker 2")));
  });

  it("never throws, whatever it is given", () => {
    const hostile = new Error("x");
    Object.defineProperty(hostile, "message", {
      get() {
        throw new Error("no");
      },
    });
    const values: unknown[] = [hostile, Object.create(null), Symbol("s"), null, undefined, 1n];
    for (const value of values) assert.equal(typeof kindOf(value), "string");
    fc.assert(
      fc.property(fc.anything(), (value) => typeof kindOf(value) === "string"),
      propertyOptions(),
    );
  });
});
