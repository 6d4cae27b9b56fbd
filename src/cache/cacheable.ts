import { checkDecoratorCall } from "../context/decorator_call.ts";
import type { Class } from "../context/class.ts";
import { ownEntry } from "../context/class_record.ts";
import { interceptMethod } from "../context/interceptors.ts";
import { durationOption } from "../config/duration.ts";
import { nearestName } from "../config/thaw_settings.ts";
import { CacheInterceptor } from "./cache_interceptor.ts";
import { CACHE_CHECK } from "./cache_hooks.ts";
import { checkCacheNames } from "./cache_names.ts";
import { type CacheOperation, CACHING, type CachingEntry } from "./cache_operation.ts";
import { definedFields } from "../defined_fields.ts";

/**
 * What {@linkcode Cacheable}, {@linkcode CachePut} and {@linkcode CacheEvict} return: a decorator
 * for a bean's public method returning a promise (a cached method always does: the store may be
 * across the network).
 */
export type CacheDecorator = <This, A extends unknown[]>(
  value: (this: This, ...args: A) => Promise<unknown>,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: A) => Promise<unknown>>,
) => void;

/**
 * How an entry's key is made from the method's arguments: by default the arguments themselves,
 * deep-equal arguments giving one key (`find(7)` and `find(7)`, `search({ a, b })` and
 * `search({ b, a })`).
 */
export interface CacheKeyOption {
  /**
   * The key from the arguments (`(user) => user.id`): what it returns is compared deep-equal as
   * the arguments are.
   */
  // deno-lint-ignore no-explicit-any
  readonly key?: (...args: any[]) => unknown;
  /**
   * Whether the decorator applies to a call, from its arguments as they are passed (Spring's
   * `condition`, as a function): `false` runs the method as if it were not there (nothing read,
   * stored or evicted). It answers `true` or `false`, anything else fails the call.
   */
  // deno-lint-ignore no-explicit-any
  readonly condition?: (...args: any[]) => boolean;
}

/** The options of {@linkcode Cacheable} and {@linkcode CachePut}. */
export interface CacheableOptions extends CacheKeyOption {
  /**
   * How long an entry lives: milliseconds, or text (`"30s"`, `"5m"`, `"PT1H"`). Else the cache's
   * `thaw.cache.<name>.ttl`, else until it is evicted (or pushed out by newer entries).
   */
  readonly ttl?: number | string;
  /**
   * Whether a result the method resolved to is left unstored, from that result and then the
   * arguments (Spring's `unless`): `true` returns it to the caller without caching it. It
   * answers `true` or `false`, anything else fails the call.
   */
  // deno-lint-ignore no-explicit-any
  readonly unless?: (result: any, ...args: any[]) => boolean;
}

/** The options of {@linkcode CacheEvict}: one key (the arguments', by default), or every entry. */
export type CacheEvictOptions =
  | (CacheKeyOption & {
    /** Evicts before the method runs, so even when it throws; after it succeeds by default. */
    readonly beforeInvocation?: boolean;
    readonly allEntries?: false;
  })
  | {
    /** Empties the whole cache. */
    readonly allEntries: true;
    readonly beforeInvocation?: boolean;
    // deno-lint-ignore no-explicit-any
    readonly condition?: (...args: any[]) => boolean;
  };

/** The options each decorator takes: any other is refused, naming it. */
const OPTIONS: Readonly<Record<CacheOperation["kind"], readonly string[]>> = {
  cacheable: ["key", "ttl", "condition", "unless"],
  put: ["key", "ttl", "condition", "unless"],
  evict: ["key", "allEntries", "beforeInvocation", "condition"],
};

/**
 * Caches what an `async` method resolves to, under its arguments (or `key`), in the cache `name`
 * of the app's {@linkcode CacheManager}: a later call with deep-equal arguments gets the cached
 * value without running the method. A rejection is not cached, nor is `undefined`; concurrent
 * first calls run the method once and share its result. A cache that fails (a Redis that is down)
 * is logged and the method runs uncached: the caller never sees the store's failure.
 *
 * The entries are kept by the `CacheManager` bean: in memory unless the app registers another,
 * bounded by `thaw.cache.<name>.max-entries` (10,000 by default) and `max-bytes` (64 MiB). It is
 * an interceptor: calls of
 * beans the container built are cached, the bean's own calls (`this.find(id)`) included.
 *
 * @param name the cache
 * @param options `key`: the entry's key from the arguments; `condition`: whether a call is cached
 * at all; `ttl`: how long an entry lives (`"5m"`); `unless`: a result not to store
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#cacheable
 */
export function Cacheable(name: string, options: CacheableOptions = {}): CacheDecorator {
  return cacheDecorator("Cacheable", name, options, "cacheable");
}

