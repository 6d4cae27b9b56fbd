// The scheduler: runs each `@Scheduled` method on its clock, one run of a job at a time, behind
// its `@SchedulerLock` when it has one. Loaded only by the decorators' module, so that an app
// without schedules carries none of it (nor croner).
import { parseValueExpression } from "../context/value.ts";
import { DefinitionError } from "../context/errors.ts";
import { awaitedForm } from "../context/awaited_form.ts";
import { type Class, entryOf } from "../context/class_record.ts";
import { configValue } from "../config/application_config.ts";
import {
  type ScheduledMethod,
  type Scheduler,
  type SchedulerHost,
  type SchedulerLogger,
  SCHEDULING,
  type SchedulingApp,
  type SchedulingEntry,
} from "./scheduled_jobs.ts";
import { type CronClass, type CronTrigger, cronTrigger, loadCron, sameCron } from "./trigger.ts";
import { MAX_DURATION_MS, parseDuration } from "../config/duration.ts";
import { type LockConfiguration, LockProvider, type SimpleLock } from "./lock_provider.ts";
import type { ScheduledOptions } from "./scheduled_options.ts";
import type { SchedulerLockOptions } from "./scheduler_lock_options.ts";

/** A timer set with {@linkcode SchedulerClock.setTimer}. */
export interface SchedulerTimer {
  cancel(): void;
}

/**
 * Where the scheduler's time comes from: the real clock by default; a test's own, so that days
 * of schedule pass in no time.
 */
export interface SchedulerClock {
  /** Milliseconds since the epoch: the wall clock, which cron expressions read. */
  now(): number;
  /**
   * Milliseconds from an arbitrary start, never stepped (NTP, a resumed VM): what `fixedRate`
   * and `fixedDelay` count, so that a wall clock set back does not stall them.
   */
  monotonic(): number;
  /** Runs `task` once, `ms` (at most {@linkcode MAX_DURATION_MS}) from now, unless cancelled. */
  setTimer(ms: number, task: () => void): SchedulerTimer;
}

