// The `scheduledtasks` endpoint's answer: the app's `@Scheduled` jobs in Spring Boot 3.2's shape.
import type { Mask } from "../config/secrets_mask.ts";
import type { LastRun, ScheduledJobInfo } from "../scheduling/scheduled_job_info.ts";

/** A job's latest run, as Spring's `lastExecution` says it. */
export interface LastExecution {
  /** When it began, ISO 8601. */
  readonly time: string;
  readonly status: "STARTED" | "SUCCESS" | "ERROR";
  /** What it threw: its class's name, and its message masked. */
  readonly exception?: { readonly type: string; readonly message: string };
}

/** What every job says: its `Class.method`, its next run and its latest. */
interface Task {
  readonly runnable: { readonly target: string };
  readonly nextExecution?: { readonly time: string };
  readonly lastExecution?: LastExecution;
}

/** A job on a cron expression. */
export interface CronTask extends Task {
  readonly expression: string;
}

/** A job every `interval` ms, the first `initialDelay` ms after the start. */
export interface IntervalTask extends Task {
  readonly initialDelay: number;
  readonly interval: number;
}

/** `GET {base}/scheduledtasks`: Spring's lists, `custom` empty (Thaw has no custom trigger). */
export interface ScheduledTasks {
  readonly cron: CronTask[];
  readonly fixedDelay: IntervalTask[];
  readonly fixedRate: IntervalTask[];
  readonly custom: never[];
}

/** The jobs in Spring's shape; `mask` hides what a job's error message may carry (a URL's password). */
export function scheduledTasks(jobs: readonly ScheduledJobInfo[], mask: Mask): ScheduledTasks {
  const out: ScheduledTasks = { cron: [], fixedDelay: [], fixedRate: [], custom: [] };
  for (const job of jobs) {
    // Spring leaves out what is not known (before the start, while it runs, before the first).
    const known = {
      ...(job.nextRun === undefined ? {} : { nextExecution: { time: job.nextRun.toISOString() } }),
      ...(job.lastRun === undefined ? {} : { lastExecution: lastExecution(job.lastRun, mask) }),
    };
    const runnable = { target: job.target };
    if (job.kind === "cron") out.cron.push({ runnable, expression: job.expression, ...known });
    else {
      out[job.kind].push({
        runnable,
        initialDelay: job.initialDelayMs,
        interval: job.periodMs,
        ...known,
      });
    }
  }
  return out;
}

function lastExecution(run: LastRun, mask: Mask): LastExecution {
  const time = run.at.toISOString();
  switch (run.outcome) {
    case "running":
      return { time, status: "STARTED" };
    // A tick another replica's lock held ran there: Spring under ShedLock says SUCCESS too.
    case "ok":
    case "skipped":
      return { time, status: "SUCCESS" };
    case "failed":
      return { time, status: "ERROR", exception: exceptionOf(run.error, mask) };
  }
}

function exceptionOf(error: unknown, mask: Mask): { type: string; message: string } {
  if (typeof error !== "object" || error === null) {
    return { type: exceptionType(error), message: mask(String(error)) };
  }
  const message: unknown = (error as { message?: unknown }).message;
  return {
    type: exceptionType(error),
    message: mask(typeof message === "string" ? message : describe(error)),
  };
}

/**
 * What a job threw, by its class, as Spring names an exception by its class (a subclass of Error
 * says which); a value that is no object, by its type (`string`).
 */
export function exceptionType(error: unknown): string {
  if (typeof error !== "object" || error === null) return typeof error;
  const name: unknown = (error as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? name : "Object";
}

// What was thrown that has no message: as much as it says of itself, if anything.
function describe(error: object): string {
  try {
    return String(error);
  } catch {
    return "";
  }
}
