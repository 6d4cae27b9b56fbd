import { markScheduledMethod } from "./scheduled_jobs.ts";
import { checkOptionsObject } from "../options_object.ts";
import { DURATION_FORMS } from "../config/duration.ts";
import { shownValue } from "../shown_value.ts";
import { schedulingFeature } from "./scheduling_feature.ts";
import type { ScheduledDecorator } from "./scheduled.ts";
import type { SchedulerLockOptions } from "./scheduler_lock_options.ts";

const KEYS: readonly string[] = ["name", "lockAtMostFor", "lockAtLeastFor"];

/**
 * Runs a `@Scheduled` job on one replica per tick: before each run the job takes the named lock
 * through the `LockProvider` bean, and skips the run when another replica holds it. The lock
 * lasts until the run ends (but at least `lockAtLeastFor`), or `lockAtMostFor` when its holder
 * dies. `bootstrap` stops when no bean is a `LockProvider`.
 *
 * @param options `name`: the lock's, shared by the replicas; `lockAtMostFor`: how long a dead
 * holder keeps it; `lockAtLeastFor`: how long it lasts at least
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/scheduling.md#schedulerlock
 */
export function SchedulerLock(options: SchedulerLockOptions): ScheduledDecorator {
  checkOptionsObject(options as unknown, "@SchedulerLock", KEYS, {
    hint: 'give { name: "digest", lockAtMostFor: "10m" }',
  });
  const shown = JSON.stringify(options) ?? String(options);
  const fail = (why: string): never => {
    throw new TypeError(`@SchedulerLock(${shown}): ${why}`);
  };
  if (typeof options.name !== "string" || options.name.trim() === "") {
    fail("name is the lock's name, the same on every replica");
  }
  for (const key of ["lockAtMostFor", "lockAtLeastFor"] as const) {
    const value = options[key];
    if (value === undefined && key === "lockAtMostFor") {
      fail("lockAtMostFor is how long the lock lasts when its holder dies: give it");
    }
    if (value !== undefined && typeof value !== "number" && typeof value !== "string") {
      fail(`${key}: give ${DURATION_FORMS}, got ${shownValue(value)}`);
    }
  }
  const lock = { ...options };
  return (value, context) =>
    markScheduledMethod(
      "SchedulerLock",
      value,
      context as ClassMethodDecoratorContext,
      schedulingFeature,
      { lock },
    );
}
