// Durations as Spring Boot reads them, for `@Scheduled`'s and the caches' options and keys.

/** The longest duration Thaw takes: about 24.8 days, what one timer can wait. */
export const MAX_DURATION_MS: number = 2_147_483_647;

const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
// Spring Boot reads the unit in any case: "30S" is "30s".
const SIMPLE = /^(\d+)(ms|s|m|h|d)?$/i;
// ISO 8601 as Java's `Duration.parse` takes it, in days, hours, minutes and (decimal) seconds.
const ISO = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,3}))?S)?)?$/i;

/**
 * Milliseconds from a duration (a schedule's, a cache's time to live): a whole number of milliseconds, or text as Spring
 * Boot reads it (`500ms`, `30s`, `5m`, `2h`, `1d`; a bare number is milliseconds) or ISO 8601
 * (`PT30S`, `PT1H30M`, `P1D`). `undefined` for anything else, and for more than
 * `max` ({@linkcode MAX_DURATION_MS}, what one timer can wait, unless given).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDuration } from "./duration.ts";
 *
 * assert.equal(parseDuration("30s"), 30_000);
 * assert.equal(parseDuration("PT1M30S"), 90_000);
 * assert.equal(parseDuration(250), 250);
 * assert.equal(parseDuration("thirty seconds"), undefined);
 * ```
 */
export function parseDuration(
  value: number | string,
  max: number = MAX_DURATION_MS,
): number | undefined {
  let ms: number;
  if (typeof value === "number") {
    ms = value;
  } else {
    const text = value.trim();
    const simple = SIMPLE.exec(text);
    const iso = simple === null ? ISO.exec(text) : null;
    if (simple !== null) {
      ms = Number(simple[1]) * UNITS[(simple[2] ?? "ms").toLowerCase()];
    } else if (iso !== null && text.length > 1 && !/T$/i.test(text)) {
      const [, d, h, m, s, frac] = iso;
      ms = Number(d ?? 0) * UNITS.d + Number(h ?? 0) * UNITS.h + Number(m ?? 0) * UNITS.m +
        Number(s ?? 0) * UNITS.s + Number((frac ?? "").padEnd(3, "0"));
    } else {
      return undefined;
    }
  }
  return Number.isSafeInteger(ms) && ms >= 0 && ms <= max ? ms : undefined;
}
