// The check of the caches an app's methods use, run once at `bootstrap` when every bean is made:
// a `thaw.cache` name no method uses is refused. Brought by the caching decorators.
import { classesOf, entryOf } from "../context/class_record.ts";
import { type CacheCheck, type CachingApp, configuredCaches, unusedCache } from "./cache_hooks.ts";
import {
  type CacheOperation,
  cacheOperations,
  CACHING,
  type CachingEntry,
} from "./cache_operation.ts";

/** One caching decorator in force on a bean's method. */
interface UsedOperation {
  readonly operation: CacheOperation;
  /** `Users.find()`, for messages. */
  readonly where: string;
}

/** The check the caching decorators leave for `bootstrap`. */
export const checkCacheNames: CacheCheck = (app) => {
  const byCache = usedCaches(app);
  const used = [...byCache.keys()];
  for (const name of configuredCaches(app.config)) {
    if (!byCache.has(name)) throw unusedCache(app.locate, name, used);
  }
};

/** The caching decorators in force on the app's beans, by cache name, each once. */
function usedCaches(app: CachingApp): Map<string, UsedOperation[]> {
  const byCache = new Map<string, UsedOperation[]>();
  const seen = new Set<CacheOperation>();
  for (const { instance } of app.beans) {
    const classes = classesOf(instance);
    const methods = new Set(
      classes.flatMap((cls) => [...(entryOf<CachingEntry>(cls, CACHING)?.keys() ?? [])]),
    );
    for (const method of methods) {
      // The operations a call of the method applies: an override's own replace its parent's.
      for (const operation of cacheOperations(instance as object, method)) {
        if (seen.has(operation)) continue;
        seen.add(operation);
        const where = `${classes[0]?.name || "(anonymous)"}.${method}()`;
        const list = byCache.get(operation.name) ?? [];
        list.push({ operation, where });
        byCache.set(operation.name, list);
      }
    }
  }
  return byCache;
}
