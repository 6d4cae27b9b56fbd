// How long to wait before trying again, after failures in a row: the one formula every retry,
// restart, reconnect and relay in Thaw waits by (Spring Framework 7's `ExponentialBackOff`, its
// names and its jitter). Pure: the randomness is given.
import { durationOption } from "../config/duration.ts";
import { MAX_DURATION_MS } from "./timer_limit.ts";
import { shownValue } from "../shown_value.ts";

/** How waits grow: Spring Framework 7's names, in milliseconds. */
export interface BackoffOptions {
  /** The wait after the first failure. */
  readonly delay: number;
  /** What each wait is multiplied by for the next: 1 (the same wait each time) by default. */
  readonly multiplier?: number | undefined;
  /** The longest wait; at most {@linkcode MAX_DURATION_MS}, what one timer waits, whatever it says. */
  readonly maxDelay?: number | undefined;
  /**
   * How far the first wait may stray from `delay`, either way, scaled as the waits grow (0: none),
   * so that many clients failing together do not all come back at once.
   */
  readonly jitter?: number | undefined;
}

/**
 * Waits that grow by a factor after each failure in a row: `delay * multiplier^(attempt - 1)`, at
 * most `maxDelay`, give or take the jitter scaled by how much the wait grew, never under `delay`
 * nor over `maxDelay`. Never over {@linkcode MAX_DURATION_MS} either: a runtime waits about 1 ms for
 * a timer longer than that, so the tries would run back to back.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Backoff } from "./backoff.ts";
 *
 * const backoff = new Backoff({ delay: 100, multiplier: 2, maxDelay: 1000 });
 * assert.deepEqual([1, 2, 3, 4, 5].map((attempt) => backoff.delayOf(attempt)), [
 *   100,
 *   200,
 *   400,
 *   800,
 *   1000,
 * ]);
 * ```
 */
export class Backoff {
  /** The wait after the first failure. */
  readonly delay: number;
  /** What each wait is multiplied by for the next. */
  readonly multiplier: number;
  /** The longest wait. */
  readonly maxDelay: number;
  /** How far the first wait may stray, either way. */
  readonly jitter: number;

  constructor({ delay, multiplier = 1, maxDelay = MAX_DURATION_MS, jitter = 0 }: BackoffOptions) {
    this.delay = delay;
    this.multiplier = multiplier;
    this.maxDelay = Math.min(maxDelay, MAX_DURATION_MS);
    this.jitter = jitter;
  }

  /** The least and the most the wait after failure `attempt` (1: the first) may be. */
  boundsOf(attempt: number): { readonly min: number; readonly max: number } {
    const { delay, maxDelay, jitter } = this;
    // No wait grows from 0 (0 * Infinity, a multiplier^n past the numbers, would be NaN).
    const grown = delay === 0 ? 0 : delay * this.multiplier ** Math.max(attempt - 1, 0);
    const base = Math.min(grown, maxDelay);
    if (jitter <= 0) return { min: base, max: base };
    const spread = delay === 0 ? jitter : jitter * (base / delay);
    return {
      min: Math.max(base - spread, Math.min(delay, maxDelay)),
      max: Math.min(base + spread, maxDelay),
    };
  }

  /**
   * The wait, in whole milliseconds, after failure `attempt` (1: the first), `random` (in [0, 1))
   * picking within its jitter.
   */
  delayOf(attempt: number, random: () => number = Math.random): number {
    const { min, max } = this.boundsOf(attempt);
    return Math.round(min + random() * (max - min));
  }
}

/** The options a backoff is written with, in a decorator's options or a configuration. */
export const BACKOFF_KEYS: readonly string[] = ["delay", "multiplier", "maxDelay", "jitter"];

/**
 * The backoff `given` writes (`delay`, `maxDelay` and `jitter` in milliseconds or as durations,
 * `multiplier` 1 or more), each key it leaves out taken from `defaults`; `maxDelay` left out is
 * never under `delay`. A wrong one throws a `TypeError` naming `where` and the option.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Backoff, readBackoff } from "./backoff.ts";
 *
 * const defaults = new Backoff({ delay: 1000, multiplier: 2, maxDelay: 30_000 });
 * const backoff = readBackoff({ delay: "5s", maxDelay: "1m" }, "@Example({ retry })", defaults);
 * assert.deepEqual([1, 2, 5].map((attempt) => backoff.delayOf(attempt)), [5000, 10_000, 60_000]);
 * assert.throws(
 *   () => readBackoff({ multiplier: 0.5 }, "@Example({ retry })", defaults),
 *   { message: "@Example({ retry }): multiplier is a number, 1 or more, got 0.5" },
 * );
 * ```
 */
export function readBackoff(
  given: Readonly<Record<string, unknown>>,
  where: string,
  defaults: Backoff,
): Backoff {
  const span = (key: "delay" | "maxDelay" | "jitter"): number =>
    given[key] === undefined ? defaults[key] : durationOption(given[key], `${where}: ${key}`);
  const { multiplier = defaults.multiplier } = given;
  if (typeof multiplier !== "number" || !Number.isFinite(multiplier) || multiplier < 1) {
    throw new TypeError(
      `${where}: multiplier is a number, 1 or more, got ${shownValue(multiplier)}`,
    );
  }
  const delay = span("delay");
  const maxDelay = given.maxDelay === undefined
    ? Math.max(delay, defaults.maxDelay)
    : span("maxDelay");
  if (maxDelay < delay) {
    throw new TypeError(`${where}: maxDelay (${maxDelay} ms) is under delay (${delay} ms)`);
  }
  return new Backoff({ delay, multiplier, maxDelay, jitter: span("jitter") });
}
