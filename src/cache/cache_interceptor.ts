import type { BeanProvider, ContextLogger } from "../context/class_record.ts";
import type { MethodInterceptor, MethodInvocation } from "../context/interceptors.ts";
import { messageOf } from "../context/message_of.ts";
import { deadline } from "../runtime/deadline.ts";
import { printable } from "../shown_value.ts";
import { type Cache, CacheManager } from "./cache_manager.ts";
import { argumentsKey, cacheKey } from "./cache_key.ts";
import { type CacheOperation, cacheOperations } from "./cache_operation.ts";
import { type CacheSettings, cacheSettings, DEFAULT_TIMEOUT_MS } from "./cache_settings.ts";
import { type CacheCounts, type CacheStatistics, cacheStatisticsOf } from "./cache_statistics.ts";

/** A call of a `@Cacheable` method whose result is not there yet: later callers share it. */
interface Load {
  readonly promise: Promise<LoadOutcome>;
  /** Evicted or replaced while it ran: its result is returned but not stored. */
  stale: boolean;
}

/** What a load gave, and whether a caller that joined it may have it too. */
interface LoadOutcome {
  readonly value: unknown;
  /**
   * `false` when `unless` refused the result for the arguments it was loaded with: it is that
   * caller's alone (what an admin is shown), as it would be had it come from no cache.
   */
  readonly shared: boolean;
}

/**
 * The interceptor behind `@Cacheable`, `@CachePut` and `@CacheEvict`: made by the container when
 * a bean uses them, over the app's `CacheManager` bean.
 */
export class CacheInterceptor implements MethodInterceptor {
  readonly #manager: CacheManager;
  readonly #settings: ReadonlyMap<string, CacheSettings>;
  readonly #logger: ContextLogger;
  readonly #caches = new Map<string, Cache>();
  readonly #loads = new Map<string, Map<string, Load>>();
  // The caches whose last call failed: a store that is down is logged once, not once a call.
  readonly #failing = new Set<string>();
  readonly #statistics: CacheStatistics;

  /**
   * @param manager where the entries are kept
   * @param settings each cache's `thaw.cache.<name>` settings
   * @param logger where a failing cache is reported
   */
  constructor(
    manager: CacheManager,
    settings: ReadonlyMap<string, CacheSettings> = new Map(),
    logger: ContextLogger = console,
  ) {
    this.#manager = manager;
    this.#settings = settings;
    this.#logger = logger;
    this.#statistics = cacheStatisticsOf(manager);
  }

  static "thaw.provided": BeanProvider = async (support) =>
    new CacheInterceptor(
      // Of several managers, the one Spring Boot's is named after, as an app's own replaces it.
      await support.resolve(
        CacheManager,
        "@Cacheable",
        "the caching interceptor",
        "cacheManager",
      ) as CacheManager,
      cacheSettings(support.config, support.locate),
      support.logger,
    );

  /** Applies the caching decorators of the method called. */
  async intercept(invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
    const { target, method, args } = invocation;
    const where = `${target.constructor?.name || "(anonymous)"}.${method}()`;
    // Conditions and keys from the arguments as they were passed, before the method may change
    // them; `unless` sees them so too.
    const passed = [...args];
    const operations = cacheOperations(target, method)
      .filter((operation) =>
        operation.condition === undefined ||
        verdict(operation, "condition", operation.condition(...passed), where)
      )
      .map((operation) => ({
        operation,
        key: operation.allEntries ? undefined : this.#key(operation, passed, where),
      }));
    for (const { operation, key } of operations) {
      if (operation.kind === "evict" && operation.beforeInvocation) {
        await this.#evict(operation, key, where);
      }
    }
    const main = operations.find(({ operation }) => operation.kind !== "evict");
    let result: unknown;
    if (main?.operation.kind === "cacheable") {
      result = await this.#cached(main.operation, mainKey(main), passed, next, where);
    } else {
      result = await next();
      // No result (a `Promise<void>` update) is nothing for unless to look at: its entry goes.
      if (
        main !== undefined &&
        (result === undefined || !refused(main.operation, result, passed, where))
      ) {
        await this.#put(main.operation, mainKey(main), result, where);
      }
    }
    for (const { operation, key } of operations) {
      if (operation.kind === "evict" && !operation.beforeInvocation) {
        await this.#evict(operation, key, where);
      }
    }
    return result;
  }

