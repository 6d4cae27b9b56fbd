// The one backoff: its waits against Spring Framework 7's formula, and the options that write it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Backoff, readBackoff } from "../../src/runtime/backoff.ts";
import { DURATION_FORMS } from "../../src/config/duration.ts";
import { MAX_DURATION_MS } from "../../src/runtime/timer_limit.ts";
import { propertyOptions } from "../property.ts";

interface Written {
  readonly delay: number;
  readonly multiplier: number;
  readonly maxDelay: number;
  readonly jitter: number;
}

const written: fc.Arbitrary<Written> = fc.record({
  delay: fc.integer({ min: 0, max: 10_000 }),
  multiplier: fc.double({ min: 1, max: 5, noNaN: true }),
  maxDelay: fc.integer({ min: 0, max: 600_000 }),
  jitter: fc.integer({ min: 0, max: 5_000 }),
});

// Failure `attempt` (1: the first), as tries count them.
const attempts = fc.integer({ min: 1, max: 21 });

describe("Backoff", () => {
  it("without jitter: delay * multiplier^(attempt - 1), at most maxDelay", () => {
    fc.assert(
      fc.property(written, attempts, (w, attempt) => {
        const backoff = new Backoff({ ...w, jitter: 0 });
        const expected = Math.min(w.delay * w.multiplier ** (attempt - 1), w.maxDelay);
        assert.deepEqual(backoff.boundsOf(attempt), { min: expected, max: expected });
        assert.equal(backoff.delayOf(attempt, () => 0.5), Math.round(expected));
      }),
      propertyOptions(),
    );
  });

  it("never shrinks from one failure to the next, without jitter", () => {
    fc.assert(
      fc.property(written, attempts, (w, attempt) => {
        const backoff = new Backoff({ ...w, jitter: 0 });
        assert.ok(backoff.delayOf(attempt + 1) >= backoff.delayOf(attempt));
      }),
      propertyOptions(),
    );
  });

  it("with jitter: within the scaled jitter of the wait, never under delay nor over maxDelay", () => {
    fc.assert(
      fc.property(
        written,
        attempts,
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (w, attempt, random) => {
          const backoff = new Backoff(w);
          const base = Math.min(w.delay * w.multiplier ** (attempt - 1), w.maxDelay);
          const spread = w.delay === 0 ? w.jitter : w.jitter * (base / w.delay);
          const wait = backoff.delayOf(attempt, () => random);
          const { min, max } = backoff.boundsOf(attempt);
          assert.ok(min <= max + 1e-9, `bounds ${min}..${max}`);
          assert.ok(wait >= Math.floor(min) && wait <= Math.ceil(max), `${wait} in ${min}..${max}`);
          assert.ok(wait <= Math.ceil(w.maxDelay));
          assert.ok(wait >= Math.floor(Math.min(w.delay, w.maxDelay)));
          assert.ok(wait >= Math.floor(base - spread) && wait <= Math.ceil(base + spread));
        },
      ),
      propertyOptions(),
    );
  });

  it("every wait, whatever the options, is one a timer can wait (at most 2^31 - 1 ms)", () => {
    const any = fc.record({
      delay: fc.oneof(
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 0, max: 1e300, noNaN: true }),
      ),
      multiplier: fc.oneof(fc.constant(2), fc.double({ min: 1, max: 1e6, noNaN: true })),
      maxDelay: fc.oneof(
        fc.constant(undefined),
        fc.constant(Number.MAX_SAFE_INTEGER),
        fc.double({ min: 0, max: 1e300, noNaN: true }),
      ),
      jitter: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e300, noNaN: true })),
    });
    fc.assert(
      fc.property(
        any,
        fc.integer({ min: 1, max: 2_001 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (options, attempt, random) => {
          const wait = new Backoff(options).delayOf(attempt, () => random);
          assert.ok(Number.isInteger(wait) && wait >= 0, `${wait} is a wait`);
          assert.ok(wait <= 2 ** 31 - 1, `${wait} is over what a timer waits`);
        },
      ),
      propertyOptions(500),
    );
    // 1 s doubling: from the 23rd failure on, at the longest.
    const doubling = new Backoff({ delay: 1000, multiplier: 2 });
    assert.equal(doubling.delayOf(22), 1000 * 2 ** 21);
    assert.equal(doubling.delayOf(23), 2 ** 31 - 1);
    assert.equal(doubling.delayOf(30), 2 ** 31 - 1);
  });

  it("a multiplier of 1 by default: the same wait each time", () => {
    const same = new Backoff({ delay: 1000 });
    assert.deepEqual([1, 2, 3].map((attempt) => same.delayOf(attempt)), [1000, 1000, 1000]);
  });
});

describe("readBackoff", () => {
  const defaults = new Backoff({ delay: 1000, multiplier: 2, maxDelay: 30_000 });

  it("reads durations as text or milliseconds, over the defaults", () => {
    assert.deepEqual(
      readBackoff({ delay: "200ms", maxDelay: "2s", jitter: 50 }, "w", defaults),
      new Backoff({ delay: 200, multiplier: 2, maxDelay: 2000, jitter: 50 }),
    );
    assert.deepEqual(readBackoff({}, "w", defaults), defaults);
    // A delay over the default longest wait raises it rather than being cut by it.
    assert.equal(readBackoff({ delay: "1m" }, "w", defaults).maxDelay, 60_000);
  });

  it("refuses what it cannot wait by, naming the option and both forms", () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ delay: "soon" }, `w: delay: give ${DURATION_FORMS}, got "soon"`],
      [{ jitter: -1 }, `w: jitter: give ${DURATION_FORMS}, got -1`],
      [
        { maxDelay: 2 ** 31 },
        `w: maxDelay: give ${DURATION_FORMS}, at most ${MAX_DURATION_MS} ms, got 2147483648`,
      ],
      [{ multiplier: 0.5 }, "w: multiplier is a number, 1 or more, got 0.5"],
      [{ multiplier: "2" }, 'w: multiplier is a number, 1 or more, got "2"'],
      [{ delay: 500, maxDelay: 100 }, "w: maxDelay (100 ms) is under delay (500 ms)"],
    ];
    for (const [given, message] of refusals) {
      assert.throws(() => readBackoff(given, "w", defaults), { name: "TypeError", message });
    }
  });
});
