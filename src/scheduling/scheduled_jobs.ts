// Where `@Scheduled` and `@SchedulerLock` leave their marks, and the scheduler's contracts. The
// scheduler itself (and croner) comes with the decorators as a feature of the app they bring, so
// that an app without a schedule neither loads nor carries it.
import type { Class } from "../context/class.ts";
import { type MethodAccess, methodAccess, ownEntry } from "../context/class_record.ts";
import { bringFeature, type FeatureFactory } from "../app_feature.ts";
import type { ApplicationContext } from "../context/application_context.ts";
import type { ConfigValues } from "../config/config_values.ts";
import type { ScheduledJobInfo } from "./scheduled_job_info.ts";
import type { EndedRun } from "./job_runs.ts";

/** What the decorators record on a class, under {@linkcode SCHEDULING}. */
export interface SchedulingEntry {
  readonly methods: ScheduledMethodRecord[];
}

/** One decorated method: its `@Scheduled` options, its `@SchedulerLock` options, or both. */
export interface ScheduledMethodRecord extends MethodAccess {
  schedule?: unknown;
  lock?: unknown;
}

/** A decorated method of one bean, ready to run. */
export interface ScheduledMethod {
  /** `Class.method`, for messages and lock names. */
  readonly name: string;
  /** Where the bean was declared, for messages. */
  readonly bean: string;
  /** The bean's name in the context. */
  readonly beanName: string;
  readonly methodName: string;
  /** The method's declared parameter count (`@Scheduled` methods take none). */
  readonly arity: number;
  readonly schedule: unknown;
  readonly lock: unknown;
  /** Calls the method on its bean. */
  readonly run: () => unknown;
}

/** What a scheduler needs of the application that holds it. */
export interface SchedulerHost {
  /** `thaw.scheduling.enabled`. */
  readonly enabled: boolean;
  /** A configuration value by its dotted key, for `${key}` in an option. */
  readonly configValue: (key: string) => unknown;
  readonly logger: SchedulerLogger;
  /**
   * The one bean that is an instance of `type`, or the bean of that name; throws when there is
   * none or several.
   */
  readonly beanOf: (type: Class | string) => unknown;
  /** Whether a bean is an instance of `type`, or has that name. */
  readonly hasBean: (type: Class | string) => boolean;
  /** Told of each run as it ends (the actuator's meters watch them). */
  readonly ended?: (run: EndedRun) => void;
}

/** Where a scheduler reports: a run that failed, a lock it could not take. */
export interface SchedulerLogger {
  error(message: string, ...details: unknown[]): void;
  warn?(message: string, ...details: unknown[]): void;
  info?(message: string, ...details: unknown[]): void;
}

/** The running schedules of an application. */
export interface Scheduler {
  /** Starts every schedule; a second call does nothing. */
  start(): void;
  /**
   * No run starts from now on; resolves once the runs in progress end, or after `timeoutMs`, to
   * an error naming the jobs still running then (`undefined` when none). Later calls return the
   * same promise.
   */
  stop(timeoutMs: number): Promise<Error | undefined>;
  /**
   * Runs the `cron` jobs whose expression is `cron` (an edge runtime's trigger), once each, and
   * rejects, once all ended, with what a run threw (logged as well), so that the runtime sees the
   * failure: the error itself, or an `AggregateError` of each when several failed.
   */
  runCron(cron: string): Promise<void>;
  /** Its jobs, in the order of their beans and methods: what and when each runs, and how it went. */
  jobs(): readonly ScheduledJobInfo[];
}

/** What `bootstrap` gives the scheduler of its app. */
export interface SchedulingApp {
  readonly context: ApplicationContext;
  readonly config: ConfigValues;
  /** `thaw.scheduling.enabled`. */
  readonly enabled: boolean;
  readonly logger: SchedulerLogger;
}

/** Where the decorators record what they mark. */
export const SCHEDULING: unique symbol = Symbol("thaw.scheduling");

/**
 * Records what a method decorator of scheduling says (`schedule` or `lock`) on the class being
 * decorated, beside what the other one said of the same method.
 */
export function markScheduledMethod(
  decorator: string,
  value: unknown,
  context: ClassMethodDecoratorContext,
  feature: FeatureFactory,
  mark: { schedule: unknown } | { lock: unknown },
): void {
  const access = methodAccess(decorator, value, context);
  const entry = ownEntry<SchedulingEntry>(
    context.metadata,
    SCHEDULING,
    () => ({ methods: [] }),
  );
  // The decorators' module brings the scheduler: there whenever they are.
  bringFeature(context.metadata, feature);
  let record = entry.methods.find((r) => r.methodName === access.methodName);
  if (record === undefined) {
    record = { ...access };
    entry.methods.push(record);
  }
  const key = "schedule" in mark ? "schedule" : "lock";
  if (record[key] !== undefined) {
    throw new TypeError(`@${decorator} on ${access.methodName}: given twice; give it once`);
  }
  record[key] = "schedule" in mark ? mark.schedule : mark.lock;
}