/** The real clock. Its timers keep the process alive: a served app's schedules are its work. */
export const systemSchedulerClock: SchedulerClock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(ms, task) {
    const timer = setTimeout(task, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};

/** `Deno.cron`, where the runtime has it (Deno Deploy; the Deno CLI with `--unstable-cron`). */
export type DenoCron = (
  name: string,
  schedule: string,
  options: { signal: AbortSignal },
  handler: () => Promise<void>,
) => Promise<void>;

/** What tests give the scheduler beside what `bootstrap` does. */
export interface SchedulerDevices {
  readonly clock?: SchedulerClock;
  /** `null`: never `Deno.cron`, even where the runtime has it. */
  readonly denoCron?: DenoCron | null;
}

type Kind = "cron" | "fixedRate" | "fixedDelay";

/** Why one run failed: what its method (or its lock provider) threw, as thrown. */
interface RunFailure {
  readonly error: unknown;
}

interface Job {
  readonly name: string;
  readonly kind: Kind;
  readonly trigger?: CronTrigger;
  /** The job's zone, for `Deno.cron`, which knows UTC alone. */
  readonly zone?: string;
  /** fixedRate, fixedDelay: the period; ms. */
  readonly period: number;
  readonly initialDelay: number;
  readonly lock?: LockConfiguration;
  readonly run: () => unknown;
  timer?: SchedulerTimer | undefined;
  running?: Promise<void> | undefined;
}

/**
 * The scheduler of an app's beans: their decorated methods (a superclass's marks count, and a
 * method overridden runs as the bean's class has it), each read and checked now.
 */
export async function schedulerFor(
  app: SchedulingApp,
  devices: SchedulerDevices = {},
): Promise<Scheduler> {
  const { context } = app;
  const beans = context.beans();
  const Cron = await loadCron();
  return createScheduler(
    Cron,
    beans.flatMap((bean) =>
      scheduledMethods(bean.instance, context.sourceOf(bean.name) ?? bean.name)
    ),
    {
      enabled: app.enabled,
      configValue: (key) => configValue(app.config, key),
      logger: app.logger,
      beanOf: (type) => context.getBean(type),
      hasBean: (type) => beans.some((bean) => bean.instance instanceof type),
    },
    devices,
  );
}

function scheduledMethods(instance: unknown, source: string): ScheduledMethod[] {
  if (instance === null || (typeof instance !== "object" && typeof instance !== "function")) {
    return [];
  }
  // By method, from the most derived class up: each of `@Scheduled` and `@SchedulerLock` is the
  // nearest class's, so that an override that schedules again keeps its parent's lock.
  const methods = new Map<unknown, ScheduledMethod & { schedule: unknown; lock: unknown }>();
  for (let p = Object.getPrototypeOf(instance); p !== null; p = Object.getPrototypeOf(p)) {
    const ctor: unknown = Object.hasOwn(p, "constructor") ? p.constructor : undefined;
    const entry = typeof ctor === "function"
      ? entryOf<SchedulingEntry>(ctor as Class, SCHEDULING)
      : undefined;
    for (const record of entry?.methods ?? []) {
      const found = methods.get(record.identity);
      if (found !== undefined) {
        found.schedule ??= record.schedule;
        found.lock ??= record.lock;
        continue;
      }
      const method = awaitedForm(record.get(instance)) as (this: unknown) => unknown;
      methods.set(record.identity, {
        name: `${(instance as object).constructor.name}.${record.methodName}`,
        bean: source,
        arity: typeof method === "function" ? method.length : 0,
        schedule: record.schedule,
        lock: record.lock,
        run: () => method.call(instance),
      });
    }
  }
  return [...methods.values()];
}

/**
 * Builds the scheduler of `methods`: every option is read and checked here, at `bootstrap`, so
 * that a schedule that cannot run stops the app before it serves. Nothing runs until `start()`.
 */
export function createScheduler(
  Cron: CronClass,
  methods: ScheduledMethod[],
  host: SchedulerHost,
  devices: SchedulerDevices = {},
): Scheduler {
  const clock = devices.clock ?? systemSchedulerClock;
  const jobs = methods.map((method) => readJob(Cron, method, host)).filter((job) =>
    job !== undefined
  );
  const logger = host.logger;
  const locks = jobs.some((job) => job.lock !== undefined)
    ? host.beanOf(LockProvider) as LockProvider
    : undefined;
  for (const job of jobs) {
    if (job.lock === undefined) continue;
    try {
      locks!.check?.(job.lock);
    } catch (error) {
      throw new DefinitionError(
        `@SchedulerLock on ${job.name}: the LockProvider refuses the lock: ${
          (error as Error).message
        }`,
      );
    }
  }
  let started = false;
  let stopping: Promise<Error | undefined> | undefined;
  const cronRegistrations = new AbortController();

  // The waits on the LockProvider in progress: stop() ends each, so that no timer of theirs
  // outlives the app (a store that never answers would keep the process alive).
  const waits = new Set<() => void>();
  // `promise`, or a rejection once `ms` have passed without an answer, or once the scheduler
  // stops (with `STOPPED`, which is not logged).
  const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
    let timer: SchedulerTimer | undefined;
    let end!: () => void;
    const waited = Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = clock.setTimer(
          ms,
          () => reject(new Error(`the LockProvider did not ${what} it within ${ms} ms`)),
        );
        end = () => reject(STOPPED);
      }),
    ]);
    const stop = () => {
      timer?.cancel();
      end();
    };
    waits.add(stop);
    return waited.finally(() => {
      timer?.cancel();
      waits.delete(stop);
    });
  };
  // Releases a lock taken after its taker gave up waiting (or the scheduler stopped): else no
  // replica could run the job until the lock's end, counted from its late taking.
  const releaseLate = (taking: Promise<SimpleLock | undefined>) =>
    taking.then((late) => late?.unlock?.()).catch(() => {});

  // One run: behind the job's lock, when it has one; never thrown, always logged. What made it
  // fail (the method's error, or the lock's), for a caller that reports runs (`runCron`).
  const execute = async (job: Job): Promise<RunFailure | undefined> => {
    // Launched, and stopped before it began: nothing runs after close().
    if (stopping !== undefined) return;
    let lock: SimpleLock | undefined;
    if (job.lock !== undefined) {
      try {
        // A store that never answers must not hold the job for ever.
        const taking = Promise.resolve().then(() => locks!.lock(job.lock!));
        const taken = await within(taking, job.lock.lockAtMostFor, "take").catch((error) => {
          releaseLate(taking);
          throw error;
        });
        // Another replica holds it: its run is this tick's.
        if (taken === undefined || taken === null) return;
        if (typeof (taken as Partial<SimpleLock>).unlock !== "function") {
          throw new TypeError(
            `lock() resolved to ${typeof taken}, neither a lock (with unlock()) nor undefined`,
          );
        }
        lock = taken;
      } catch (error) {
        if (error === STOPPED) return;
        logger.error(
          `@Scheduled ${job.name}: the lock "${job.lock.name}" could not be taken; this run is ` +
            "skipped",
          error,
        );
        return { error };
      }
    }
    // Stopped while the lock was being taken: the run does not start, and the lock goes back.
    if (stopping !== undefined) {
      await within(lock!.unlock(), job.lock!.lockAtMostFor, "release").catch(() => {});
      return;
    }
    const startedAt = clock.monotonic();
    let failure: RunFailure | undefined;
    try {
      await job.run();
    } catch (error) {
      logger.error(`@Scheduled ${job.name} failed; its schedule goes on`, error);
      failure = { error };
    } finally {
      if (lock !== undefined) {
        const took = Math.round(clock.monotonic() - startedAt);
        if (took > job.lock!.lockAtMostFor) {
          warn(
            logger,
            `@Scheduled ${job.name} ran ${took} ms, longer than lockAtMostFor ` +
              `(${job.lock!.lockAtMostFor} ms): another replica may have run it meanwhile`,
          );
        }
        try {
          await within(lock.unlock(), job.lock!.lockAtMostFor, "release");
        } catch (error) {
          if (error !== STOPPED) {
            logger.error(
              `@Scheduled ${job.name}: the lock "${job.lock!.name}" could not be released; it ` +
                "ends at lockAtMostFor",
              error,
            );
          }
        }
      }
    }
    return failure;
  };

  const launch = (job: Job, then?: () => void): Promise<RunFailure | undefined> => {
    // The run starts on the next microtask, so that the job is marked running before its method
    // begins: a method that closes the app at once is waited for like any other.
    const running = Promise.resolve().then(() => execute(job)).finally(() => {
      job.running = undefined;
      if (stopping === undefined) then?.();
    });
    job.running = running.then(() => {});
    return running;
  };

  // Timers wait at most ~24.8 days, and may fire a little early: a timer that fires before the
  // run is due is set again for the rest, so that a cron tick never runs twice.
  // A cron job's times are the wall clock's; the others', the monotonic clock's.
  const now = (job: Job) => job.kind === "cron" ? clock.now() : clock.monotonic();
  const arm = (job: Job, due: number | undefined): void => {
    if (due === undefined || stopping !== undefined) return;
    const wait = Math.min(Math.max(due - now(job), 0), MAX_DURATION_MS);
    job.timer = clock.setTimer(wait, () => {
      job.timer = undefined;
      if (stopping !== undefined) return;
      if (now(job) < due) return arm(job, due);
      // A run an edge trigger (`app.scheduled`) started holds the job: this tick is skipped.
      if (job.running !== undefined) return arm(job, nextDue(job, due, now(job)));
      launch(job, () => arm(job, nextDue(job, due, now(job))));
    });
  };

  const denoCron = devices.denoCron === undefined ? runtimeDenoCron() : devices.denoCron;

  return {
    start() {
      // Once stopped, never again: nothing runs after close().
      if (started || stopping !== undefined || !host.enabled) return;
      started = true;
      for (const job of jobs) {
        const schedule = denoCron === null ? undefined : denoSchedule(job);
        if (schedule !== undefined) {
          try {
            // Deno runs it on its own clock (on Deno Deploy, even with no isolate running). Its
            // names are letters, digits, spaces, `-` and `_`.
            denoCron!(
              job.name.replace(/[^\w -]/g, "_"),
              schedule,
              { signal: cronRegistrations.signal },
              // A run that fails is logged; Deno.cron is not told, so that its failure stays the
              // schedule's and never becomes an unhandled rejection of the process.
              () =>
                stopping !== undefined || job.running !== undefined
                  ? Promise.resolve()
                  : launch(job).then(() => {}),
            ).catch((error) => logger.error(`@Scheduled ${job.name}: Deno.cron failed`, error));
            continue;
          } catch (error) {
            // A name taken by another app of the process: the scheduler's own timers run it.
            warn(logger, `@Scheduled ${job.name}: Deno.cron refused it (${error}); timers run it`);
          }
        }
        arm(job, job.kind === "cron" ? job.trigger!.next(now(job)) : now(job) + job.initialDelay);
      }
    },

    stop(timeoutMs) {
      return stopping ??= (async () => {
        for (const job of jobs) job.timer?.cancel();
        for (const stop of [...waits]) stop();
        cronRegistrations.abort();
        const running = jobs.filter((job) => job.running !== undefined);
        if (running.length === 0) return undefined;
        let timer: SchedulerTimer | undefined;
        const timedOut = new Promise<void>((resolve) => {
          timer = clock.setTimer(Math.min(timeoutMs, MAX_DURATION_MS), resolve);
        });
        await Promise.race([Promise.all(running.map((job) => job.running)), timedOut]);
        timer?.cancel();
        const overran = running.filter((job) => job.running !== undefined).map((job) => job.name);
        // A run cut short is a shutdown that did not end cleanly, as a request cut short is.
        return overran.length === 0 ? undefined : new Error(
          `@Scheduled ${overran.join(", ")} still running after server.shutdown-timeout ` +
            `(${timeoutMs / 1000} s); the beans were stopped all the same`,
        );
      })();
    },

    async close(closeBeans, timeoutMs) {
      const late = await this.stop(timeoutMs);
      const failed = await closeBeans().then(() => undefined, (e: Error) => e);
      if (late && failed) {
        throw new AggregateError([late, failed], `${late.message}; ${failed.message}`);
      }
      if (late ?? failed) throw late ?? failed;
    },

    async runCron(cron) {
      if (!host.enabled || stopping !== undefined) return;
      const matching = jobs.filter((job) =>
        job.kind === "cron" && sameCron(job.trigger!.expression, cron)
      );
      if (matching.length === 0) {
        const crons = jobs.filter((job) => job.kind === "cron").map((job) =>
          `${job.name} "${job.trigger!.expression}"`
        );
        warn(
          logger,
          `The cron trigger "${cron}" matches no @Scheduled job` +
            (crons.length === 0 ? " (none has a cron)" : `: the cron jobs are ${crons.join(", ")}`),
        );
        return;
      }
      const outcomes = await Promise.all(matching.map((job) => {
        const differs = readsOtherwise(job);
        if (differs !== undefined) {
          // Run on the trigger, it would run on another day or at another hour than it says.
          logger.error(
            `@Scheduled ${job.name}: the cron trigger "${cron}" has its expression, but ${differs}; ` +
              "not run",
          );
          return undefined;
        }
        if (job.running === undefined) return launch(job);
        warn(logger, `@Scheduled ${job.name} is still running; the trigger "${cron}" skips it`);
        return undefined;
      }));
      // Logged already, and thrown too: the runtime that fired the trigger (Cloudflare's
      // `outcome`, its retries and its failure metrics) sees that the run failed.
      const failed = outcomes.flatMap((outcome, i) =>
        outcome === undefined ? [] : [{ name: matching[i].name, error: outcome.error }]
      );
      if (failed.length === 1) throw failed[0].error;
      if (failed.length > 1) {
        throw new AggregateError(
          failed.map((f) => f.error),
          `@Scheduled ${failed.map((f) => f.name).join(", ")} failed on the cron trigger "${cron}"`,
        );
      }
    },
  };
}

