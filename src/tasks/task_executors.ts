// The executors of one app (the default one and those `thaw.task.executors` names), and where a
// failed run nobody awaited is reported: the bean `tasks()` registers, which the decorators'
// interceptors are made with.
import type { ContextLogger } from "../context/class_record.ts";
import type { ExecutorCounts, TaskExecutor } from "./task_executor.ts";
import type { DaemonSupervisor } from "./daemon_supervisor.ts";

/** What the executors counted so far, for metrics and health. */
export interface TaskCounts {
  readonly executors: readonly (ExecutorCounts & { readonly name: string })[];
  readonly retries: number;
  readonly unawaitedFailures: number;
  readonly daemonRestarts: number;
  /** The daemons now waiting to be restarted: health is DOWN meanwhile. */
  readonly daemonsInBackoff: readonly string[];
}

/** The executors of one app, by name. */
export class TaskExecutors {
  /** Said when a decorator of `@thaw/thaw/tasks` is used without `tasks()`. */
  static "thaw.missing" =
    'needs the task executors of tasks(): import { tasks } from "@thaw/thaw/tasks" and pass ' +
    "bootstrap({ tasks: tasks() }).";

  readonly #executors: ReadonlyMap<string, TaskExecutor>;
  readonly #logger: ContextLogger;
  /** Failed runs whose promise nobody awaited, logged. */
  unawaitedFailures = 0;
  /** The supervisor of the app's `@Daemon` beans, when it has any. */
  daemons: DaemonSupervisor | undefined = undefined;
  /** Retries `@Retryable` made. */
  retries = 0;

  constructor(executors: ReadonlyMap<string, TaskExecutor>, logger: ContextLogger) {
    this.#executors = executors;
    this.#logger = logger;
  }

  /** Every executor, `default` first. */
  all(): readonly TaskExecutor[] {
    return [...this.#executors.values()];
  }

  /** The executor of that name; `undefined` when the configuration has none. */
  get(name: string): TaskExecutor | undefined {
    return this.#executors.get(name);
  }

  /** The names of the executors, as a refusal lists them. */
  names(): string[] {
    return [...this.#executors.keys()];
  }

  /**
   * What the actuator reports (`executor.*` by executor name, retries, daemon restarts): read as
   * each scrape comes, under a text key so that the actuator need not load this module.
   */
  "thaw.taskCounts"(): TaskCounts {
    return {
      executors: this.all().map((executor) => ({ name: executor.name, ...executor.counts })),
      retries: this.retries,
      unawaitedFailures: this.unawaitedFailures,
      daemonRestarts: this.daemons?.restarts ?? 0,
      daemonsInBackoff: [...this.daemons?.inBackoff ?? []],
    };
  }

  /** A run of `where` failed and nobody awaited its promise: logged, counted, never thrown. */
  unawaited(where: string, error: unknown): void {
    this.unawaitedFailures++;
    this.#logger.error(`@Async ${where} failed, and nobody awaited its promise:`, error);
  }
}
