/** A duration: milliseconds, or text (`"30s"`, `"5m"`, `"PT1H"`, `"${jobs.period}"`). */
export type Duration = number | string;

/**
 * When a `@Scheduled` method runs: exactly one of `cron`, `fixedRate` and `fixedDelay`. Text
 * options may be a `${key}` or `${key:default}` of the configuration, read at `bootstrap`.
 */
export type ScheduledOptions =
  | {
    /**
     * Spring's six fields (second, minute, hour, day of month, month, day of week) or Unix
     * cron's five: `"0 0 3 * * *"` (03:00 every day), `"0 0/15 9-17 * * MON-FRI"`, `"@hourly"`.
     * `"-"` declares the job and runs it never (Spring's value to turn one off by configuration).
     */
    readonly cron: string;
    /** The IANA time zone the fields are read in (`"Europe/Berlin"`); the runtime's own by default. */
    readonly zone?: string;
    readonly fixedRate?: never;
    readonly fixedDelay?: never;
    readonly initialDelay?: never;
  }
  | {
    /** Runs every period, measured from the start of one run to the start of the next. */
    readonly fixedRate: Duration;
    /** How long after the app starts the first run comes; at once by default. */
    readonly initialDelay?: Duration;
    readonly cron?: never;
    readonly zone?: never;
    readonly fixedDelay?: never;
  }
  | {
    /** Runs this long after the previous run ended. */
    readonly fixedDelay: Duration;
    /** How long after the app starts the first run comes; at once by default. */
    readonly initialDelay?: Duration;
    readonly cron?: never;
    readonly zone?: never;
    readonly fixedRate?: never;
  };