function warn(logger: SchedulerLogger, message: string): void {
  (logger.warn ?? logger.error).call(logger, message);
}

// fixedRate: a period after the run was due, or at once when the run overran it (the ticks it
// overran are not made up). fixedDelay: a period after the run ended. cron: the next tick after
// both the tick that ran and now, so that a run that overran its next tick skips it.
function nextDue(job: Job, due: number, now: number): number | undefined {
  switch (job.kind) {
    case "fixedRate":
      return Math.max(due + job.period, now);
    case "fixedDelay":
      return now + job.period;
    case "cron":
      return job.trigger!.next(Math.max(due, now));
  }
}

function runtimeDenoCron(): DenoCron | null {
  const cron = (globalThis as { Deno?: { cron?: unknown } }).Deno?.cron;
  return typeof cron === "function" ? cron as DenoCron : null;
}

const UTC: readonly string[] = ["UTC", "Etc/UTC", "GMT", "Etc/GMT"];

// What `Deno.cron` can run as the job has it: five fields in UTC, the job's zone or, when it has
// none, the runtime's (UTC on Deno Deploy).
// Deno.cron counts the days of the week from 1 for Sunday, croner and Spring from 0: only a job
// that runs every day of the week is handed over.
function denoSchedule(job: Job): string | undefined {
  const zone = job.zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (job.kind !== "cron" || !UTC.includes(zone)) return undefined;
  const fields = job.trigger!.expression.split(" ");
  if (fields.length === 6 && fields[0] === "0") fields.shift();
  return fields.length === 5 && fields[4] === "*" && fields.every((f) => /^[\d*,\-/]+$/.test(f))
    ? fields.join(" ")
    : undefined;
}

