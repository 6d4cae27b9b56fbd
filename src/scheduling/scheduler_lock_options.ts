import type { Duration } from "./scheduled_options.ts";

/** The lock of a `@SchedulerLock` job (ShedLock's options). */
export interface SchedulerLockOptions {
  /** The lock's name, the same on every replica (or `${key}` of the configuration). */
  readonly name: string;
  /**
   * How long the lock lasts if its holder never releases it (a process killed mid-run): well
   * above the job's longest run. A run that takes longer is warned about.
   */
  readonly lockAtMostFor: Duration;
  /**
   * How long the lock lasts at least, even when the run ends sooner: above the clock skew
   * between replicas and the spread of their timers (0 by default).
   */
  readonly lockAtLeastFor?: Duration;
  /** The name of the `LockManager` bean that takes the lock; the app's one by default. */
  readonly lockManager?: string;
}
