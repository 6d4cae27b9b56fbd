// The pure retry policy of @Retryable and @KafkaListener: which errors are retried (the waits are
// the backoff's, tests/runtime/backoff_test.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type ErrorClass,
  retries,
  RETRY_DEFAULTS,
  type RetryPolicy,
} from "../../src/tasks/retry_policy.ts";
import { propertyOptions } from "../property.ts";

describe("which errors are retried", () => {
  class Transient extends Error {}
  class Timeout extends Transient {}
  class Fatal extends Error {}
  const policy = (includes: RetryPolicy["includes"], excludes: RetryPolicy["excludes"]) => ({
    ...RETRY_DEFAULTS,
    includes,
    excludes,
  });

  it("any error without rules", () => {
    assert.equal(retries(RETRY_DEFAULTS, new Error("x")), true);
    assert.equal(retries(RETRY_DEFAULTS, "text"), true);
  });

  it("an excluded error, its subclasses too, is not retried", () => {
    assert.equal(retries(policy([], [Transient]), new Timeout()), false);
    assert.equal(retries(policy([], [Transient]), new Fatal()), true);
  });

  it("with includes, only what they name", () => {
    assert.equal(retries(policy([Transient], []), new Timeout()), true);
    assert.equal(retries(policy([Transient], []), new Fatal()), false);
  });

  it("the nearest rule wins", () => {
    assert.equal(retries(policy([Timeout], [Transient]), new Timeout()), true);
    assert.equal(retries(policy([Timeout], [Transient]), new Transient()), false);
    assert.equal(retries(policy([Error], [Transient]), new Timeout()), false);
    assert.equal(retries(policy([Transient], [Error]), new Timeout()), true);
    assert.equal(retries(policy([Transient], [Error]), new Fatal()), false);
  });
  it("an error's causes too, as Spring 7: the error first, then each cause in turn", () => {
    const wrapped = (inner: unknown) => new Error("wrapped", { cause: inner });
    assert.equal(retries(policy([Transient], []), wrapped(new Timeout())), true);
    assert.equal(retries(policy([Transient], []), wrapped(wrapped(new Timeout()))), true);
    assert.equal(retries(policy([], [Transient]), wrapped(new Timeout())), false);
    assert.equal(retries(policy([Transient], []), wrapped(new Fatal())), false);
    // The nearest in the chain decides: the error's own rule before its cause's.
    assert.equal(
      retries(policy([Transient], [Fatal]), new Fatal("x", { cause: new Timeout() })),
      false,
    );
    assert.equal(
      retries(policy([Transient], [Fatal]), new Timeout("x", { cause: new Fatal() })),
      true,
    );
    // A cause that is itself: the walk ends.
    const loop = new Error("loop");
    Object.assign(loop, { cause: loop });
    assert.equal(retries(policy([Transient], []), loop), false);
  });

  it("a class named in both lists: the exclude wins", () => {
    assert.equal(retries(policy([Transient], [Transient]), new Timeout()), false);
  });

  // The reference: a hierarchy given as each class's parent (-1: Error), the error's class, and
  // the rules as indexes (n: Error itself, n + 1: Object).
  interface Case {
    readonly parents: readonly number[];
    readonly thrown: number | string | undefined;
    readonly includes: readonly number[];
    readonly excludes: readonly number[];
  }

  function expected({ parents, thrown, includes, excludes }: Case): boolean {
    if (typeof thrown !== "number") return includes.length === 0;
    const n = parents.length;
    const chain: number[] = [];
    for (let c = thrown; c !== -1; c = parents[c]) chain.push(c);
    chain.push(n, n + 1);
    for (const c of chain) {
      if (excludes.includes(c)) return false;
      if (includes.includes(c)) return true;
    }
    return includes.length === 0;
  }

  const cases: fc.Arbitrary<Case> = fc.integer({ min: 1, max: 8 }).chain((n) =>
    fc.record({
      // Each class extends one made before it, or Error.
      parents: fc.tuple(
        ...Array.from({ length: n }, (_, i) => fc.integer({ min: -1, max: i - 1 })),
      ),
      thrown: fc.oneof(
        { weight: 5, arbitrary: fc.integer({ min: 0, max: n - 1 }) },
        fc.constantFrom("text", undefined),
      ),
      includes: fc.uniqueArray(fc.integer({ min: 0, max: n + 1 }), { maxLength: 4 }),
      excludes: fc.uniqueArray(fc.integer({ min: 0, max: n + 1 }), { maxLength: 4 }),
    })
  );

  it("the nearest rule wins over random hierarchies; a tie goes to the exclude", () => {
    fc.assert(
      fc.property(cases, (c) => {
        const classes: ErrorClass[] = [];
        for (const parent of c.parents) {
          const base = (parent === -1 ? Error : classes[parent]) as typeof Error;
          classes.push(class extends base {});
        }
        const rule = (i: number): ErrorClass =>
          i < classes.length ? classes[i] : i === classes.length ? Error : Object;
        const thrown = typeof c.thrown === "number"
          ? new (classes[c.thrown] as typeof Error)("x")
          : c.thrown;
        const got = retries(policy(c.includes.map(rule), c.excludes.map(rule)), thrown);
        assert.equal(got, expected(c));
      }),
      propertyOptions(300),
    );
  });
});
