import type { BeanProvider, BeanSupport } from "../context/class_record.ts";
import { cacheSettings, DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES } from "./cache_settings.ts";
import { entrySize } from "./entry_size.ts";

/**
 * One named cache of a {@linkcode CacheManager}: keys are texts `@Cacheable` made from a method's
 * arguments. A failure (a store that is down, a timeout) may reject: the caching interceptor then
 * logs it and calls the method, uncached; it never fails the caller.
 *
 * @example A cache over a `Map`
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Cache } from "@thaw/thaw";
 *
 * const entries = new Map<string, unknown>();
 * const cache: Cache = {
 *   get: async (key) => entries.get(key),
 *   put: async (key, value) => void entries.set(key, value),
 *   evict: async (key) => void entries.delete(key),
 *   clear: async () => entries.clear(),
 * };
 * await cache.put("7", { id: 7 }, undefined);
 * assert.deepEqual(await cache.get("7"), { id: 7 });
 * ```
 */
export interface Cache {
  /** The value stored under `key`; `undefined` when there is none (or it expired). */
  get(key: string): Promise<unknown>;
  /**
   * Stores `value` (never `undefined`) under `key`, for `ttlMs` milliseconds when given (the
   * method's `ttl`, or the cache's `thaw.cache.<name>.ttl`), else until evicted.
   */
  put(key: string, value: unknown, ttlMs: number | undefined): Promise<void>;
  /** Removes the entry of `key`, if any. */
  evict(key: string): Promise<void>;
  /** Removes every entry of this cache (and no other's). */
  clear(): Promise<void>;
}

/**
 * Where `@Cacheable`, `@CachePut` and `@CacheEvict` keep their entries: a cache for each name.
 * Unless the app registers a bean of this class (a subclass, or a `@Bean` method's result), Thaw
 * makes one that keeps them in memory, bounded (`thaw.cache.<name>.max-entries`, 10,000 by
 * default, and `max-bytes`, 64 MiB). `RedisCacheManager` of `@thaw/thaw/cache-redis` shares them between machines; a store
 * of one's own (Workers KV) is a subclass.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#cachemanager
 */
export abstract class CacheManager {
  /** The cache of a name (`@Cacheable("users")`); the same one each time for a name. */
  abstract getCache(name: string): Cache;

  /** The in-memory one, when the app registers none. */
  static "thaw.provided": BeanProvider = (support) => memoryCacheManager(support);
}

/** What an in-memory cache holds now. */
export interface MemoryCacheUsage {
  readonly entries: number;
  /** Its entries' size, as the in-memory cache counts them against `max-bytes`. */
  readonly bytes: number;
}

// Each in-memory cache and how to read its usage.
const USAGE = new WeakMap<Cache, () => MemoryCacheUsage>();

/** What a cache of the in-memory manager holds now; `undefined` for a cache of another manager. */
export function memoryCacheUsage(cache: Cache): MemoryCacheUsage | undefined {
  return USAGE.get(cache)?.();
}

/**
 * The cache manager Thaw makes when the app registers none, over its `thaw.cache` settings: each
 * cache an LRU map of this process, bounded by its `max-entries` and its `max-bytes` (as
 * `entrySize` counts an entry: a cache fed request bodies is bounded by what they weigh, not only
 * by how many they are). Values are kept as they are (not copied): a caller that changes a cached
 * object changes what the next caller gets.
 */
async function memoryCacheManager(
  support: Pick<BeanSupport, "config" | "locate" | "logger">,
): Promise<CacheManager> {
  const settings = cacheSettings(support.config, support.locate);
  // Imported here: lru-cache runs code as it loads, which a bundler would keep in every app.
  const { LRUCache } = await import("lru-cache");
  class MemoryCacheManager extends CacheManager {
    readonly #caches = new Map<string, Cache>();

    getCache(name: string): Cache {
      let cache = this.#caches.get(name);
      if (cache === undefined) {
        const maxBytes = settings.get(name)?.maxBytes ?? DEFAULT_MAX_BYTES;
        // lru-cache holds no `undefined` nor `null`: each value is boxed.
        const entries = new LRUCache<string, { value: unknown }>({
          max: settings.get(name)?.maxEntries ?? DEFAULT_MAX_ENTRIES,
          maxSize: maxBytes,
        });
        let warned = false;
        cache = {
          get: (key) => Promise.resolve(entries.get(key)?.value),
          put: (key, value, ttlMs) => {
            const size = entrySize(key, value, maxBytes);
            if (size > maxBytes) {
              // Not kept, and what the key held is no longer the value.
              entries.delete(key);
              if (!warned) {
                warned = true;
                warn(
                  support.logger,
                  `cache '${name}': an entry of ${size} bytes or more is larger than its ` +
                    `thaw.cache.${name}.max-bytes (${maxBytes}) and is not kept; later ones are ` +
                    "not logged",
                );
              }
              return Promise.resolve();
            }
            entries.set(key, { value }, { size, ...(ttlMs === undefined ? {} : { ttl: ttlMs }) });
            return Promise.resolve();
          },
          evict: (key) => Promise.resolve(void entries.delete(key)),
          clear: () => Promise.resolve(entries.clear()),
        };
        USAGE.set(cache, () => ({ entries: entries.size, bytes: entries.calculatedSize }));
        this.#caches.set(name, cache);
      }
      return cache;
    }
  }
  return new MemoryCacheManager();
}

// A logger that fails must not fail the call the cache was there to spare.
function warn(logger: BeanSupport["logger"], message: string): void {
  try {
    (logger.warn ?? logger.error).call(logger, message);
  } catch {
    // Nowhere left to report it.
  }
}
