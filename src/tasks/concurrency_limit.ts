// `@ConcurrencyLimit(n)`: at most `n` runs of a method at once; the others wait, first come first.
import type { Class } from "../context/class.ts";
import type { MethodInterceptor, MethodInvocation } from "../context/interceptors.ts";
import { checkOptionsObject } from "../options_object.ts";
import { decorateMethod } from "./method_decoration.ts";
import { requiredMark, whereOf } from "./method_marks.ts";
import { TaskExecutors } from "./task_executors.ts";
import { TASK_ORDER } from "./task_order.ts";
import { shownValue } from "../shown_value.ts";

/** What `@ConcurrencyLimit` takes besides its limit. */
export interface ConcurrencyLimitOptions {
  /**
   * How many calls may wait for a run slot (1,000 by default, as an executor's queue): a call
   * past it rejects at once, and the method does not run for it. 0: none waits.
   */
  readonly queueCapacity?: number | undefined;
}

/** What {@linkcode ConcurrencyLimit} returns: a decorator for an async method. */
export type ConcurrencyLimitDecorator = <This, A extends unknown[], R>(
  value: (this: This, ...args: A) => Promise<R>,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: A) => Promise<R>>,
) => void;

interface LimitMark {
  readonly limit: number;
  readonly queueCapacity: number;
}

const LIMIT: unique symbol = Symbol("thaw.concurrencyLimit");
const DEFAULT_QUEUE_CAPACITY = 1000;
const ASYNC_ONLY = "@ConcurrencyLimit counts a run until its promise settles: declare it async";

/**
 * At most `n` runs of the method at once (Spring's `@ConcurrencyLimit`), the bean's own calls
 * included; the others wait, in the order they came, `queueCapacity` of them at most (1,000 by
 * default): a call past that rejects at once, naming the method and the bound, and does not run.
 * Needs `bootstrap({ tasks: tasks() })`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md#concurrencylimit
 */
export function ConcurrencyLimit(
  n: number,
  options: ConcurrencyLimitOptions = {},
): ConcurrencyLimitDecorator {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new TypeError(
      `@ConcurrencyLimit(n): give a whole number, 1 or more, got ${shownValue(n)}`,
    );
  }
  const given: unknown = options;
  checkOptionsObject(given, `@ConcurrencyLimit(${n})`, ["queueCapacity"]);
  const { queueCapacity = DEFAULT_QUEUE_CAPACITY } = options;
  if (!Number.isSafeInteger(queueCapacity) || queueCapacity < 0) {
    throw new TypeError(
      `@ConcurrencyLimit(${n}, { queueCapacity }): give a whole number, 0 or more, got ` +
        String(queueCapacity),
    );
  }
  const mark: LimitMark = { limit: n, queueCapacity };
  return (value, context) =>
    decorateMethod(value, context as ClassMethodDecoratorContext, {
      decorator: "@ConcurrencyLimit",
      does: "limits",
      promise: ASYNC_ONLY,
      declaredAsync: true,
      key: LIMIT,
      mark,
      interceptor: ConcurrencyLimitInterceptor as Class,
    });
}

interface Gate {
  running: number;
  readonly waiting: (() => void)[];
}

/** Holds each `@ConcurrencyLimit` call until a slot is free; registered by `tasks()`. */
export class ConcurrencyLimitInterceptor implements MethodInterceptor {
  /** Its place in a method's chain, whatever order the decorators are written in. */
  static "thaw.order": number = TASK_ORDER.concurrencyLimit;
  /** Said when `@ConcurrencyLimit` is used without `tasks()`. */
  static "thaw.missing" = `@ConcurrencyLimit ${TaskExecutors["thaw.missing"]}`;

  // Each bean's gates, by method.
  readonly #gates = new WeakMap<object, Map<string, Gate>>();

  async intercept({ target, method }: MethodInvocation, next: () => unknown): Promise<unknown> {
    let gates = this.#gates.get(target);
    if (gates === undefined) this.#gates.set(target, gates = new Map());
    let gate = gates.get(method);
    if (gate === undefined) gates.set(method, gate = { running: 0, waiting: [] });
    const { limit, queueCapacity } = requiredMark<LimitMark>(
      target,
      LIMIT,
      method,
      "ConcurrencyLimit",
    );
    if (gate.running >= limit) {
      if (gate.waiting.length >= queueCapacity) {
        throw new Error(
          `${whereOf(target, method)}: @ConcurrencyLimit(${limit}) refused the call: ` +
            `${gate.running} run${gate.running === 1 ? "" : "s"} going and ${queueCapacity} ` +
            `call${queueCapacity === 1 ? "" : "s"} waiting, its queueCapacity`,
        );
      }
      // The slot is handed over by the run that ends: `running` stays counted.
      await new Promise<void>((resolve) => gate.waiting.push(resolve));
    } else {
      gate.running++;
    }
    try {
      return await next();
    } finally {
      const nextRun = gate.waiting.shift();
      if (nextRun !== undefined) nextRun();
      else gate.running--;
    }
  }
}