  #key(operation: CacheOperation, args: readonly unknown[], where: string): string {
    try {
      return operation.key === undefined ? argumentsKey(args) : cacheKey(operation.key(...args));
    } catch (error) {
      throw new TypeError(
        `${operation.decorator} on ${where}: no cache key: ${messageOf(error)}` +
          (operation.key === undefined ? "; give { key: (...args) => ... }" : ""),
        { cause: error },
      );
    }
  }

  async #cached(
    operation: CacheOperation,
    key: string,
    args: readonly unknown[],
    next: () => unknown,
    where: string,
  ): Promise<unknown> {
    const loads = this.#loadsOf(operation.name);
    const running = loads.get(key);
    if (running !== undefined) {
      const joined = await running.promise;
      if (joined.shared) return joined.value;
      // Refused for its own caller: this call loads its own, as if it had come first.
    }
    const load: { promise?: Promise<LoadOutcome>; stale: boolean } = { stale: false };
    load.promise = (async () => {
      const hit = await this.#attempt(
        operation,
        where,
        "read",
        (cache) => cache.get(key),
        (found) => found === undefined ? "misses" : "hits",
      );
      if (hit !== undefined) return { value: hit, shared: true };
      const value = await next();
      const shared = value === undefined || !refused(operation, value, args, where);
      if (value !== undefined && !load.stale && shared) {
        await this.#store(operation, key, value, where);
      }
      return { value, shared };
    })();
    loads.set(key, load as Load);
    try {
      return (await load.promise).value;
    } finally {
      if (loads.get(key) === load) loads.delete(key);
    }
  }

  async #put(operation: CacheOperation, key: string, value: unknown, where: string): Promise<void> {
    // A load of the same key that began before this update would store what it read before it.
    this.#forget(operation.name, key);
    if (value !== undefined) {
      await this.#store(operation, key, value, where);
    } else {
      // Nothing to store, but what was stored is no longer the value (a `Promise<void>` update).
      await this.#attempt(operation, where, "evict", (cache) => cache.evict(key), EVICTED);
    }
  }

  async #store(operation: CacheOperation, key: string, value: unknown, where: string) {
    const ttlMs = operation.ttlMs ?? this.#settings.get(operation.name)?.ttlMs;
    await this.#attempt(
      operation,
      where,
      "store",
      (cache) => cache.put(key, value, ttlMs),
      PUT,
    );
  }

  async #evict(operation: CacheOperation, key: string | undefined, where: string): Promise<void> {
    this.#forget(operation.name, key);
    await this.#attempt(
      operation,
      where,
      "evict",
      (cache) => key === undefined ? cache.clear() : cache.evict(key),
      EVICTED,
    );
  }

  /** Marks the loads of `key` (of every key, when none) stale, so that none stores its result. */
  #forget(name: string, key: string | undefined): void {
    const loads = this.#loadsOf(name);
    for (const [k, load] of loads) {
      if (key !== undefined && k !== key) continue;
      load.stale = true;
      loads.delete(k);
    }
  }

  #loadsOf(name: string): Map<string, Load> {
    let loads = this.#loads.get(name);
    if (loads === undefined) this.#loads.set(name, loads = new Map());
    return loads;
  }

  /**
   * Runs one call of the store; a failure is logged (once until the cache answers again) and
   * resolves to `undefined`: the method then runs, or its result goes unstored. A call that
   * answered is counted as `counted` says (a failed one is counted as nothing).
   */
  async #attempt<T>(
    operation: CacheOperation,
    where: string,
    what: string,
    call: (cache: Cache) => Promise<T>,
    counted: (result: T) => keyof CacheCounts,
  ): Promise<T | undefined> {
    const name = operation.name;
    const timeoutMs = this.#settings.get(name)?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    try {
      let cache = this.#caches.get(name);
      if (cache === undefined) this.#caches.set(name, cache = this.#manager.getCache(name));
      // A store that never answers must not hold the caller, nor every later caller of the key.
      const result = await deadline(
        call(cache),
        timeoutMs,
        () => new Error(`no answer within ${timeoutMs} ms`),
      );
      if (this.#failing.delete(name)) this.#log("info", `cache '${name}' answers again`);
      this.#statistics.count(name, counted(result));
      return result;
    } catch (error) {
      if (!this.#failing.has(name)) {
        this.#failing.add(name);
        this.#log(
          "warn",
          `${operation.decorator} on ${where}: the cache failed to ${what} (${
            printable(messageOf(error))
          }); its methods run uncached until it answers again`,
          error,
        );
      }
      return undefined;
    }
  }

  // A logger that fails must not fail the call the cache was there to spare.
  #log(level: "info" | "warn", message: string, error?: unknown): void {
    try {
      const logger = this.#logger;
      (logger[level] ?? logger.error).call(
        logger,
        message,
        ...(error === undefined ? [] : [error]),
      );
    } catch {
      // Nowhere left to report it.
    }
  }
}

// How an answered store and eviction count.
const PUT = (): keyof CacheCounts => "puts";
const EVICTED = (): keyof CacheCounts => "evictions";

/** Whether `unless` leaves a result unstored. */
function refused(
  operation: CacheOperation,
  result: unknown,
  args: readonly unknown[],
  where: string,
): boolean {
  return operation.unless !== undefined &&
    verdict(operation, "unless", operation.unless(result, ...args), where);
}

/**
 * What a `condition` or `unless` answered, which must be `true` or `false`: a text, a number or a
 * promise (an `async` function's answer, always truthy) would decide in the caller's stead.
 */
function verdict(
  operation: CacheOperation,
  option: "condition" | "unless",
  answer: unknown,
  where: string,
): boolean {
  if (typeof answer === "boolean") return answer;
  const kind = answer instanceof Promise
    ? "a promise (it must answer at once)"
    : answer === null
    ? "null"
    : typeof answer === "undefined"
    ? "undefined"
    : `${/^[aeiou]/.test(typeof answer) ? "an" : "a"} ${typeof answer}`;
  throw new TypeError(
    `${operation.decorator} on ${where}: ${option} must answer true or false, got ${kind}`,
  );
}

// The key of the @Cacheable or @CachePut of a call: theirs is never every entry (`allEntries` is
// @CacheEvict's alone, refused on the others as an unknown option).
function mainKey(
  main: { readonly operation: CacheOperation; readonly key: string | undefined },
): string {
  if (main.key === undefined) {
    throw new TypeError(`${main.operation.decorator}: allEntries is for @CacheEvict only`);
  }
  return main.key;
}
