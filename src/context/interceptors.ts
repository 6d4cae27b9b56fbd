// Method interceptors: what `@UseInterceptors` records, and how the container wraps a bean's
// methods once it has built the bean. The wrapper is an own property of the bean, so the bean's
// own calls (`this.find()`) and every caller's go through it, and a bean made with `new` outside
// the container is left as it is.
import type { Class } from "./class.ts";
import { type BeanSupport, classesOf, entryOf, EXTENSION, ownEntry } from "./class_record.ts";
import { setAwaitedForm } from "./awaited_form.ts";
import { checkDecoratorCall } from "./decorator_call.ts";
import { DefinitionError } from "./errors.ts";
import { lifecycleHooks } from "./lifecycle.ts";

/**
 * One call of an intercepted method, as an interceptor sees it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { MethodInvocation } from "@thaw/thaw";
 *
 * const invocation: MethodInvocation = { target: {}, method: "find", args: [7] };
 * assert.equal(invocation.method, "find");
 * ```
 */
export interface MethodInvocation {
  /** The bean whose method is called. */
  readonly target: object;
  /** The method's name, as written in the class. */
  readonly method: string;
  /**
   * The arguments: what `next()` passes on, so an interceptor may change them before it calls
   * `next()`.
   */
  readonly args: unknown[];
}

/**
 * A bean that runs around the methods `@UseInterceptors` names it on: `next()` runs the rest (the
 * interceptors after it, then the method) and returns the method's result, a promise for an
 * `async` method. Not calling `next()` skips the method; calling it again runs it again (a retry).
 *
 * It returns what `next()` returns in kind: no interceptor makes a method that returns a value
 * return a promise (`if (perms.isAdmin(user))` would hold for any answer). One that returns a
 * promise around such a call fails the call with a `TypeError` naming it and the method; so does
 * one that returns a promise before calling `next()` around a method not declared `async`,
 * which is then not run at all, and one that makes a promise of a thenable that is not one (a
 * query builder). Around an `async` method, what it returns or throws reaches the caller as a
 * promise.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#methodinterceptor
 */
export interface MethodInterceptor {
  /** Runs around one call; returns what the caller gets. */
  intercept(invocation: MethodInvocation, next: () => unknown): unknown;
}

/** What {@linkcode UseInterceptors} returns: a decorator for a bean class or one of its methods. */
export type InterceptorsDecorator = (
  value: unknown,
  context: ClassDecoratorContext | ClassMethodDecoratorContext,
) => void;

interface InterceptionEntry {
  /** `@UseInterceptors` on the class, as written. */
  readonly type: Class[];
  /** `@UseInterceptors` (and the decorators built on it) on each method, as written. */
  readonly methods: Map<string, Class[]>;
  /**
   * The methods that must be declared `async`, each with why (the decorator that makes it return
   * a promise, and what to do instead), checked on the bean at `bootstrap`.
   */
  readonly asyncOnly: Map<string, string>;
}

const INTERCEPTION = Symbol("thaw.interception");

// Each wrapper and the method it wraps.
const WRAPPED = new WeakMap<object, (...args: unknown[]) => unknown>();

/**
 * Runs the interceptors `items` (bean classes implementing {@linkcode MethodInterceptor}) around
 * a method, or around every method of a class (its `@PostConstruct` and `@PreDestroy` hooks
 * aside). The container builds the interceptors as beans, so they may use `@Autowired`; each
 * must be registered, or `bootstrap` stops naming it and the method. The first named runs
 * outermost: the class's interceptors, then the method's, as written; one named twice runs once.
 * The decorators of `@thaw/thaw/tasks` run outside them, wherever they are written.
 *
 * Only beans the container built are intercepted, and every call reaches the interceptors,
 * the bean's own calls (`this.find()`) included. Decorators of one's own are built on it:
 * `const Timed = () => UseInterceptors(Timing)`.
 *
 * @param items `MethodInterceptor` bean classes, outermost first
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#useinterceptors
 */
