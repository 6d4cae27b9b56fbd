// What follows a run, against a small model: done once it succeeded, dead once refused or at its
// last attempt, given back when interrupted, else waiting the backoff's wait for that attempt.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Backoff } from "../../src/runtime/backoff.ts";
import { nextStep, type RunEnd } from "../../src/jobs/run_outcome.ts";
import { propertyOptions } from "../property.ts";

const ENDS: readonly RunEnd[] = ["succeeded", "failed", "refused", "interrupted"];

describe("nextStep", () => {
  it("agrees with the model for any run, attempt and backoff (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ENDS),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (end, attempt, attempts, delay, multiplier, random) => {
          const backoff = new Backoff({ delay, multiplier, maxDelay: 600_000 });
          const step = nextStep(end, attempt, attempts, backoff, () => random);
          const expected = end === "succeeded"
            ? { state: "done" }
            : end === "refused"
            ? { state: "dead" }
            : end === "interrupted"
            ? { state: "released" }
            : attempt >= attempts
            ? { state: "dead" }
            : { state: "waiting", delayMs: backoff.delayOf(attempt, () => random) };
          assert.deepEqual(step, expected);
          if (step.state === "waiting") {
            assert.ok(step.delayMs >= Math.min(delay, 600_000) && step.delayMs <= 600_000);
          }
        },
      ),
      propertyOptions(300),
    );
  });

  it("gives a job of one attempt no second run", () => {
    const backoff = new Backoff({ delay: 1000 });
    assert.deepEqual(nextStep("failed", 1, 1, backoff), { state: "dead" });
  });
});
