/** What a scheduler says of each of its jobs: what Spring's `scheduledtasks` endpoint shows. */
export type ScheduledJobInfo = CronJobInfo | FixedJobInfo;

/** What every kind of job says. */
interface JobInfo {
  /** The bean's name in the context. */
  readonly bean: string;
  /** The scheduled method's name. */
  readonly method: string;
  /** `Class.method`, as messages name the job (Spring's `runnable.target`). */
  readonly target: string;
  /** When it runs next; `undefined` while it runs, before `start()` and once stopped. */
  readonly nextRun: Date | undefined;
  /** How its latest run went; `undefined` before its first. */
  readonly lastRun: LastRun | undefined;
}

/** A job on a cron expression. */
export interface CronJobInfo extends JobInfo {
  readonly kind: "cron";
  /** The expression, its fields separated by one space. */
  readonly expression: string;
  /** The IANA time zone it is read in; `undefined`: the runtime's. */
  readonly zone: string | undefined;
}

/** A job every so long: from the start of one run (`fixedRate`) or its end (`fixedDelay`). */
export interface FixedJobInfo extends JobInfo {
  readonly kind: "fixedRate" | "fixedDelay";
  readonly periodMs: number;
  /** How long after `start()` its first run came. */
  readonly initialDelayMs: number;
}

/**
 * A job's latest run (Spring's `lastExecution`): `at` is when it began (on the wall clock), and
 * `durationMs` how long its method ran. A run whose lock could not be taken failed; one whose
 * lock another replica held was skipped, that tick being the other replica's.
 */
export type LastRun =
  | { readonly outcome: "running"; readonly at: Date }
  | { readonly outcome: "ok"; readonly at: Date; readonly durationMs: number }
  | {
    readonly outcome: "failed";
    readonly at: Date;
    readonly durationMs: number;
    /** What the method (or the lock provider) threw. */
    readonly error: unknown;
  }
  | { readonly outcome: "skipped"; readonly at: Date; readonly reason: string };