export function UseInterceptors(...items: Class<MethodInterceptor>[]): InterceptorsDecorator {
  const bad = items.findIndex((item) => typeof item !== "function");
  return (value, context) => {
    checkDecoratorCall("@UseInterceptors", value, context);
    const where = context.kind === "class"
      ? `class ${context.name ?? "(anonymous)"}`
      : String(context.name);
    if (items.length === 0) {
      throw new TypeError(`@UseInterceptors on ${where}: name at least one interceptor class`);
    }
    if (bad >= 0) {
      throw new TypeError(
        `@UseInterceptors on ${where}: item ${bad + 1} is ${
          String(items[bad])
        }, not a class; name bean classes that implement intercept(invocation, next)`,
      );
    }
    if (context.kind === "class") {
      interceptionOf(context.metadata).type.unshift(...items);
    } else {
      interceptMethod(context, items);
    }
  };
}

function interceptionOf(metadata: DecoratorMetadataObject): InterceptionEntry {
  (metadata as Record<symbol, unknown>)[EXTENSION] = interceptBean;
  return ownEntry(
    metadata,
    INTERCEPTION,
    () => ({ type: [], methods: new Map(), asyncOnly: new Map() }),
  );
}

/**
 * Runs `items` around the method `context` decorates, ahead of those the decorators below it
 * named (decorators apply from the method outwards, and the first written runs outermost). The
 * mechanism `@UseInterceptors` and `@Cacheable` share. `asyncOnly`, for interceptors that always
 * answer with a promise: the method must be declared `async`, else `bootstrap` stops with
 * `<Class>.<method>() is not declared async, and <asyncOnly>`.
 */
export function interceptMethod(
  context: ClassMethodDecoratorContext,
  items: Class[],
  asyncOnly?: string,
): void {
  const name = String(context.name);
  if (context.kind !== "method" || context.static || context.private) {
    throw new TypeError(
      `Interceptors on ${name}: they run around public instance methods only`,
    );
  }
  // The container finds the methods it wraps by their string names: one named by a symbol
  // would keep none of its interceptors (a `@Secured` one would run for any caller).
  if (typeof context.name === "symbol") {
    throw new TypeError(
      `Interceptors on ${name}: they run around public instance methods named by a string only`,
    );
  }
  const entry = interceptionOf(context.metadata);
  entry.methods.set(name, [...items, ...(entry.methods.get(name) ?? [])]);
  // The outermost decorator's reason is set last.
  if (asyncOnly !== undefined) entry.asyncOnly.set(name, asyncOnly);
}

// The container's part: resolves the interceptors of each intercepted method of `bean` and puts
// a wrapper that runs them in front of the method.
async function interceptBean(bean: object, support: BeanSupport): Promise<void> {
  const classes = classesOf(bean);
  const entries = classes.map((cls) => entryOf<InterceptionEntry>(cls, INTERCEPTION))
    .filter((entry) => entry !== undefined).reverse();
  const typeLevel = entries.flatMap((entry) => entry.type);
  const names = new Set(entries.flatMap((entry) => [...entry.methods.keys()]));
  if (typeLevel.length > 0) {
    const hooks = new Set(
      [...lifecycleHooks(bean, "postConstruct"), ...lifecycleHooks(bean, "preDestroy")]
        .map((hook) => hook.methodName),
    );
    for (const name of methodNames(bean)) if (!hooks.has(name)) names.add(name);
  }
  const typeName = classes[0]?.name || "(anonymous)";
  const made = new Map<Class, MethodInterceptor>();
  for (const name of names) {
    const found = (bean as Record<string, unknown>)[name];
    // An object another app's container wrapped already (a `@Bean` method returning one shared
    // instance): this app's interceptors replace that app's, not run inside them.
    const original = WRAPPED.get(found as object) ?? found;
    if (typeof original !== "function") continue;
    const where = `${typeName}.${name}()`;
    const asyncOnly = entries.map((e) => e.asyncOnly.get(name)).find((why) => why !== undefined);
    if (asyncOnly !== undefined && !declaredAsync(original)) {
      throw new DefinitionError(`${where} is not declared async, and ${asyncOnly}`);
    }
    const wanted = new Set([...typeLevel, ...entries.flatMap((e) => e.methods.get(name) ?? [])]);
    const chain: MethodInterceptor[] = [];
    for (const type of [...wanted].sort((a, b) => orderOf(a) - orderOf(b))) {
      chain.push(made.get(type) ?? await makeInterceptor(type, where, support, made));
    }
    Object.defineProperty(bean, name, {
      value: intercepted(bean, name, where, original as (...args: unknown[]) => unknown, chain),
      writable: true,
      configurable: true,
    });
  }
}

