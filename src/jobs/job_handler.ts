// `@JobHandler(queue, options)`: the method that runs the jobs of a queue. The decorator checks its
// options where it is written and leaves a mark; `jobs()` finds the marked methods once the beans
// are made. An app that marks one without `jobs()` is stopped, told where it lives.
import { bringFeature, type FeatureFactory } from "../app_feature.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { DefinitionError } from "../context/errors.ts";
import { markedMethods, markMethod } from "../tasks/method_marks.ts";
import { checkQueueName } from "./enqueue_options.ts";
import {
  type HandlerSettings,
  handlerSettings,
  type JobHandlerOptions,
} from "./handler_options.ts";
import { JobQueue } from "./job_queue.ts";

/** What a handler is given beside the payload. */
export interface Job {
  /** The job's id, as `enqueue` answered it. */
  readonly id: string;
  /** The queue it was enqueued on. */
  readonly queue: string;
  /** This run's number, from 1. */
  readonly attempt: number;
  /** When it was enqueued, on the database's clock. */
  readonly enqueuedAt: Date;
  /** Aborted when the app closes, or when the run outlasts its lease (`timeout`). */
  readonly signal: AbortSignal;
}

/** What {@linkcode JobHandler} returns: a decorator for a method `(payload, job)`. */
export type JobHandlerDecorator = (
  value: (payload: never, job: Job) => unknown,
  context: ClassMethodDecoratorContext,
) => void;

/** The mark a handler leaves. */
export interface HandlerMark {
  readonly queue: string;
  readonly settings: HandlerSettings;
}

const HANDLER: unique symbol = Symbol("thaw.jobHandler");

/**
 * Runs the jobs of `queue`: the method is called `(payload, job)` for each, `concurrency` at a
 * time in each process, from `app.start()` (which `listen` calls). A run that resolves is done; one
 * that throws (or outlasts `timeout`) is tried again after the backoff, `attempts` runs in all,
 * then the job is `dead`, kept with its last error. Needs `bootstrap({ jobs: jobs() })`; the class
 * must be a bean (`@Service()`).
 *
 * @example Options are checked where the decorator is written
 * ```ts
 * import assert from "node:assert/strict";
 * import { JobHandler } from "@thaw/thaw/jobs";
 *
 * const decorator = JobHandler("mail", { attempts: 5, backoff: { delay: "10s" }, timeout: "1m" });
 * assert.equal(typeof decorator, "function");
 * assert.throws(() => JobHandler("mail", { retries: 2 } as never), /unknown option "retries"/);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/jobs.md#handlers
 */
export function JobHandler(queue: string, options?: JobHandlerOptions): JobHandlerDecorator {
  const name = checkQueueName(queue, "@JobHandler(queue)");
  const settings = handlerSettings(options, `@JobHandler("${name}")`);
  return (value, context) => {
    checkDecoratorCall("@JobHandler", value, context);
    const method = String(context.name);
    if (context.kind !== "method" || context.static || context.private) {
      throw new TypeError(
        `@JobHandler("${name}") on ${method}: it runs public instance methods only`,
      );
    }
    markMethod<HandlerMark>(context.metadata, HANDLER, method, { queue: name, settings });
    bringFeature(context.metadata, requireJobs);
  };
}

/** A handler found on a bean: the bean's method, bound, and its mark. */
export interface FoundHandler extends HandlerMark {
  /** `Class.method()`, for messages. */
  readonly where: string;
  readonly run: (payload: unknown, job: Job) => unknown;
}

/** The handlers of `beans`, one per queue; a second one for a queue is refused, naming both. */
export function foundHandlers(
  beans: readonly { readonly instance: unknown }[],
): FoundHandler[] {
  const byQueue = new Map<string, FoundHandler>();
  for (const { instance } of beans) {
    for (const { where, method, mark } of markedMethods<HandlerMark>(instance, HANDLER)) {
      const other = byQueue.get(mark.queue);
      if (other !== undefined) {
        throw new DefinitionError(
          `${where}: @JobHandler("${mark.queue}"): ${other.where} handles that queue already; ` +
            "a queue has one handler",
        );
      }
      const fn = (instance as Record<string, (payload: unknown, job: Job) => unknown>)[method];
      byQueue.set(mark.queue, { ...mark, where, run: fn.bind(instance) });
    }
  }
  return [...byQueue.values()];
}

// Brought by the decorator: an app that has handlers but no `jobs()` would never run them.
const requireJobs: FeatureFactory = (host) => {
  const beans = host.context.beans();
  if (beans.some(({ instance }) => instance instanceof JobQueue)) return undefined;
  const [first] = foundHandlers(beans);
  throw new DefinitionError(
    `${first.where}: @JobHandler("${first.queue}") runs on the job queue, which lives in its ` +
      'own entry point: import { jobs } from "@thaw/thaw/jobs" and pass bootstrap({ jobs: jobs() })',
  );
};
