import type { Timer } from "../runtime/clock.ts";
import type { JobSpec } from "./job_spec.ts";
import type { LastRun, ScheduledJobInfo } from "./scheduled_job_info.ts";

/**
 * What runs a job next: a timer of the scheduler's, due at `at` (ms on the wall clock), or
 * `Deno.cron`, which runs a cron job on its own clock.
 */
export type NextRun = { readonly timer: Timer; readonly at: number } | "Deno.cron";

/** One job's runs as the app goes: the job itself, read at `bootstrap`, never changes. */
export class JobState {
  readonly job: JobSpec;
  /** What runs it next; `undefined` while it runs, before `start()` and once stopped. */
  next: NextRun | undefined;
  /** Its run in progress: a job never overlaps itself. */
  running: Promise<void> | undefined;
  last: LastRun | undefined;

  constructor(job: JobSpec) {
    this.job = job;
  }

  /** Cancels its timer, if it has one: it runs no more. */
  disarm(): void {
    if (this.next !== undefined && this.next !== "Deno.cron") this.next.timer.cancel();
    this.next = undefined;
  }

  /** What it is and how it went, `now` being the wall clock's time. */
  info(now: number): ScheduledJobInfo {
    const { job } = this;
    const next = this.#nextAt(now);
    const common = {
      bean: job.bean,
      method: job.method,
      target: job.name,
      nextRun: next === undefined ? undefined : new Date(next),
      lastRun: this.last,
    };
    return job.kind === "cron"
      ? { ...common, kind: job.kind, expression: job.trigger.expression, zone: job.zone }
      : { ...common, kind: job.kind, periodMs: job.period, initialDelayMs: job.initialDelay };
  }

  #nextAt(now: number): number | undefined {
    if (this.next !== "Deno.cron") return this.next?.at;
    return this.job.kind === "cron" ? this.job.trigger.next(now) : undefined;
  }
}
