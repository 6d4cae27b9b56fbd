// Reads a `@Scheduled` method's options into its job, at `bootstrap`: every option read and
// checked there, so that a schedule that cannot run stops the app before it serves.
import { parseValueExpression } from "../context/value.ts";
import { DefinitionError } from "../context/errors.ts";
import { readDuration } from "../config/duration.ts";
import type { ScheduledMethod, SchedulerHost } from "./scheduled_jobs.ts";
import type { ScheduledOptions } from "./scheduled_options.ts";
import type { SchedulerLockOptions } from "./scheduler_lock_options.ts";
import { type CronClass, cronTrigger } from "./trigger.ts";
import { LockManager } from "../tasks/lock_manager.ts";
import type {
  CronJob,
  FixedDelayJob,
  FixedRateJob,
  JobLock,
  JobSpec,
  LockConfiguration,
} from "./job_spec.ts";

/** Spring's value for a cron that never runs: the job is declared, and off. */
const CRON_DISABLED = "-";

/** When a job runs, as its options say. */
type Schedule =
  | Pick<CronJob, "kind" | "trigger" | "zone">
  | Pick<FixedRateJob | FixedDelayJob, "kind" | "period" | "initialDelay">;

/**
 * The job of one method, every option read and checked; `undefined` for a cron of "-". Its lock
 * is taken through the app's `LockManager` bean, or the one its `lockManager` names.
 */
export function readJob(
  Cron: CronClass,
  method: ScheduledMethod,
  host: SchedulerHost,
): JobSpec | undefined {
  const options = method.schedule as ScheduledOptions | undefined;
  if (options === undefined) {
    throw new DefinitionError(
      `@SchedulerLock on ${method.name} (${method.bean}): the method has no @Scheduled; a lock ` +
        "guards a scheduled method's runs",
    );
  }
  const read = new OptionReader(`@Scheduled on ${method.name} (${method.bean})`, host);
  if (method.arity > 0) {
    read.fail(`a scheduled method takes no parameters; this one declares ${method.arity}`);
  }
  const lock = method.lock === undefined ? undefined : readLock(read, method, host);
  const schedule = readSchedule(Cron, read, options);
  if (schedule === undefined) return undefined;
  return {
    ...schedule,
    name: method.name,
    bean: method.beanName,
    method: method.methodName,
    lock,
    run: method.run,
  };
}

// The lock's options, read, with the LockManager bean that takes it.
function readLock(read: OptionReader, method: ScheduledMethod, host: SchedulerHost): JobLock {
  const options = method.lock as SchedulerLockOptions;
  const where = `@SchedulerLock on ${method.name} (${method.bean})`;
  const atMost = read.duration("lockAtMostFor", options.lockAtMostFor);
  const atLeast = options.lockAtLeastFor === undefined
    ? 0
    : read.duration("lockAtLeastFor", options.lockAtLeastFor);
  if (atMost === 0 || atLeast > atMost) {
    throw new DefinitionError(
      `${where}: lockAtMostFor (${atMost} ms) must be more than 0 and at least ` +
        `lockAtLeastFor (${atLeast} ms)`,
    );
  }
  const name = String(read.text("name", options.name));
  if (name.trim() === "") throw new DefinitionError(`${where}: the lock's name is empty`);
  const config: LockConfiguration = { name, lockAtMostFor: atMost, lockAtLeastFor: atLeast };
  return { config, manager: lockManager(where, options.lockManager, host) };
}

// The LockManager bean `name` names, or the app's one.
function lockManager(where: string, name: string | undefined, host: SchedulerHost): LockManager {
  if (!host.hasBean(name ?? LockManager)) {
    throw new DefinitionError(
      name === undefined
        ? `${where}: no bean is a LockManager: declare one (SqlLockManager over the app's ` +
          "datasource, SqlLockProvider over a driver's pool, RedisLockManager, or a subclass of " +
          "your own)"
        : `${where}: lockManager "${name}" names no bean; declare a LockManager bean of that name`,
    );
  }
  const manager = host.beanOf(name ?? LockManager);
  if (!(manager instanceof LockManager)) {
    throw new DefinitionError(
      `${where}: lockManager "${name}" names a bean that is no LockManager (a ${
        (manager as object | null)?.constructor?.name ?? typeof manager
      })`,
    );
  }
  return manager;
}

function readSchedule(
  Cron: CronClass,
  read: OptionReader,
  options: ScheduledOptions,
): Schedule | undefined {
  if (options.cron !== undefined) {
    const expression = String(read.text("cron", options.cron));
    if (expression === CRON_DISABLED) return undefined;
    const zone = options.zone === undefined ? undefined : String(read.text("zone", options.zone));
    let trigger: CronJob["trigger"];
    try {
      trigger = cronTrigger(Cron, expression, zone);
    } catch (error) {
      return read.fail((error as Error).message);
    }
    if (trigger.next(Date.now()) === undefined) read.fail(`cron "${expression}" never fires`);
    return { kind: "cron", trigger, zone };
  }
  const kind = options.fixedRate !== undefined ? "fixedRate" : "fixedDelay";
  const period = read.duration(kind, options[kind], 1);
  const initialDelay = options.initialDelay === undefined
    ? 0
    : read.duration("initialDelay", options.initialDelay);
  return { kind, period, initialDelay };
}

/** Reads one method's options: text and durations, `${key}` looked up in the configuration. */
class OptionReader {
  readonly #where: string;
  readonly #host: SchedulerHost;

  constructor(where: string, host: SchedulerHost) {
    this.#where = where;
    this.#host = host;
  }

  /** Throws the `DefinitionError` saying `why`, after where it is. */
  fail(why: string): never {
    throw new DefinitionError(`${this.#where}: ${why}`);
  }

  text(option: string, value: unknown): string | number {
    if (typeof value === "number") return value;
    const expression = parseValueExpression(value as string);
    if (expression === undefined) return value as string;
    const found = this.#host.configValue(expression.key) ?? expression.fallback;
    if (typeof found === "string" || typeof found === "number") return found;
    return this.fail(
      `${option} "${value}": ` +
        (found === undefined
          ? `the configuration has no ${expression.key}, and no default is given`
          : `${expression.key} holds ${Array.isArray(found) ? "a list" : typeof found}, not text`),
    );
  }

  duration(option: string, value: unknown, min = 0): number {
    const read = this.text(option, value);
    return readDuration(read, `${this.#where}: ${option}`, { min }, DefinitionError);
  }
}
