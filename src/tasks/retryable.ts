// `@Retryable`: an async method tried again when it fails, Spring Framework 7's way.
import type { Class } from "../context/class.ts";
import type { MethodInterceptor, MethodInvocation } from "../context/interceptors.ts";
import { shownValue } from "../shown_value.ts";
import { BACKOFF_KEYS, readBackoff } from "../runtime/backoff.ts";
import { checkOptionsObject } from "../options_object.ts";
import { decorateMethod } from "./method_decoration.ts";
import { requiredMark } from "./method_marks.ts";
import {
  ERROR_RULE_KEYS,
  type ErrorClass,
  readErrorRules,
  retries,
  RETRY_DEFAULTS,
  type RetryPolicy,
} from "./retry_policy.ts";
import { TaskExecutors } from "./task_executors.ts";
import { TASK_ORDER } from "./task_order.ts";

/**
 * What `@Retryable` takes: Spring Framework 7's names; times in milliseconds or as durations
 * (`"250ms"`, `"5s"`, `"10m"`, `"1h"`).
 */
export interface RetryableOptions {
  /** Retries after the first attempt: 3 by default. */
  readonly maxRetries?: number | undefined;
  /** The wait before the first retry: 1 s by default; at most 2,147,483,647 ms (a timer's). */
  readonly delay?: number | string | undefined;
  /** What each wait is multiplied by for the next: 1 by default. */
  readonly multiplier?: number | undefined;
  /** The longest wait: 2,147,483,647 ms (what one timer waits) by default, and at most. */
  readonly maxDelay?: number | string | undefined;
  /** How far a wait may stray, as the waits grow: 0 by default. */
  readonly jitter?: number | string | undefined;
  /** The errors retried (with their subclasses): any by default. */
  readonly includes?: readonly ErrorClass[] | undefined;
  /** The errors never retried (with their subclasses); the nearest rule wins. */
  readonly excludes?: readonly ErrorClass[] | undefined;
}

/** What {@linkcode Retryable} returns: a decorator for an async method. */
export type RetryableDecorator = <This, A extends unknown[], R>(
  value: (this: This, ...args: A) => Promise<R>,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: A) => Promise<R>>,
) => void;

const RETRYABLE: unique symbol = Symbol("thaw.retryable");
const ASYNC_ONLY = "@Retryable awaits each attempt: declare it async";

/**
 * Tries the method again when it fails: up to `maxRetries` more times, waiting `delay` ms, then
 * `delay * multiplier` ... (at most `maxDelay`, give or take `jitter`). `includes` and `excludes`
 * name error classes; the nearest rule to the error's class wins. The last error reaches the
 * caller with `attempts` (how many calls were made) set on it, at once when the app closes during
 * a wait. Needs `bootstrap({ tasks: tasks() })`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md#retryable
 */
export function Retryable(options: RetryableOptions = {}): RetryableDecorator {
  const policy = retryPolicy(options);
  return (value, context) =>
    decorateMethod(value, context as ClassMethodDecoratorContext, {
      decorator: "@Retryable",
      does: "retries",
      promise: ASYNC_ONLY,
      declaredAsync: true,
      key: RETRYABLE,
      mark: policy,
      interceptor: RetryInterceptor as Class,
    });
}

function retryPolicy(options: RetryableOptions): RetryPolicy {
  const given: unknown = options;
  checkOptionsObject(given, "@Retryable", ["maxRetries", ...BACKOFF_KEYS, ...ERROR_RULE_KEYS]);
  const { maxRetries = RETRY_DEFAULTS.maxRetries } = given;
  if (typeof maxRetries !== "number" || !Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(
      `@Retryable: maxRetries is a whole number, 0 or more, got ${shownValue(maxRetries)}`,
    );
  }
  return {
    maxRetries,
    backoff: readBackoff(given, "@Retryable", RETRY_DEFAULTS.backoff),
    ...readErrorRules(given, "@Retryable"),
  };
}

/** Runs each `@Retryable` call's attempts; registered by `tasks()`. */
export class RetryInterceptor implements MethodInterceptor {
  /** Its place in a method's chain, whatever order the decorators are written in. */
  static "thaw.order": number = TASK_ORDER.retry;
  /** Said when `@Retryable` is used without `tasks()`. */
  static "thaw.missing" = `@Retryable ${TaskExecutors["thaw.missing"]}`;

  readonly #executors: TaskExecutors;
  // Aborted when the app closes: a call waiting to try again gives up then.
  readonly #closing = new AbortController();

  constructor(executors: TaskExecutors) {
    this.#executors = executors;
  }

  async intercept({ target, method }: MethodInvocation, next: () => unknown): Promise<unknown> {
    const policy = requiredMark<RetryPolicy>(target, RETRYABLE, method, "Retryable");
    for (let attempt = 1;; attempt++) {
      try {
        return await next();
      } catch (error) {
        const last = attempt > policy.maxRetries || !retries(policy, error) ||
          !await this.#pause(policy.backoff.delayOf(attempt));
        if (last) {
          if (typeof error === "object" && error !== null && Object.isExtensible(error)) {
            Object.assign(error, { attempts: attempt });
          }
          throw error;
        }
      }
    }
  }

  /** The app closes: the calls waiting to try again reject with their last error. */
  close(): void {
    this.#closing.abort();
  }

  // Waits `ms` before a retry: whether to make it (not when the app closed before or meanwhile).
  #pause(ms: number): Promise<boolean> {
    const { signal } = this.#closing;
    if (signal.aborted) return Promise.resolve(false);
    this.#executors.retries++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
