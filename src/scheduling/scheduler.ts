// The scheduler: runs each `@Scheduled` method on its clock, one run of a job at a time, behind
// its `@SchedulerLock` when it has one. Loaded only by the decorators' module, so that an app
// without schedules carries none of it (nor croner).
import { awaitedForm } from "../context/awaited_form.ts";
import type { Class } from "../context/class.ts";
import { entryOf } from "../context/class_record.ts";
import { configValue } from "../config/application_config.ts";
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";
import { type Clock, systemClock, type Timer, type TimerOptions } from "../runtime/clock.ts";
import {
  type ScheduledMethod,
  type Scheduler,
  type SchedulerHost,
  type SchedulerLogger,
  SCHEDULING,
  type SchedulingApp,
  type SchedulingEntry,
} from "./scheduled_jobs.ts";
import type { ScheduledJobInfo } from "./scheduled_job_info.ts";
import { type CronClass, loadCron, sameCron } from "./trigger.ts";
import type { HeldLock as TakenLock } from "../tasks/lock_manager.ts";
import type { CronJob, JobLock, JobSpec } from "./job_spec.ts";
import { readJob } from "./read_job.ts";
import { JobState } from "./job_state.ts";
import { type DenoCron, denoSchedule, readsOtherwise, runtimeDenoCron } from "./cron_handover.ts";
import { LockWaits, releaseLate, STOPPED } from "./lock_waits.ts";
import { type EndedRun, reportRun } from "./job_runs.ts";

export type { DenoCron } from "./cron_handover.ts";

/** What tests give the scheduler beside what `bootstrap` does. */
export interface SchedulerDevices {
  /** Where its time comes from: a test's own, so that days of schedule pass in no time. */
  readonly clock?: Clock;
  /** `null`: never `Deno.cron`, even where the runtime has it. */
  readonly denoCron?: DenoCron | null;
}

/** Why one run failed: what its method (or its lock manager) threw, as thrown. */
interface RunFailure {
  readonly error: unknown;
}

/** A lock a run holds, with what it asked for. */
interface HeldLock {
  readonly lock: TakenLock;
  readonly config: JobLock["config"];
}

// The scheduler's timers keep the process alive: a served app's schedules are its work.
const KEEP_ALIVE: TimerOptions = { keepAlive: true };

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
      scheduledMethods(bean.instance, bean.name, context.sourceOf(bean.name) ?? bean.name)
    ),
    {
      enabled: app.enabled,
      configValue: (key) => configValue(app.config, key),
      logger: app.logger,
      beanOf: (type) => context.getBean(type),
      hasBean: (type) =>
        beans.some((bean) =>
          typeof type === "string" ? bean.name === type : bean.instance instanceof type
        ),
      ended: (run) => reportRun(context, run),
    },
    devices,
  );
}

function scheduledMethods(
  instance: unknown,
  beanName: string,
  source: string,
): ScheduledMethod[] {
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
        beanName,
        methodName: record.methodName,
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
  const jobs = methods.flatMap((method) => readJob(Cron, method, host) ?? []);
  return new JobScheduler(jobs, host, devices);
}

/** The scheduler of a list of jobs read: started once, stopped once. */
class JobScheduler implements Scheduler {
  readonly #jobs: readonly JobState[];
  readonly #host: SchedulerHost;
  readonly #clock: Clock;
  readonly #denoCron: DenoCron | null;
  // Made by start(), never by the constructor: a worker's `await bootstrap()` builds the scheduler
  // at global scope, where workerd (as `wrangler dev` ships it) refuses `new AbortController()`.
  #cronRegistrations: AbortController | undefined;
  readonly #waits: LockWaits;
  #started = false;
  /** Set by `stop()`: from then on no run starts. */
  #stopping: Promise<Error | undefined> | undefined;

  constructor(jobs: readonly JobSpec[], host: SchedulerHost, devices: SchedulerDevices) {
    this.#jobs = jobs.map((job) => new JobState(job));
    this.#host = host;
    this.#clock = devices.clock ?? systemClock;
    this.#denoCron = devices.denoCron === undefined ? runtimeDenoCron() : devices.denoCron;
    this.#waits = new LockWaits(this.#clock);
  }

