// When a job runs next: the pure half of the scheduler. Durations in Spring Boot's forms, cron
// expressions read by croner, and which job an edge runtime's cron trigger names.
import type { Cron } from "croner";
import { definedFields } from "../defined_fields.ts";

/** croner's `Cron` class: what {@linkcode cronTrigger} reads expressions with. */
export type CronClass = typeof Cron;

/**
 * Imports croner. Not a static import: croner runs code as it loads, which a bundler would keep
 * in every bundle that reaches this module, `@Scheduled` used or not.
 */
export async function loadCron(): Promise<CronClass> {
  return (await import("croner")).Cron;
}

/** A cron expression, read: when it fires next. */
export interface CronTrigger {
  /** The expression with its fields separated by one space. */
  readonly expression: string;
  /** The first time it fires strictly after `after` (ms since the epoch); `undefined`: never. */
  next(after: number): number | undefined;
}

/**
 * Reads a cron expression: Spring's six fields (second, minute, hour, day of month, month, day
 * of week) or the five of Unix cron (seconds 0), names (`MON`, `JAN`), `?`, `L`, `W`, `#` and
 * macros (`@daily`), in `zone` (an IANA time zone; the runtime's own by default). As Spring, a
 * day must match both the day of month and the day of week when both are given. Throws a
 * `TypeError` saying what is wrong.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cronTrigger, loadCron } from "./trigger.ts";
 *
 * const Cron = await loadCron();
 * const everyFiveMinutes = cronTrigger(Cron, "0 0/5 * * * *", "UTC");
 * assert.equal(
 *   new Date(everyFiveMinutes.next(Date.parse("2026-03-01T10:02:00Z"))!).toISOString(),
 *   "2026-03-01T10:05:00.000Z",
 * );
 * assert.throws(() => cronTrigger(Cron, "0 0 25 * * *"), /hour/);
 * ```
 */
export function cronTrigger(Cron: CronClass, expression: string, zone?: string): CronTrigger {
  const normalized = expression.trim().split(/\s+/).join(" ");
  if (zone !== undefined) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: zone });
    } catch {
      throw new TypeError(`zone "${zone}" is not a time zone this runtime knows (IANA names)`);
    }
  }
  let cron: InstanceType<CronClass>;
  try {
    cron = new Cron(normalized, {
      paused: true,
      mode: "5-or-6-parts",
      domAndDow: true,
      // Spring takes `0/5` (from 0, every 5) as Quartz does.
      sloppyRanges: true,
      ...definedFields({ timezone: zone }),
    });
  } catch (error) {
    throw new TypeError(`cron "${expression}": ${(error as Error).message}`);
  }
  return {
    expression: normalized,
    next(after) {
      // croner counts from the next whole second: a run due at :00.000 must not come again.
      return cron.nextRun(new Date(after))?.getTime();
    },
  };
}

/**
 * Whether a job's cron expression is the one an edge runtime's trigger names (Cloudflare's
 * `event.cron`, five fields): the same fields, or the job's six with seconds `0` and the other
 * five the same. Spaces and letter case do not count.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sameCron } from "./trigger.ts";
 *
 * assert.equal(sameCron("0 0/5 * * * *", "0/5 * * * *"), true);
 * assert.equal(sameCron("0 0 * * MON", "0 0 * * mon"), true);
 * assert.equal(sameCron("30 0/5 * * * *", "0/5 * * * *"), false);
 * ```
 */
export function sameCron(job: string, trigger: string): boolean {
  const fields = (text: string) => text.trim().toLowerCase().split(/\s+/);
  const a = fields(job);
  const b = fields(trigger);
  if (a.length === 6 && a[0] === "0" && b.length === 5) a.shift();
  return a.length === b.length && a.every((field, i) => field === b[i]);
}