/**
 * The static key of an interceptor class's place in a method's chain: the lower runs further out,
 * whatever order the decorators are written in; equal ones keep the order written. 0 unless set,
 * as for `@UseInterceptors`' own, `@Cacheable`'s and `@Transactional`'s; `@thaw/thaw/tasks` sets
 * it below 0, so that `@Async` runs the whole chain on its executor, and a retry or a lock spans
 * whole transactions.
 */
const INTERCEPTOR_ORDER = "thaw.order";

function orderOf(type: Class): number {
  const order = (type as unknown as Record<string, unknown>)[INTERCEPTOR_ORDER];
  return typeof order === "number" ? order : 0;
}

// Makes the interceptor bean `type` for `where`, once for the bean.
async function makeInterceptor(
  type: Class,
  where: string,
  support: BeanSupport,
  made: Map<Class, MethodInterceptor>,
): Promise<MethodInterceptor> {
  const interceptor = await support.resolve(
    type,
    `@UseInterceptors(${type.name})`,
    where,
  ) as MethodInterceptor;
  if (typeof interceptor?.intercept !== "function") {
    throw new DefinitionError(
      `The interceptor ${type.name} of ${where} has no intercept(invocation, next) method`,
    );
  }
  made.set(type, interceptor);
  return interceptor;
}

/** The names of the methods of an object's classes, `constructor` and accessors aside. */
function methodNames(bean: object): Set<string> {
  const names = new Set<string>();
  for (
    let p = Object.getPrototypeOf(bean);
    p !== null && p !== Object.prototype;
    p = Object.getPrototypeOf(p)
  ) {
    for (const name of Object.getOwnPropertyNames(p)) {
      const descriptor = Object.getOwnPropertyDescriptor(p, name);
      if (name !== "constructor" && typeof descriptor?.value === "function") names.add(name);
    }
  }
  return names;
}

/**
 * Whether a function is declared `async`: the one sign that it answers with a promise which can be
 * read without calling it (a function that is not may return one, or may not). Every runtime
 * keeps it through decorators, tsx's lowering included.
 */
export function declaredAsync(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === "[object AsyncFunction]";
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== "object" || value === null) && typeof value !== "function") return false;
  try {
    return typeof (value as { then?: unknown }).then === "function";
  } catch {
    // A getter that throws: not something to await.
    return false;
  }
}