  start(): void {
    // Once stopped, never again: nothing runs after close().
    if (this.#started || this.#stopping !== undefined || !this.#host.enabled) return;
    this.#started = true;
    for (const state of this.#jobs) {
      if (this.#handToDenoCron(state)) continue;
      const { job } = state;
      this.#arm(
        state,
        job.kind === "cron" ? job.trigger.next(this.#now(job)) : this.#now(job) + job.initialDelay,
      );
    }
  }

  stop(timeoutMs: number): Promise<Error | undefined> {
    return this.#stopping ??= this.#stopAll(timeoutMs);
  }

  async runCron(cron: string): Promise<void> {
    if (!this.#host.enabled || this.#stopping !== undefined) return;
    const crons = this.#jobs.flatMap((state) =>
      state.job.kind === "cron" ? [{ state, job: state.job }] : []
    );
    const matching = crons.filter(({ job }) => sameCron(job.trigger.expression, cron));
    if (matching.length === 0) {
      const names = crons.map(({ job }) => `${job.name} "${job.trigger.expression}"`);
      this.#warn(
        `The cron trigger "${cron}" matches no @Scheduled job` +
          (names.length === 0 ? " (none has a cron)" : `: the cron jobs are ${names.join(", ")}`),
      );
      return;
    }
    const outcomes = await Promise.all(
      matching.map(({ state, job }) => this.#runOnTrigger(state, job, cron)),
    );
    // Logged already, and thrown too: the runtime that fired the trigger (Cloudflare's
    // `outcome`, its retries and its failure metrics) sees that the run failed.
    const failed = outcomes.flatMap((outcome, i) =>
      outcome === undefined ? [] : [{ name: matching[i].job.name, error: outcome.error }]
    );
    if (failed.length === 1) throw failed[0].error;
    if (failed.length > 1) {
      throw new AggregateError(
        failed.map((f) => f.error),
        `@Scheduled ${failed.map((f) => f.name).join(", ")} failed on the cron trigger "${cron}"`,
      );
    }
  }

  jobs(): readonly ScheduledJobInfo[] {
    const now = this.#clock.now();
    return this.#jobs.map((state) => state.info(now));
  }

  async #stopAll(timeoutMs: number): Promise<Error | undefined> {
    for (const state of this.#jobs) state.disarm();
    this.#waits.stop();
    this.#cronRegistrations?.abort();
    const running = this.#jobs.filter((state) => state.running !== undefined);
    if (running.length === 0) return undefined;
    let timer: Timer | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = this.#clock.after(Math.min(timeoutMs, MAX_DURATION_MS), resolve, KEEP_ALIVE);
    });
    await Promise.race([Promise.all(running.map((state) => state.running)), timedOut]);
    timer?.cancel();
    const overran = running.filter((state) => state.running !== undefined)
      .map((state) => state.job.name);
    // A run cut short is a shutdown that did not end cleanly, as a request cut short is.
    return overran.length === 0 ? undefined : new Error(
      `@Scheduled ${overran.join(", ")} still running after server.shutdown-timeout ` +
        `(${timeoutMs / 1000} s); the beans were stopped all the same`,
    );
  }

  // Hands a cron job to Deno.cron when the runtime has it and can run the job as it says; false
  // when the scheduler's own timers run it.
  #handToDenoCron(state: JobState): boolean {
    const { job } = state;
    const schedule = this.#denoCron === null || job.kind !== "cron" ? undefined : denoSchedule(job);
    if (this.#denoCron === null || schedule === undefined) return false;
    try {
      // Deno runs it on its own clock (on Deno Deploy, even with no isolate running). Its names
      // are letters, digits, spaces, `-` and `_`.
      this.#denoCron(
        job.name.replace(/[^\w -]/g, "_"),
        schedule,
        { signal: (this.#cronRegistrations ??= new AbortController()).signal },
        // A run that fails is logged; Deno.cron is not told, so that its failure stays the
        // schedule's and never becomes an unhandled rejection of the process.
        () =>
          this.#stopping !== undefined || state.running !== undefined
            ? Promise.resolve()
            : this.#launch(state).then(() => {}),
      ).catch((error) =>
        this.#host.logger.error(`@Scheduled ${job.name}: Deno.cron failed`, error)
      );
      state.next = "Deno.cron";
      return true;
    } catch (error) {
      // A name taken by another app of the process: the scheduler's own timers run it.
      this.#warn(`@Scheduled ${job.name}: Deno.cron refused it (${error}); timers run it`);
      return false;
    }
  }

  // A cron job's times are the wall clock's; the others', the monotonic clock's.
  #now(job: JobSpec): number {
    return job.kind === "cron" ? this.#clock.now() : this.#clock.monotonic();
  }

