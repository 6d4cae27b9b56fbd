import type { BeanSupport } from "../context/class_record.ts";
import { type Cache, CacheManager } from "./cache_manager.ts";
import { cacheSettings, DEFAULT_MAX_ENTRIES } from "./cache_settings.ts";

/**
 * The cache manager Thaw makes when the app registers none, over its `thaw.cache` settings: each
 * cache an LRU map of this process, bounded by its `max-entries`. Values are kept as they are (not
 * copied): a caller that changes a cached object changes what the next caller gets.
 */
export async function memoryCacheManager(
  support: Pick<BeanSupport, "config" | "locate">,
): Promise<CacheManager> {
  const settings = cacheSettings(support.config, support.locate);
  // Imported here: lru-cache runs code as it loads, which a bundler would keep in every app.
  const { LRUCache } = await import("lru-cache");
  // Declared here, not at the top level: cache_manager.ts imports this module, so a class that
  // extends CacheManager as this module loads could find it not yet defined.
  class MemoryCacheManager extends CacheManager {
    readonly #caches = new Map<string, Cache>();

    getCache(name: string): Cache {
      let cache = this.#caches.get(name);
      if (cache === undefined) {
        // lru-cache holds no `undefined` nor `null`: each value is boxed.
        const entries = new LRUCache<string, { value: unknown }>({
          max: settings.get(name)?.maxEntries ?? DEFAULT_MAX_ENTRIES,
        });
        cache = {
          get: (key) => Promise.resolve(entries.get(key)?.value),
          put: (key, value, ttlMs) => {
            entries.set(key, { value }, ttlMs === undefined ? undefined : { ttl: ttlMs });
            return Promise.resolve();
          },
          evict: (key) => Promise.resolve(void entries.delete(key)),
          clear: () => Promise.resolve(entries.clear()),
        };
        this.#caches.set(name, cache);
      }
      return cache;
    }
  }
  return new MemoryCacheManager();
}