/**
 * Runs the method every time and stores what it resolves to under its arguments (or `key`), for
 * the `@Cacheable` methods of the same cache to find: an update that returns the new value.
 *
 * @param name the cache
 * @param options `key`, `condition`, `ttl` and `unless`, as `@Cacheable`'s
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#cacheput
 */
export function CachePut(name: string, options: CacheableOptions = {}): CacheDecorator {
  return cacheDecorator("CachePut", name, options, "put");
}

/**
 * Removes the entry of the method's arguments (or `key`) from the cache `name` once the method
 * has succeeded, or every entry with `allEntries: true`; `beforeInvocation: true` removes it
 * before the method runs. A load of that key still running is not stored when it ends.
 *
 * @param name the cache
 * @param options `key` and `condition`, as `@Cacheable`'s; `allEntries`; `beforeInvocation`
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#cacheevict
 */
export function CacheEvict(name: string, options: CacheEvictOptions = {}): CacheDecorator {
  return cacheDecorator("CacheEvict", name, options, "evict");
}

function cacheDecorator(
  decorator: string,
  name: string,
  options: CacheableOptions | CacheEvictOptions,
  kind: CacheOperation["kind"],
): CacheDecorator {
  const operation = cacheOperation(decorator, name, options, kind);
  // TypeScript refuses them, but tsx and Bun do not type-check: a misspelt option would be ignored.
  const known = OPTIONS[kind];
  const unknown = Object.keys(options).find((option) => !known.includes(option));
  return (value, context) => {
    checkDecoratorCall(`@${decorator}`, value, context);
    const method = String(context.name);
    if (unknown !== undefined) {
      const nearest = nearestName(unknown, known);
      throw new TypeError(
        `${operation.decorator} on ${method}: unknown option ${unknown}; ${
          nearest !== undefined
            ? `did you mean ${nearest}?`
            : `the options of @${decorator} are ${known.join(", ")}`
        }`,
      );
    }
    if (context.kind !== "method" || context.static || context.private) {
      throw new TypeError(
        `${operation.decorator} on ${method}: it caches public instance methods only`,
      );
    }
    const entry = ownEntry<CachingEntry>(context.metadata, CACHING, () => new Map());
    const operations = entry.get(method) ?? [];
    if (kind !== "evict" && operations.some((o) => o.kind !== "evict")) {
      throw new TypeError(
        `${operation.decorator} on ${method}: a method is @Cacheable or @CachePut once`,
      );
    }
    // Decorators apply from the method outwards: the one written first comes first.
    entry.set(method, [operation, ...operations]);
    // What bootstrap runs once every bean is made: the app's caches against thaw.cache.
    (context.metadata as Record<symbol, unknown>)[CACHE_CHECK] = checkCacheNames;
    interceptMethod(
      context as ClassMethodDecoratorContext,
      [CacheInterceptor as Class],
      `${operation.decorator} makes it return a promise: declare it async (a cached call may ` +
        "wait on the store), or leave it uncached",
    );
  };
}

// The operation the options describe, checked: a wrong one throws a TypeError naming it.
function cacheOperation(
  decorator: string,
  name: string,
  options: CacheableOptions | CacheEvictOptions,
  kind: CacheOperation["kind"],
): CacheOperation {
  const fail = (why: string): never => {
    throw new TypeError(`@${decorator}(${JSON.stringify(String(name))}): ${why}`);
  };
  if (typeof name !== "string" || name === "") fail("name the cache: a non-empty text");
  if (typeof options !== "object" || options === null) fail("the options must be an object");
  const key = (options as CacheKeyOption).key;
  if (key !== undefined && typeof key !== "function") {
    fail("key must be a function of the method's arguments");
  }
  const condition = (options as CacheKeyOption).condition;
  if (condition !== undefined && typeof condition !== "function") {
    fail("condition must be a function of the method's arguments, answering true or false");
  }
  const unless = (options as CacheableOptions).unless;
  if (unless !== undefined && typeof unless !== "function" && kind !== "evict") {
    fail("unless must be a function of the result and the arguments, answering true or false");
  }
  const allEntries = (options as CacheEvictOptions).allEntries === true;
  if (allEntries && key !== undefined) fail("give key or allEntries, not both");
  const ttl = (options as CacheableOptions).ttl;
  // An entry's time to live waits on no timer: days and years are fine.
  const ttlMs = ttl === undefined ? undefined : durationOption(
    ttl,
    `@${decorator}(${JSON.stringify(String(name))}): ttl`,
    { min: 1, max: Number.MAX_SAFE_INTEGER },
  );
  const operation: CacheOperation = {
    kind,
    decorator: `@${decorator}(${JSON.stringify(name)})`,
    name,
    ...definedFields({ key, ttlMs, condition, unless: kind === "evict" ? undefined : unless }),
    allEntries,
    beforeInvocation: (options as CacheEvictOptions).beforeInvocation === true,
  };
  return operation;
}
