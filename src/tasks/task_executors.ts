// The executors of one app (the default one and those `thaw.task.executors` names), and where a
// failed run nobody awaited is reported: the bean `tasks()` registers, which the decorators'
// interceptors are made with.
import type { ContextLogger } from "../context/class_record.ts";
import type { TaskExecutor } from "./task_executor.ts";
import type { DaemonSupervisor } from "./daemon_supervisor.ts";

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

  /** A run of `where` failed and nobody awaited its promise: logged, counted, never thrown. */
  unawaited(where: string, error: unknown): void {
    this.unawaitedFailures++;
    this.#logger.error(`@Async ${where} failed, and nobody awaited its promise:`, error);
  }
}
