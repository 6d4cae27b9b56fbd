import { markScheduledMethod } from "./scheduled_jobs.ts";
import { DecoratorOptions } from "./decorator_options.ts";
import { shownValue } from "../shown_value.ts";
import { schedulingFeature } from "./scheduling_feature.ts";
import type { ScheduledDecorator } from "./scheduled.ts";
import type { SchedulerLockOptions } from "./scheduler_lock_options.ts";

const KEYS: readonly string[] = ["name", "lockAtMostFor", "lockAtLeastFor", "lockManager"];

/**
 * Runs a `@Scheduled` job on one replica per tick: before each run the job takes the named lock
 * through the app's `LockManager` bean (or the one `lockManager` names), and skips the run when
 * another replica holds it. The lock lasts until the run ends (but at least `lockAtLeastFor`), or
 * `lockAtMostFor` when its holder dies. `bootstrap` stops when no bean is a `LockManager`.
 *
 * @param options `name`: the lock's, shared by the replicas; `lockAtMostFor`: how long a dead
 * holder keeps it; `lockAtLeastFor`: how long it lasts at least; `lockManager`: the name of the
 * `LockManager` bean, when the app has several
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/scheduling.md#schedulerlock
 */
export function SchedulerLock(options: SchedulerLockOptions): ScheduledDecorator {
  const read = new DecoratorOptions(
    "@SchedulerLock",
    options,
    KEYS,
    'give { name: "digest", lockAtMostFor: "10m" }',
  );
  const { given } = read;
  if (typeof given.name !== "string" || given.name.trim() === "") {
    read.fail("name is the lock's name, the same on every replica");
  }
  if (given.lockAtMostFor === undefined) {
    read.fail("lockAtMostFor is how long the lock lasts when its holder dies: give it");
  }
  read.durations(["lockAtMostFor", "lockAtLeastFor"]);
  const { lockManager } = given;
  if (lockManager !== undefined && (typeof lockManager !== "string" || lockManager === "")) {
    read.fail(`lockManager is the name of a LockManager bean, got ${shownValue(lockManager)}`);
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
