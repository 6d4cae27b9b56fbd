import { markScheduledMethod } from "./scheduled_jobs.ts";
import { DecoratorOptions } from "./decorator_options.ts";
import { schedulingFeature } from "./scheduling_feature.ts";
import type { ScheduledOptions } from "./scheduled_options.ts";

/** What {@linkcode Scheduled} returns: a decorator for an instance method that takes no arguments. */
export type ScheduledDecorator = <This>(
  value: (this: This) => unknown,
  context: ClassMethodDecoratorContext<This, (this: This) => unknown>,
) => void;

const TRIGGERS = ["cron", "fixedRate", "fixedDelay"] as const;
const KEYS: readonly string[] = ["cron", "fixedRate", "fixedDelay", "zone", "initialDelay"];

/**
 * Runs a bean's method on a clock: on a cron expression, or every so long. Schedules start when
 * the app starts serving (`listen(app)`, or `app.start()` for an app served another way), never
 * at `bootstrap`; `app.close()` stops them and waits for a run in progress. A job never overlaps
 * itself: a run that outlasts its period delays the next. A run that throws is logged with the
 * class and method, and the schedule goes on. `thaw.scheduling.enabled: false` runs none.
 *
 * On Cloudflare Workers, `export default { fetch: app.fetch, scheduled: app.scheduled }` runs
 * the cron jobs whose expression is the trigger's. Add {@linkcode SchedulerLock} to run a job on
 * one replica per tick.
 *
 * A bad expression, a duration that cannot be read or a method with parameters stops
 * `bootstrap`, naming the class and the method.
 *
 * @param options one of `cron` (six fields or five, with `zone`), `fixedRate` or `fixedDelay`
 * (milliseconds, or text: `"10s"`, `"PT5M"`), the last two with `initialDelay`
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/scheduling.md#scheduled
 */
export function Scheduled(options: ScheduledOptions): ScheduledDecorator {
  const read = new DecoratorOptions(
    "@Scheduled",
    options,
    KEYS,
    "give { cron }, { fixedRate } or { fixedDelay }",
  );
  const { given } = read;
  const triggers = TRIGGERS.filter((key) => given[key] !== undefined);
  if (triggers.length !== 1) {
    read.fail(
      triggers.length === 0
        ? "give one of cron, fixedRate and fixedDelay"
        : `give one of ${triggers.join(" and ")}`,
    );
  }
  if (given.cron !== undefined) {
    if (typeof given.cron !== "string") read.fail("cron is text");
    if (given.initialDelay !== undefined) {
      read.fail("initialDelay goes with fixedRate or fixedDelay; a cron says when itself");
    }
    if (given.zone !== undefined && typeof given.zone !== "string") read.fail("zone is text");
  } else {
    if (given.zone !== undefined) read.fail("zone goes with cron");
    read.durations(["fixedRate", "fixedDelay", "initialDelay"]);
  }
  const schedule = { ...given };
  return (value, context) =>
    markScheduledMethod(
      "Scheduled",
      value,
      context as ClassMethodDecoratorContext,
      schedulingFeature,
      { schedule },
    );
}
