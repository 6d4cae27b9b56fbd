// When `@Retryable` tries again (Spring Framework 7's RetryPolicy and backoff): how long it waits
// before each retry, and which errors it retries. Pure: the randomness is given.
import { MAX_DURATION_MS } from "../config/duration.ts";

/** An error class, as `includes` and `excludes` name it. */
// deno-lint-ignore no-explicit-any
export type ErrorClass = abstract new (...args: any[]) => unknown;

/** A retry policy, its defaults filled in: Spring's names, milliseconds. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** The wait before the first retry. */
  readonly delay: number;
  /** What each wait is multiplied by for the next. */
  readonly multiplier: number;
  /** The longest wait; at most what one timer waits, `MAX_DURATION_MS`, whatever it says. */
  readonly maxDelay: number;
  /** How far a wait may stray from its value, scaled as the waits grow (0: none). */
  readonly jitter: number;
  /** Errors retried (any, when empty), unless a nearer rule of `excludes` says otherwise. */
  readonly includes: readonly ErrorClass[];
  /** Errors never retried, unless a nearer rule of `includes` says otherwise. */
  readonly excludes: readonly ErrorClass[];
}

/** Spring Framework 7's defaults: 3 retries, 1 s apart. */
export const RETRY_DEFAULTS: RetryPolicy = {
  maxRetries: 3,
  delay: 1000,
  multiplier: 1,
  maxDelay: MAX_DURATION_MS,
  jitter: 0,
  includes: [],
  excludes: [],
};

/**
 * The bounds of the wait before retry `n` (0: the first retry): `delay * multiplier^n`, at most
 * `maxDelay`, give or take the jitter scaled by how much the wait grew, never under `delay` nor
 * over `maxDelay`. Never over `MAX_DURATION_MS` either: a runtime waits about 1 ms for a timer
 * longer than that, so the retries would run back to back.
 */
export function delayBounds(policy: RetryPolicy, n: number): { min: number; max: number } {
  const maxDelay = Math.min(policy.maxDelay, MAX_DURATION_MS);
  // No wait grows from 0 (0 * Infinity, a multiplier^n past the numbers, would be NaN).
  const grown = policy.delay === 0 ? 0 : policy.delay * policy.multiplier ** n;
  const base = Math.min(grown, maxDelay);
  if (policy.jitter <= 0) return { min: base, max: base };
  const spread = policy.delay === 0 ? policy.jitter : policy.jitter * (base / policy.delay);
  return {
    min: Math.max(base - spread, Math.min(policy.delay, maxDelay)),
    max: Math.min(base + spread, maxDelay),
  };
}

/** The wait before retry `n`, `random` (in [0, 1)) picking within its jitter. */
export function retryDelay(policy: RetryPolicy, n: number, random: () => number): number {
  const { min, max } = delayBounds(policy, n);
  return Math.round(min + random() * (max - min));
}

// How deep a chain of causes is read: a cycle of causes ends here.
const MAX_CAUSES = 16;

/**
 * Whether `error` is retried: the error first, then its `cause`, then that one's (as Spring 7
 * matches the cause chain), the first that a rule names decides, and for each, the rule whose
 * class is nearest to its own (fewest steps up its prototype chain) wins; none matching: retried
 * when `includes` is empty.
 */
export function retries(policy: RetryPolicy, error: unknown): boolean {
  if (policy.includes.length === 0 && policy.excludes.length === 0) return true;
  let current = error;
  for (let depth = 0; depth < MAX_CAUSES; depth++) {
    if (typeof current !== "object" || current === null) break;
    const rule = ruleOf(policy, current);
    if (rule !== undefined) return rule;
    try {
      current = (current as { cause?: unknown }).cause;
    } catch {
      break;
    }
  }
  return policy.includes.length === 0;
}

// What the nearest rule says of `error`'s own class: retried, not, or nothing.
function ruleOf(policy: RetryPolicy, error: object): boolean | undefined {
  for (let p = Object.getPrototypeOf(error); p !== null; p = Object.getPrototypeOf(p)) {
    const type = Object.hasOwn(p, "constructor") ? p.constructor : undefined;
    if (policy.excludes.includes(type)) return false;
    if (policy.includes.includes(type)) return true;
  }
  return undefined;
}