  // Timers wait at most ~24.8 days, and may fire a little early: a timer that fires before the
  // run is due is set again for the rest, so that a cron tick never runs twice.
  #arm(state: JobState, due: number | undefined): void {
    if (due === undefined || this.#stopping !== undefined) return;
    const now = this.#now(state.job);
    const wait = Math.min(Math.max(due - now, 0), MAX_DURATION_MS);
    const timer = this.#clock.after(wait, () => this.#fire(state, due), KEEP_ALIVE);
    const at = state.job.kind === "cron" ? due : this.#clock.now() + due - now;
    state.next = { timer, at };
  }

  #fire(state: JobState, due: number): void {
    state.next = undefined;
    if (this.#stopping !== undefined) return;
    const { job } = state;
    if (this.#now(job) < due) return this.#arm(state, due);
    // A run an edge trigger (`app.scheduled`) started holds the job: this tick is skipped.
    if (state.running !== undefined) return this.#arm(state, nextDue(job, due, this.#now(job)));
    void this.#launch(state, () => this.#arm(state, nextDue(job, due, this.#now(job))));
  }

  #launch(state: JobState, then?: () => void): Promise<RunFailure | undefined> {
    // The run starts on the next microtask, so that the job is marked running before its method
    // begins: a method that closes the app at once is waited for like any other.
    const running = Promise.resolve().then(() => this.#execute(state)).finally(() => {
      state.running = undefined;
      if (this.#stopping === undefined) then?.();
    });
    state.running = running.then(() => {});
    return running;
  }