/** What a call gave, for messages: `returned a boolean`, `threw`. */
function given(outcome: { returned: unknown } | { threw: unknown }): string {
  if ("threw" in outcome) return "threw synchronously";
  const value = outcome.returned;
  if (value === undefined || value === null) return `returned ${value}`;
  const type = Array.isArray(value) ? "array" : typeof value;
  return `returned ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

/** One intercepted method: what every call of it needs. */
interface Chain {
  readonly target: object;
  readonly method: string;
  readonly where: string;
  readonly original: (...args: unknown[]) => unknown;
  readonly interceptors: readonly MethodInterceptor[];
  readonly isAsync: boolean;
}

/** One call through a chain. */
interface Call {
  readonly invocation: MethodInvocation;
  /** The caller may use the answer as it is, so it must stay of the method's kind. */
  readonly strict: boolean;
  /**
   * Set when an interceptor would turn a value into a promise: the call fails with it, and a
   * next() an interceptor calls later must not run the method the caller was refused.
   */
  refusal: TypeError | undefined;
  /** What the method itself returned, when it ran within this call. */
  answered: { returned: unknown } | undefined;
}

/** What next() gave while an interceptor ran, before it returned. */
type Inner = { returned: unknown } | { threw: unknown };

function intercepted(
  target: object,
  method: string,
  where: string,
  original: (...args: unknown[]) => unknown,
  interceptors: readonly MethodInterceptor[],
): (...args: unknown[]) => unknown {
  const chain: Chain = {
    target,
    method,
    where,
    original,
    interceptors,
    isAsync: declaredAsync(original),
  };
  const wrapper = (...args: unknown[]): unknown => called(chain, args);
  const awaited = (...args: unknown[]): unknown => step(chain, newCall(chain, args, false), 0);
  for (const form of [wrapper, awaited]) {
    // What a route's binders are checked against, and what a stack trace shows.
    Object.defineProperty(form, "length", { value: original.length });
    Object.defineProperty(form, "name", { value: original.name });
  }
  WRAPPED.set(wrapper, original);
  setAwaitedForm(wrapper, awaited);
  return wrapper;
}

function newCall(chain: Chain, args: unknown[], strict: boolean): Call {
  const invocation: MethodInvocation = { target: chain.target, method: chain.method, args };
  return { invocation, strict, refusal: undefined, answered: undefined };
}

// A caller's call: its answer stays of the method's kind.
function called(chain: Chain, args: unknown[]): unknown {
  const call = newCall(chain, args, true);
  if (chain.isAsync) {
    try {
      const result = step(chain, call, 0);
      // A promise of a kind of its own stays what it is (`@Async`'s knows whether it is
      // awaited); anything else becomes a promise.
      return result instanceof Promise ? result : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  let result: unknown;
  try {
    result = step(chain, call, 0);
  } catch (error) {
    throw call.refusal ?? error;
  }
  if (call.refusal !== undefined) {
    // Its outcome no longer reaches anyone: the caller gets the refusal.
    // A native promise only: adopting any other thenable calls its `then`, which may run it (a
    // query builder), and only a native one reports an unhandled rejection.
    if (result instanceof Promise) result.catch(() => {});
    throw call.refusal;
  }
  // The method answered with a promise: so does the call, whatever an interceptor made of it.
  const answered = call.answered;
  if (answered !== undefined && isThenable(answered.returned) && !isThenable(result)) {
    return Promise.resolve(result);
  }
  return result;
}

// Runs the interceptors from `i` on, then the method.
function step(chain: Chain, call: Call, i: number): unknown {
  if (i === chain.interceptors.length) {
    if (call.refusal !== undefined) throw call.refusal;
    const returned = chain.original.apply(chain.target, call.invocation.args);
    call.answered ??= { returned };
    return returned;
  }
  const interceptor = chain.interceptors[i];
  let inner: Inner | undefined;
  let running = true;
  let result: unknown;
  try {
    result = interceptor.intercept(call.invocation, () => {
      if (!running || inner !== undefined) return step(chain, call, i + 1);
      try {
        const returned = step(chain, call, i + 1);
        inner = { returned };
        return returned;
      } catch (error) {
        inner = { threw: error };
        throw error;
      }
    });
  } finally {
    running = false;
  }
  if (!call.strict || chain.isAsync || call.refusal !== undefined || !isThenable(result)) {
    return result;
  }
  call.refusal = refusalOf(chain.where, interceptor, inner, result);
  return result;
}

function named(interceptor: MethodInterceptor): string {
  return `${interceptor.constructor?.name || "(anonymous)"}.intercept()`;
}

// Why an interceptor that returned a promise (`result`) around a method not declared async may
// not: it would turn a value into a promise. `undefined` when it kept next()'s kind.
function refusalOf(
  where: string,
  interceptor: MethodInterceptor,
  inner: Inner | undefined,
  result: unknown,
): TypeError | undefined {
  if (inner === undefined) {
    return new TypeError(
      `${named(interceptor)} returned a promise before calling next() around ${where}, ` +
        "which is not declared async: Thaw cannot tell whether the method returns a promise, " +
        "and must not make one that returns a value return one; declare the method async if " +
        "it returns a promise, or let the interceptor call next() before it awaits",
    );
  }
  if ("threw" in inner || !isThenable(inner.returned)) {
    return kindRefusal(where, interceptor, inner);
  }
  if (!(inner.returned instanceof Promise) && result instanceof Promise) {
    // A query builder is awaited to run it, but its type is not a promise's: the caller goes
    // on to call its methods.
    return new TypeError(
      `${named(interceptor)} returned a promise around ${where}, which returned a thenable ` +
        "that is not a promise, as a query builder is: an interceptor must return what " +
        "next() returns in kind, or the caller gets a promise where the method's type says " +
        "that object; let the interceptor return next()'s value as it is when it is not a " +
        "promise",
    );
  }
  return undefined;
}

// An interceptor returned a promise where next() returned a value or threw.
function kindRefusal(where: string, interceptor: MethodInterceptor, inner: Inner): TypeError {
  const bean = where.charAt(0).toLowerCase() + where.slice(1, where.lastIndexOf("("));
  return new TypeError(
    `${named(interceptor)} returned a promise around ${where}, which ${
      given(inner)
    }, not a promise: an interceptor must return what next() returns in kind, or a ` +
      `caller's \`if (${bean}(...))\` holds whatever the answer; declare the method async ` +
      "if it is meant to return a promise, or let the interceptor return next()'s value " +
      "as it is when it is not a promise",
    "threw" in inner ? { cause: inner.threw } : undefined,
  );
}
