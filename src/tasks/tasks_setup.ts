// `tasks()`: the task executors of the configuration, and the interceptors of `@Async`,
// `@Lockable`, `@Retryable` and `@ConcurrencyLimit`, registered as beans before the app's (an
// app that uses one of them without `tasks()` is told so by the container, naming the method).
// Once every bean is made, the names the decorators give (executors, lock managers) are checked;
// at close the executors finish what they hold for the period, then drop what is queued.
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { Class } from "../context/class.ts";
import { DefinitionError } from "../context/errors.ts";
import type { FeatureFactory } from "../app_feature.ts";
import type { SetupHost } from "../feature_value.ts";
import { optionalApi } from "../actuator/opentelemetry.ts";
import { runDetached } from "../events/detached_run.ts";
import { ASYNC, AsyncInterceptor } from "./async.ts";
import { ConcurrencyLimitInterceptor } from "./concurrency_limit.ts";
import { checkLockManagers, LockInterceptor } from "./lockable.ts";
import { markedMethods } from "./method_marks.ts";
import { RetryInterceptor } from "./retryable.ts";
import { executorSettings } from "./executor_settings.ts";
import { type LeftAtClose, TaskExecutor } from "./task_executor.ts";
import { TaskExecutors } from "./task_executors.ts";
import { tasksHealth } from "./tasks_health.ts";
import { type TasksFeature, tasksFeature } from "./tasks_feature.ts";

/**
 * Work beside the request, for `bootstrap({ tasks: tasks() })`: the task executors of
 * `thaw.task.execution.pool.*` (and `thaw.task.executors.<name>.pool.*`) that `@Async` methods
 * run on, and what `@Lockable`, `@Retryable` and `@ConcurrencyLimit` need. `app.close()` stops
 * taking runs, lets those running and queued finish for
 * `thaw.task.execution.shutdown.await-termination-period` (30 s), then drops the queued ones
 * and abandons those still running (nothing stops them), logging how many of each.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md
 */
export function tasks(): TasksFeature {
  return tasksFeature(setUp);
}

async function setUp(
  settings: ThawSettings,
  { context, logger }: SetupHost,
): Promise<FeatureFactory> {
  const { executors: bounds, awaitTerminationMs } = executorSettings(settings);
  const leave = await leaveTrace();
  const executors = new TaskExecutors(
    new Map([...bounds].map(([name, b]) => [name, new TaskExecutor(name, b, leave)])),
    logger,
  );
  const source = "tasks()";
  const locks = new LockInterceptor(logger);
  const retrying = new RetryInterceptor(executors);
  context.registerBean({
    name: "taskExecutors",
    type: TaskExecutors,
    source,
    create: () => Promise.resolve(executors),
  });
  const interceptors: [string, Class, () => unknown][] = [
    ["asyncInterceptor", AsyncInterceptor, () => new AsyncInterceptor(executors)],
    ["lockInterceptor", LockInterceptor, () => locks],
    ["retryInterceptor", RetryInterceptor, () => retrying],
    [
      "concurrencyLimitInterceptor",
      ConcurrencyLimitInterceptor,
      () => new ConcurrencyLimitInterceptor(),
    ],
  ];
  for (const [name, type, make] of interceptors) {
    context.registerBean({
      name: `thaw.${name}`,
      type,
      source,
      create: () => Promise.resolve(make()),
    });
  }
  // Served by the actuator's health, where the app has it; a record nobody reads otherwise.
  context.register(tasksHealth(executors));
  return (host) => {
    const beans = host.context.beans();
    checkExecutors(beans, executors);
    checkLockManagers(beans, host.context);
    return {
      close: {
        jobs: async () => {
          // A wait between attempts is no work to finish: the retry rejects with its last error
          // now, rather than holding the close and then calling into beans that stopped.
          retrying.close();
          const left = await Promise.all(
            executors.all().map(async (executor) =>
              [executor.name, await executor.shutdown(awaitTerminationMs)] as const
            ),
          );
          // Only once the runs finished or had their period: a queued run that starts meanwhile
          // waits for its key like any other.
          locks.close();
          for (const [name, counts] of left) {
            const said = leftAtClose(name, counts, awaitTerminationMs);
            if (said !== undefined) (logger.warn ?? logger.error).call(logger, said);
          }
          return undefined;
        },
      },
    };
  };
}

// What the close of executor `name` says of the runs its period left; nothing when none.
function leftAtClose(name: string, left: LeftAtClose, awaitMs: number): string | undefined {
  const { dropped, abandoned } = left;
  const parts: string[] = [];
  if (dropped > 0) {
    parts.push(`${dropped} queued run${dropped === 1 ? "" : "s"} dropped, never started`);
  }
  if (abandoned > 0) {
    parts.push(
      `${abandoned} run${abandoned === 1 ? "" : "s"} still running, abandoned: not stopped, ` +
        `${abandoned === 1 ? "it" : "they"} may still finish`,
    );
  }
  if (parts.length === 0) return undefined;
  return `The task executor "${name}" gave up at close after ${awaitMs} ms ` +
    `(thaw.task.execution.shutdown.await-termination-period): ${parts.join("; ")}`;
}

// The executors' runs begin outside the caller's transaction and, where OpenTelemetry is
// installed, outside its trace: each run is a root of its own.
async function leaveTrace(): Promise<<T>(fn: () => T) => T> {
  const api = await optionalApi();
  if (api === undefined) return runDetached;
  return <T>(fn: () => T): T => api.context.with(api.ROOT_CONTEXT, () => runDetached(fn));
}

// An `@Async("name")` naming no executor of the configuration.
function checkExecutors(
  beans: readonly { readonly instance: unknown }[],
  executors: TaskExecutors,
): void {
  for (const { instance } of beans) {
    for (const { where, mark } of markedMethods<string | undefined>(instance, ASYNC)) {
      if (mark !== undefined && executors.get(mark) === undefined) {
        throw new DefinitionError(
          `${where}: @Async("${mark}") names no executor of thaw.task.executors (${
            executors.names().join(", ")
          })`,
        );
      }
    }
  }
}