  // One run: behind the job's lock, when it has one; never thrown, always logged. What made it
  // fail (the method's error, or the lock's), for a caller that reports runs (`runCron`).
  async #execute(state: JobState): Promise<RunFailure | undefined> {
    // Launched, and stopped before it began: nothing runs after close().
    if (this.#stopping !== undefined) return;
    const { lock } = state.job;
    let held: HeldLock | undefined;
    if (lock !== undefined) {
      const at = new Date(this.#clock.now());
      const taken = await this.#take(state.job.name, lock);
      if (taken === STOPPED) return;
      if (taken === "held") {
        this.#ended(state, {
          outcome: "skipped",
          at,
          reason: `another replica holds "${lock.config.name}"`,
        });
        return;
      }
      if ("error" in taken) {
        this.#ended(state, { outcome: "failed", at, durationMs: 0, error: taken.error });
        return taken;
      }
      held = { lock: taken.lock, config: lock.config };
    }
    // Stopped while the lock was being taken: the run does not start, and the lock goes back.
    if (this.#stopping !== undefined) {
      if (held !== undefined) {
        await this.#waits.within(held.lock.release(), held.config.lockAtMostFor, "release")
          .catch(() => {});
      }
      return;
    }
    return await this.#run(state, held);
  }

  // The job's lock, taken; "held" when another replica holds it (its run is this tick's),
  // STOPPED when the scheduler stopped meanwhile, or why it could not be taken (logged).
  async #take(
    name: string,
    { config, manager }: JobLock,
  ): Promise<{ readonly lock: TakenLock } | "held" | typeof STOPPED | RunFailure> {
    try {
      // A store that never answers must not hold the job for ever.
      const taking = Promise.resolve().then(() =>
        manager.acquire({
          key: config.name,
          waitMs: 0,
          leaseMs: config.lockAtMostFor,
          minHoldMs: config.lockAtLeastFor,
        })
      );
      const taken = await this.#waits.within(taking, config.lockAtMostFor, "take").catch(
        (error) => {
          releaseLate(taking);
          throw error;
        },
      );
      if (taken === undefined || taken === null) return "held";
      if (typeof (taken as Partial<TakenLock>).release !== "function") {
        throw new TypeError(
          `acquire() resolved to ${typeof taken}, neither a lock (with release()) nor undefined`,
        );
      }
      return { lock: taken };
    } catch (error) {
      if (error === STOPPED) return STOPPED;
      this.#host.logger.error(
        `@Scheduled ${name}: the lock "${config.name}" could not be taken; this run is skipped`,
        error,
      );
      return { error };
    }
  }

  // Runs the method (its lock held, if it has one), then gives the lock back.
  async #run(state: JobState, held: HeldLock | undefined): Promise<RunFailure | undefined> {
    const { job } = state;
    const at = new Date(this.#clock.now());
    const startedAt = this.#clock.monotonic();
    state.last = { outcome: "running", at };
    let failure: RunFailure | undefined;
    try {
      await job.run();
    } catch (error) {
      this.#host.logger.error(`@Scheduled ${job.name} failed; its schedule goes on`, error);
      failure = { error };
    } finally {
      const durationMs = this.#clock.monotonic() - startedAt;
      this.#ended(
        state,
        failure === undefined
          ? { outcome: "ok", at, durationMs }
          : { outcome: "failed", at, durationMs, error: failure.error },
      );
      if (held !== undefined) await this.#release(job.name, held, Math.round(durationMs));
    }
    return failure;
  }

  // The run's outcome, kept for `scheduledtasks` and told to whoever watches runs (the meters).
  #ended(state: JobState, last: EndedRun["last"]): void {
    state.last = last;
    const { job } = state;
    // `name` is `Class.method`, made so from the two.
    const className = job.name.slice(0, job.name.length - job.method.length - 1);
    this.#host.ended?.({ className, method: job.method, last });
  }

  async #release(name: string, { lock, config }: HeldLock, took: number): Promise<void> {
    if (took > config.lockAtMostFor) {
      this.#warn(
        `@Scheduled ${name} ran ${took} ms, longer than lockAtMostFor ` +
          `(${config.lockAtMostFor} ms): another replica may have run it meanwhile`,
      );
    }
    try {
      await this.#waits.within(lock.release(), config.lockAtMostFor, "release");
    } catch (error) {
      if (error !== STOPPED) {
        this.#host.logger.error(
          `@Scheduled ${name}: the lock "${config.name}" could not be released; it ends at ` +
            "lockAtMostFor",
          error,
        );
      }
    }
  }

  // A cron job an edge runtime's trigger names, run once unless it would run otherwise than it
  // says, or runs already.
  #runOnTrigger(state: JobState, job: CronJob, cron: string): Promise<RunFailure | undefined> {
    const differs = readsOtherwise(job);
    if (differs !== undefined) {
      // Run on the trigger, it would run on another day or at another hour than it says.
      this.#host.logger.error(
        `@Scheduled ${job.name}: the cron trigger "${cron}" has its expression, but ${differs}; ` +
          "not run",
      );
      return Promise.resolve(undefined);
    }
    if (state.running === undefined) return this.#launch(state);
    this.#warn(`@Scheduled ${job.name} is still running; the trigger "${cron}" skips it`);
    return Promise.resolve(undefined);
  }

  #warn(message: string): void {
    warn(this.#host.logger, message);
  }
}

function warn(logger: SchedulerLogger, message: string): void {
  (logger.warn ?? logger.error).call(logger, message);
}

// fixedRate: a period after the run was due, or at once when the run overran it (the ticks it
// overran are not made up). fixedDelay: a period after the run ended. cron: the next tick after
// both the tick that ran and now, so that a run that overran its next tick skips it.
function nextDue(job: JobSpec, due: number, now: number): number | undefined {
  switch (job.kind) {
    case "fixedRate":
      return Math.max(due + job.period, now);
    case "fixedDelay":
      return now + job.period;
    case "cron":
      return job.trigger.next(Math.max(due, now));
  }
}
