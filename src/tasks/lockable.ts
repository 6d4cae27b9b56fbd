// `@Lockable`: runs of one key never overlap. The key comes from the method's arguments; the
// lock from a lock manager, in the process unless the options name a bean.
import type { ApplicationContext } from "../context/application_context.ts";
import type { Class } from "../context/class.ts";
import type { ContextLogger } from "../context/class_record.ts";
import { DefinitionError } from "../context/errors.ts";
import type { MethodInterceptor, MethodInvocation } from "../context/interceptors.ts";
import { checkOptionsObject } from "../options_object.ts";
import { durationOption } from "../config/duration.ts";
import { LockManager } from "./lock_manager.ts";
import { LockNotAcquiredError } from "./lock_not_acquired_error.ts";
import { MemoryLockManager } from "./memory_lock_manager.ts";
import { decorateMethod } from "./method_decoration.ts";
import { markedMethods, requiredMark, whereOf } from "./method_marks.ts";
import { shownKey } from "./shown_key.ts";
import { MethodPlans } from "../context/method_plans.ts";
import { TaskExecutors } from "./task_executors.ts";
import { TASK_ORDER } from "./task_order.ts";

/** What `@Lockable` takes: the key of a run, from the method's arguments. */
export interface LockableOptions<A extends unknown[]> {
  /** The lock's key, from the method's arguments: `(id: number) => "order-" + id`. */
  readonly key: (...args: A) => string;
  /** The bean name of a `LockManager`; the one of the process by default. */
  readonly lockManager?: string | undefined;
  /** How long a run waits for the key: milliseconds or a duration (`5s`); 0 (one try) by default. */
  readonly waitTime?: number | string | undefined;
  /**
   * After how long a lock whose holder died ends of itself (a store shared by processes): 60 s
   * by default; milliseconds or a duration.
   */
  readonly leaseTime?: number | string | undefined;
}

/** What {@linkcode Lockable} returns: a decorator for an async method whose arguments fit `key`. */
export type LockableDecorator<A extends unknown[]> = <This, M extends [...A, ...unknown[]]>(
  value: (this: This, ...args: M) => Promise<unknown>,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: M) => Promise<unknown>>,
) => void;

interface LockMark {
  readonly key: (...args: unknown[]) => string;
  readonly lockManager: string | undefined;
  readonly waitMs: number;
  readonly leaseMs: number;
}

const LOCKABLE: unique symbol = Symbol("thaw.lockable");
const ASYNC_ONLY = "@Lockable holds its lock until the promise settles: declare it async";
const IN_PROCESS = "in-process";

/**
 * Runs of the method with one key never overlap: a run takes the lock of `key(...args)` first,
 * and gives it back when the method settles, whatever its outcome. A run that waited `waitTime`
 * (0 by default: one try) without it rejects with `LockNotAcquiredError`, and the method does not
 * run. The locks are the process's unless `lockManager` names a `LockManager` bean (in a database
 * or Redis, for runs across replicas). Needs `bootstrap({ tasks: tasks() })`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md#lockable
 */
export function Lockable<A extends unknown[]>(options: LockableOptions<A>): LockableDecorator<A> {
  const given: unknown = options;
  checkOptionsObject(given, "@Lockable", ["key", "lockManager", "waitTime", "leaseTime"]);
  if (typeof options.key !== "function") {
    throw new TypeError(
      '@Lockable takes { key }: a function of the method\'s arguments, (id) => "order-" + id',
    );
  }
  const { lockManager } = options;
  if (lockManager !== undefined && (typeof lockManager !== "string" || lockManager === "")) {
    throw new TypeError("@Lockable({ lockManager }): give the name of a LockManager bean");
  }
  const mark: LockMark = {
    key: options.key as (...args: unknown[]) => string,
    lockManager,
    waitMs: millis(options.waitTime, "waitTime", 0),
    leaseMs: millis(options.leaseTime, "leaseTime", 60_000),
  };
  return (value, context) =>
    decorateMethod(value, context as ClassMethodDecoratorContext, {
      decorator: "@Lockable",
      does: "locks",
      promise: ASYNC_ONLY,
      declaredAsync: true,
      key: LOCKABLE,
      mark,
      interceptor: LockInterceptor as Class,
    });
}

function millis(value: number | string | undefined, option: string, fallback: number): number {
  return value === undefined ? fallback : durationOption(value, `@Lockable({ ${option} })`);
}

/**
 * Checks, once the beans are made, that each `lockManager` a `@Lockable` names is a bean that is
 * a `LockManager`, and gives them to the interceptor.
 */
