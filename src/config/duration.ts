// Durations as Spring Boot reads them: the one reader of every option and key that is a time span,
// so that each takes the same forms and a wrong one is told the same words.
import { ConfigError } from "./config_error.ts";
import { shownValue } from "../shown_value.ts";
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";

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
 * Milliseconds from a duration (a schedule's, a cache's time to live): a whole number of
 * milliseconds, or text as Spring Boot reads it (`500ms`, `30s`, `5m`, `2h`, `1d`; a bare number is
 * milliseconds) or ISO 8601 (`PT30S`, `PT1H30M`, `P1D`). `undefined` for anything else, and for
 * more than `max` ({@linkcode MAX_DURATION_MS}, what one timer can wait, unless given).
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
  const ms = spanOf(value);
  return ms !== undefined && ms <= max ? ms : undefined;
}

// The milliseconds `value` says, at any length a number holds exactly; `undefined` when it is no
// duration.
function spanOf(value: unknown): number | undefined {
  let ms: number;
  if (typeof value === "number") {
    ms = value;
  } else if (typeof value === "string") {
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
  } else {
    return undefined;
  }
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : undefined;
}

/** How a time span may be written, as every message about a wrong one shows it. */
export const DURATION_FORMS = 'milliseconds (250) or a duration ("250ms", "5s", "10m", "1h")';

/** The bounds of a time span option or key. */
export interface DurationBounds {
  /** The least it may be: 0 unless given (1: above 0). */
  readonly min?: number;
  /** The most it may be: {@linkcode MAX_DURATION_MS}, what one timer can wait, unless given. */
  readonly max?: number;
}

/**
 * Milliseconds from an option or a key that is a time span (`where` names it): a number of
 * milliseconds or a duration {@linkcode parseDuration} reads. Anything else, or one out of its
 * bounds, throws naming `where` and showing both forms, the value quoted so that nothing in it can
 * break the message's line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { durationOption } from "./duration.ts";
 *
 * assert.equal(durationOption("5s", "@Retryable({ delay })"), 5000);
 * assert.equal(durationOption(250, "@Retryable({ delay })"), 250);
 * assert.throws(() => durationOption("5 seconds", "@Retryable({ delay })"), {
 *   name: "TypeError",
 *   message: '@Retryable({ delay }): give milliseconds (250) or a duration ("250ms", "5s", ' +
 *     '"10m", "1h"), got "5 seconds"',
 * });
 * assert.throws(() => durationOption(0, "withTimeout(timeout)", { min: 1 }), /above 0, got 0$/);
 * ```
 */
export function durationOption(
  value: unknown,
  where: string,
  bounds: DurationBounds = {},
): number {
  return readDuration(value, where, bounds, TypeError);
}

/**
 * {@linkcode durationOption} for a configuration key: a wrong one is a `ConfigError` (`where`
 * names the file, the line and the key).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { durationKey } from "./duration.ts";
 * import { ConfigError } from "./config_error.ts";
 *
 * assert.equal(durationKey("15s", "application.yml:4: server.sse.heartbeat"), 15_000);
 * assert.throws(() => durationKey("soon", "application.yml:4: server.sse.heartbeat"), ConfigError);
 * ```
 */
export function durationKey(value: unknown, where: string, bounds: DurationBounds = {}): number {
  return readDuration(value, where, bounds, ConfigError);
}

/**
 * {@linkcode durationOption} throwing `Failure` for a wrong one (the error its caller's other checks
 * throw, such as a `DefinitionError` of a bean).
 */
export function readDuration(
  value: unknown,
  where: string,
  { min = 0, max = MAX_DURATION_MS }: DurationBounds,
  Failure: new (message: string) => Error,
): number {
  const ms = spanOf(value);
  if (ms !== undefined && ms >= min && ms <= max) return ms;
  // A span past a timer's reach is refused saying so: "30d" is well written, and too long.
  const over = ms !== undefined && ms > max;
  const said = [
    ...(min === 1 ? ["above 0"] : min > 1 ? [`at least ${min} ms`] : []),
    ...(max < MAX_DURATION_MS || over ? [`at most ${max} ms`] : []),
  ];
  throw new Failure(
    `${where}: give ${DURATION_FORMS}${said.map((b) => `, ${b}`).join("")}, got ${
      shownValue(value)
    }`,
  );
}
