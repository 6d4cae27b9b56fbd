// The pure retry policy of @Retryable: the waits against Spring Framework 7's formula, and which
// errors are retried.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  delayBounds,
  type ErrorClass,
  retries,
  RETRY_DEFAULTS,
  retryDelay,
  type RetryPolicy,
} from "../../src/tasks/retry_policy.ts";
import { propertyOptions } from "../property.ts";

const policies: fc.Arbitrary<RetryPolicy> = fc.record({
  maxRetries: fc.integer({ min: 0, max: 10 }),
  delay: fc.integer({ min: 0, max: 10_000 }),
  multiplier: fc.double({ min: 1, max: 5, noNaN: true }),
  maxDelay: fc.integer({ min: 0, max: 600_000 }),
  jitter: fc.integer({ min: 0, max: 5_000 }),
  includes: fc.constant([]),
  excludes: fc.constant([]),
});

describe("retry waits", () => {
  it("without jitter: delay * multiplier^n, at most maxDelay", () => {
    fc.assert(
      fc.property(policies, fc.integer({ min: 0, max: 20 }), (p, n) => {
        const policy = { ...p, jitter: 0 };
        const expected = Math.min(policy.delay * policy.multiplier ** n, policy.maxDelay);
        assert.deepEqual(delayBounds(policy, n), { min: expected, max: expected });
        assert.equal(retryDelay(policy, n, () => 0.5), Math.round(expected));
      }),
      propertyOptions(),
    );
  });

  it("with jitter: within the scaled jitter of the wait, never under delay nor over maxDelay", () => {
    fc.assert(
      fc.property(
        policies,
        fc.integer({ min: 0, max: 20 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (policy, n, random) => {
          const base = Math.min(policy.delay * policy.multiplier ** n, policy.maxDelay);
          const spread = policy.delay === 0 ? policy.jitter : policy.jitter * (base / policy.delay);
          const wait = retryDelay(policy, n, () => random);
          const { min, max } = delayBounds(policy, n);
          assert.ok(min <= max + 1e-9, `bounds ${min}..${max}`);
          assert.ok(wait >= Math.floor(min) && wait <= Math.ceil(max), `${wait} in ${min}..${max}`);
          assert.ok(wait <= Math.ceil(policy.maxDelay));
          assert.ok(wait >= Math.floor(Math.min(policy.delay, policy.maxDelay)));
          assert.ok(wait >= Math.floor(base - spread) && wait <= Math.ceil(base + spread));
        },
      ),
      propertyOptions(),
    );
  });

  it("every wait, whatever the options, is one a timer can wait (at most 2^31 - 1 ms)", () => {
    const anyPolicy: fc.Arbitrary<RetryPolicy> = fc.record({
      maxRetries: fc.integer({ min: 0, max: 2_000 }),
      delay: fc.oneof(
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 0, max: 1e300, noNaN: true }),
      ),
      multiplier: fc.oneof(fc.constant(2), fc.double({ min: 1, max: 1e6, noNaN: true })),
      maxDelay: fc.oneof(
        fc.constant(RETRY_DEFAULTS.maxDelay),
        fc.constant(Number.MAX_SAFE_INTEGER),
        fc.double({ min: 0, max: 1e300, noNaN: true }),
      ),
      jitter: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e300, noNaN: true })),
      includes: fc.constant([]),
      excludes: fc.constant([]),
    });
    fc.assert(
      fc.property(
        anyPolicy,
        fc.integer({ min: 0, max: 2_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (policy, n, random) => {
          const wait = retryDelay(policy, n, () => random);
          assert.ok(Number.isInteger(wait) && wait >= 0, `${wait} is a wait`);
          assert.ok(wait <= 2 ** 31 - 1, `${wait} is over what a timer waits`);
        },
      ),
      propertyOptions(500),
    );
    // @Retryable({ maxRetries: 30, multiplier: 2 }): from retry 22 on, at the longest.
    const doubling = { ...RETRY_DEFAULTS, maxRetries: 30, multiplier: 2 };
    assert.equal(retryDelay(doubling, 21, Math.random), 1000 * 2 ** 21);
    assert.equal(retryDelay(doubling, 22, Math.random), 2 ** 31 - 1);
    assert.equal(retryDelay(doubling, 29, Math.random), 2 ** 31 - 1);
  });

  it("Spring's defaults: 3 retries, 1 s apart", () => {
    assert.equal(RETRY_DEFAULTS.maxRetries, 3);
    assert.deepEqual([0, 1, 2].map((n) => retryDelay(RETRY_DEFAULTS, n, Math.random)), [
      1000,
      1000,
      1000,
    ]);
  });
});

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
