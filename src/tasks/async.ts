// `@Async`: a bean's method whose calls return a promise at once while the body runs on an
// executor of `tasks()`, never in the caller's stack nor in its transaction.
import type { Class } from "../context/class.ts";
import {
  declaredAsync,
  type MethodInterceptor,
  type MethodInvocation,
} from "../context/interceptors.ts";
import { watchedResult } from "./async_result.ts";
import { decorateMethod } from "./method_decoration.ts";
import { markOf, whereOf } from "./method_marks.ts";
import type { TaskExecutor } from "./task_executor.ts";
import { TaskExecutors } from "./task_executors.ts";
import { TASK_ORDER } from "./task_order.ts";
import { TaskRejectedError } from "./task_rejected_error.ts";
import { MethodPlans } from "../context/method_plans.ts";
import { shownValue } from "../shown_value.ts";

/** Each `@Async` method's executor name (`undefined`: the default one), by method name. */
export const ASYNC: unique symbol = Symbol("thaw.async");

/**
 * What {@linkcode Async} returns: a decorator for a bean's async method. A method that is not
 * `async` does not compile: its caller would get a promise where its type says a value.
 */
export type AsyncDecorator = <This, A extends unknown[], R>(
  value: (this: This, ...args: A) => Promise<R>,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: A) => Promise<R>>,
) => void;

const ASYNC_ONLY = "@Async answers its caller with a promise at once";

/**
 * Runs the method on an executor of `bootstrap({ tasks: tasks() })`: a call returns a promise of
 * the method's result at once, and the body runs later, on a task of its own, outside the
 * caller's transaction. `executor` names one of `thaw.task.executors`; the default one
 * (`thaw.task.execution.pool.*`) otherwise. A full queue rejects the call's promise with
 * `TaskRejectedError` and runs nothing; a failure nobody awaits is logged with the bean and
 * method. The method is declared `async`: one that is not does not compile, and, past the types,
 * making an instance of its class throws a `TypeError` naming the class and the method.
 *
 * It runs outermost, whatever order the decorators are written in: the method's other
 * decorators, and a `@Transactional` on its class, run on the executor too. Only beans the
 * container built run apart.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md#async
 */
export function Async(executor?: string): AsyncDecorator {
  if (executor !== undefined && (typeof executor !== "string" || executor === "")) {
    throw new TypeError(
      `@Async(executor): give the name of one of thaw.task.executors, got ${shownValue(executor)}`,
    );
  }
  return (value, context) => {
    decorateMethod(value, context as ClassMethodDecoratorContext, {
      decorator: "@Async",
      does: "runs",
      promise: ASYNC_ONLY,
      declaredAsync: false,
      key: ASYNC,
      mark: executor,
      interceptor: AsyncInterceptor as Class,
    });
    if (declaredAsync(value)) return;
    // Past the types (a cast, JavaScript), the caller would still get a promise and fail far
    // from here. The class is not known while its methods are decorated, so the refusal waits
    // for the first instance: before the container, or anyone, can call the method.
    const name = String(context.name);
    context.addInitializer(function (this: unknown) {
      const type = (this as { constructor?: { name?: string } } | null)?.constructor?.name;
      throw new TypeError(
        `${type || "(anonymous)"}.${name}(): ${ASYNC_ONLY}, so the method must be declared ` +
          `async: async ${name}(...): Promise<T>`,
      );
    });
  };
}

/** Hands each `@Async` call to its executor; registered by `tasks()`. */
export class AsyncInterceptor implements MethodInterceptor {
  /** Its place in a method's chain, whatever order the decorators are written in. */
  static "thaw.order": number = TASK_ORDER.async;
  /** Said when `@Async` is used without `tasks()`. */
  static "thaw.missing" = `@Async ${TaskExecutors["thaw.missing"]}`;

  readonly #executors: TaskExecutors;
  // Each method's executor.
  readonly #plans = new MethodPlans<Plan>();

  constructor(executors: TaskExecutors) {
    this.#executors = executors;
  }

  intercept({ target, method }: MethodInvocation, next: () => unknown): Promise<unknown> {
    const plan = this.#plan(target, method);
    return watchedResult<unknown>(
      (resolve, reject) => plan.executor.submit(next).then(resolve, reject),
      (error) => {
        // The close logs how many it dropped, once.
        if (!(error instanceof TaskRejectedError && error.dropped)) {
          this.#executors.unawaited(plan.where, error);
        }
      },
    );
  }

  #plan(target: object, method: string): Plan {
    return this.#plans.of(target, method, () => {
      const name = markOf<string | undefined>(target, ASYNC, method) ?? "default";
      // bootstrap refuses a name no executor has (tasks_setup.ts) before any call can come.
      const executor = this.#executors.get(name) ?? this.#executors.get("default");
      if (executor === undefined) {
        throw new Error(
          `${whereOf(target, method)}: @Async("${name}") names no executor, and there is no ` +
            `"default" one`,
        );
      }
      return { executor, where: whereOf(target, method) };
    });
  }
}

interface Plan {
  readonly executor: TaskExecutor;
  readonly where: string;
}