// Why a cron trigger (Cloudflare's, read in UTC, its days of the week numbered from 1 for Sunday)
// would not run a job when the job says; `undefined` when it reads the job as Thaw does.
function readsOtherwise(job: Job): string | undefined {
  if (job.zone !== undefined && !UTC.includes(job.zone)) {
    return `the job's zone is ${job.zone}, and cron triggers are in UTC: leave the zone out and ` +
      "write the trigger and the job in UTC";
  }
  const dayOfWeek = job.trigger!.expression.split(" ").at(-1)!;
  if (/\d/.test(dayOfWeek.replace(/#\d+/g, ""))) {
    return `its day of week "${dayOfWeek}" is in numbers, which Cloudflare counts from 1 for ` +
      "Sunday and Thaw, as Spring, from 0: name the days (MON-FRI) in both";
  }
  return undefined;
}

// What a wait on the LockProvider ends with when the scheduler stops. A symbol, not an Error:
// creating one would be code a bundler keeps in every app, scheduled or not.
const STOPPED: unique symbol = Symbol("the scheduler stopped");

/** Spring's value for a cron that never runs: the job is declared, and off. */
const CRON_DISABLED = "-";

// The job of one method, every option read and checked; `undefined` for a cron of "-".
function readJob(Cron: CronClass, method: ScheduledMethod, host: SchedulerHost): Job | undefined {
  const where = `@Scheduled on ${method.name} (${method.bean})`;
  const options = method.schedule as ScheduledOptions | undefined;
  if (options === undefined) {
    throw new DefinitionError(
      `@SchedulerLock on ${method.name} (${method.bean}): the method has no @Scheduled; a lock ` +
        "guards a scheduled method's runs",
    );
  }
  if (method.arity > 0) {
    throw new DefinitionError(
      `${where}: a scheduled method takes no parameters; this one declares ${method.arity}`,
    );
  }
  const text = (option: string, value: unknown): string | number => {
    if (typeof value === "number") return value;
    const expression = parseValueExpression(value as string);
    if (expression === undefined) return value as string;
    const found = host.configValue(expression.key) ?? expression.fallback;
    if (typeof found === "string" || typeof found === "number") return found;
    throw new DefinitionError(
      `${where}: ${option} "${value}": ` +
        (found === undefined
          ? `the configuration has no ${expression.key}, and no default is given`
          : `${expression.key} holds ${Array.isArray(found) ? "a list" : typeof found}, not text`),
    );
  };
  const duration = (option: string, value: unknown): number => {
    const read = text(option, value);
    const ms = parseDuration(read);
    if (ms === undefined) {
      throw new DefinitionError(
        `${where}: ${option} ${JSON.stringify(read)} is not a duration: milliseconds (a whole ` +
          `number), or text such as "30s", "5m", "PT1H"; at most ${MAX_DURATION_MS} ms`,
      );
    }
    return ms;
  };
  let lock: LockConfiguration | undefined;
  const lockOptions = method.lock as SchedulerLockOptions | undefined;
  if (lockOptions !== undefined) {
    const lockWhere = `@SchedulerLock on ${method.name} (${method.bean})`;
    if (!host.hasBean(LockProvider)) {
      throw new DefinitionError(
        `${lockWhere}: no bean is a LockProvider: declare one (new SqlLockProvider(...) from a ` +
          "@Bean method, or a subclass of LockProvider of your own)",
      );
    }
    const atMost = duration("lockAtMostFor", lockOptions.lockAtMostFor);
    const atLeast = lockOptions.lockAtLeastFor === undefined
      ? 0
      : duration("lockAtLeastFor", lockOptions.lockAtLeastFor);
    if (atMost === 0 || atLeast > atMost) {
      throw new DefinitionError(
        `${lockWhere}: lockAtMostFor (${atMost} ms) must be more than 0 and at least ` +
          `lockAtLeastFor (${atLeast} ms)`,
      );
    }
    const name = String(text("name", lockOptions.name));
    if (name.trim() === "") {
      throw new DefinitionError(`${lockWhere}: the lock's name is empty`);
    }
    lock = { name, lockAtMostFor: atMost, lockAtLeastFor: atLeast };
  }
  const base = { name: method.name, run: method.run, ...(lock === undefined ? {} : { lock }) };
  if (options.cron !== undefined) {
    const expression = String(text("cron", options.cron));
    if (expression === CRON_DISABLED) return undefined;
    const zone = options.zone === undefined ? undefined : String(text("zone", options.zone));
    let trigger: CronTrigger;
    try {
      trigger = cronTrigger(Cron, expression, zone);
    } catch (error) {
      throw new DefinitionError(`${where}: ${(error as Error).message}`);
    }
    if (trigger.next(Date.now()) === undefined) {
      throw new DefinitionError(`${where}: cron "${expression}" never fires`);
    }
    return {
      ...base,
      kind: "cron",
      trigger,
      ...(zone === undefined ? {} : { zone }),
      period: 0,
      initialDelay: 0,
    };
  }
  const kind: Kind = options.fixedRate !== undefined ? "fixedRate" : "fixedDelay";
  const period = duration(kind, options[kind]);
  if (period === 0) throw new DefinitionError(`${where}: ${kind} must be at least 1 ms`);
  const initialDelay = options.initialDelay === undefined
    ? 0
    : duration("initialDelay", options.initialDelay);
  return { ...base, kind, period, initialDelay };
}