export function checkLockManagers(
  beans: readonly { readonly instance: unknown }[],
  context: ApplicationContext,
): void {
  let interceptor: LockInterceptor | undefined;
  for (const { instance } of beans) {
    for (const { where, mark } of markedMethods<LockMark>(instance, LOCKABLE)) {
      const name = mark.lockManager;
      if (name === undefined) continue;
      interceptor ??= context.getBean(LockInterceptor);
      if (interceptor.managers.has(name)) continue;
      let manager: unknown;
      try {
        manager = context.getBean(name);
      } catch {
        throw new DefinitionError(
          `${where}: @Lockable({ lockManager: "${name}" }) names no bean; declare a LockManager ` +
            `bean named ${name} (@thaw/thaw/tasks' SqlLockManager, @thaw/thaw/cache-redis' ` +
            "RedisLockManager, or a subclass of your own)",
        );
      }
      if (!(manager instanceof LockManager)) {
        throw new DefinitionError(
          `${where}: @Lockable({ lockManager: "${name}" }) names a bean that is no LockManager ` +
            `(a ${(manager as object | null)?.constructor?.name ?? typeof manager})`,
        );
      }
      interceptor.managers.set(name, manager);
    }
  }
}

/** Takes each `@Lockable` call's lock around it; registered by `tasks()`. */
export class LockInterceptor implements MethodInterceptor {
  /** Its place in a method's chain, whatever order the decorators are written in. */
  static "thaw.order": number = TASK_ORDER.lock;
  /** Said when `@Lockable` is used without `tasks()`. */
  static "thaw.missing" = `@Lockable ${TaskExecutors["thaw.missing"]}`;

  /** The lock managers the methods name, by bean name (set once the beans are made). */
  readonly managers = new Map<string, LockManager>();
  readonly #memory = new MemoryLockManager();
  // Aborted when the app's close has given up waiting for the runs: a call still waiting for a
  // lock gives up then.
  readonly #closing = new AbortController();
  // Each method's mark: looked up at its first call, not at every one.
  readonly #marks = new MethodPlans<LockMark>();
  // Where a lock that could not be given back is reported.
  readonly #logger: ContextLogger;

  constructor(logger: ContextLogger) {
    this.#logger = logger;
  }

  async intercept(
    { target, method, args }: MethodInvocation,
    next: () => unknown,
  ): Promise<unknown> {
    const mark = this.#mark(target, method);
    const key = mark.key(...args);
    if (typeof key !== "string") {
      throw new TypeError(
        `${whereOf(target, method)}: @Lockable's key gave ${typeof key}, not a text`,
      );
    }
    const manager = this.#manager(mark, target, method);
    const held = await manager.acquire({
      key,
      waitMs: mark.waitMs,
      leaseMs: mark.leaseMs,
      signal: this.#closing.signal,
    });
    if (held === undefined) {
      throw new LockNotAcquiredError(
        key,
        mark.lockManager ?? IN_PROCESS,
        mark.waitMs,
        whereOf(target, method),
        mark.waitMs > 0 && this.#closing.signal.aborted,
      );
    }
    try {
      return await next();
    } finally {
      // The method ran: the caller gets its outcome, never the store's failure to give the lock
      // back (a caller that retried on it would run the work twice). The lease ends the lock.
      await held.release().catch((error: unknown) =>
        this.#logger.error(
          `${whereOf(target, method)}: giving back the lock ${shownKey(key)} of the lock manager ` +
            `${mark.lockManager ?? IN_PROCESS} failed; the call keeps its own outcome, and the ` +
            `lock ends with its lease (${mark.leaseMs} ms, leaseTime):`,
          error,
        )
      );
    }
  }

  /**
   * The app's close has given the runs their time: the calls still waiting for a lock stop
   * waiting (`LockNotAcquiredError`).
   */
  close(): void {
    this.#closing.abort();
  }

  // The manager `mark` names, given by checkLockManagers once the beans are made.
  #manager(mark: LockMark, target: object, method: string): LockManager {
    if (mark.lockManager === undefined) return this.#memory;
    const manager = this.managers.get(mark.lockManager);
    if (manager === undefined) {
      throw new Error(
        `${whereOf(target, method)}: @Lockable({ lockManager: "${mark.lockManager}" }) ran ` +
          "before its LockManager bean was checked (checkLockManagers)",
      );
    }
    return manager;
  }

  #mark(target: object, method: string): LockMark {
    return this.#marks.of(
      target,
      method,
      () => requiredMark<LockMark>(target, LOCKABLE, method, "Lockable"),
    );
  }
}
