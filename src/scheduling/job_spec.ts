// A job as the scheduler reads it at `bootstrap`: what runs, when, and behind which lock. Every
// option is read, checked and resolved then; nothing of it changes while the app runs (its runs'
// state is a `JobState`'s).
import type { CronTrigger } from "./trigger.ts";
import type { LockManager } from "../tasks/lock_manager.ts";

/** One `@Scheduled` method, by its kind of schedule. */
export type JobSpec = CronJob | FixedRateJob | FixedDelayJob;

/** What every kind of job has. */
interface JobBase {
  /** `Class.method`, for messages and `Deno.cron`'s name. */
  readonly name: string;
  /** The bean's name in the context. */
  readonly bean: string;
  readonly method: string;
  /** The `@SchedulerLock` it runs behind, with the manager that takes it. */
  readonly lock: JobLock | undefined;
  /** Calls the method on its bean. */
  readonly run: () => unknown;
}

/** What a job asks of its lock (ShedLock's configuration), every duration in milliseconds. */
export interface LockConfiguration {
  /** The lock's name: the same on every replica for one job. */
  readonly name: string;
  /** How long a holder that never released it (a process killed mid-run) keeps it. */
  readonly lockAtMostFor: number;
  /** How long it lasts at least from its taking, released or not. */
  readonly lockAtLeastFor: number;
}

/** A job's lock: what it asks for, and the `LockManager` bean that takes it. */
export interface JobLock {
  readonly config: LockConfiguration;
  readonly manager: LockManager;
}

/** Runs when its cron expression fires, on the wall clock. */
export interface CronJob extends JobBase {
  readonly kind: "cron";
  readonly trigger: CronTrigger;
  /** The zone it was given, for `Deno.cron` and edge triggers, which know UTC alone. */
  readonly zone: string | undefined;
}

/** Runs every `period` ms from the start of each run, on the monotonic clock. */
export interface FixedRateJob extends JobBase {
  readonly kind: "fixedRate";
  readonly period: number;
  readonly initialDelay: number;
}

/** Runs `period` ms after each run ended, on the monotonic clock. */
export interface FixedDelayJob extends JobBase {
  readonly kind: "fixedDelay";
  readonly period: number;
  readonly initialDelay: number;
}
