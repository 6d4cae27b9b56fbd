// The check of the caches an app's methods use, run once at `bootstrap` when every bean is made:
// a `thaw.cache` name no method uses is refused, and `@Cacheable` methods whose keys collide are
// warned of. Brought by the caching decorators.
import { nearestName } from "../config/thaw_settings.ts";
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
  const byCache = usedCaches(app.beans);
  const used = [...byCache.keys()];
  for (const name of configuredCaches(app.config)) {
    if (!byCache.has(name)) throw unusedCache(app.locate, name, unusedAdvice(name, used));
  }
  for (const [name, operations] of byCache) {
    // Two lookups keyed by their arguments alone: find(7) and posts(7) share an entry, and so do
    // the find(7) of two beans (two subclasses of one repository, two @Bean methods' objects of
    // one class). A @CachePut or @CacheEvict sharing them is how an update reaches a lookup.
    const lookups = operations.filter(({ operation }) =>
      operation.kind === "cacheable" && operation.key === undefined
    );
    if (lookups.length < 2) continue;
    const wheres = [...new Set(lookups.map(({ where }) => where))];
    const methods = new Set(wheres.map((where) => where.slice(where.lastIndexOf(".") + 1, -2)));
    const who = wheres.length === 1
      ? `${wheres[0]} of ${lookups.length} beans is @Cacheable with the default key (its arguments)`
      : `${wheres.slice(0, -1).join(", ")} and ${wheres.at(-1)} are @Cacheable with the default ` +
        "key (their arguments)";
    // A key is made of the arguments: it can set methods of different names apart, not beans.
    const [method] = methods;
    const fix = methods.size === lookups.length
      ? `give them a key of their own (key: (...args) => [${
        JSON.stringify(method)
      }, ...args]) or a cache each`
      : "a key is made of the arguments alone and cannot tell them apart: give each class or " +
        "bean a cache of its own (declaring an inherited method again where it needs one)";
    warn(
      app,
      `cache '${name}': ${who}, so a call of one gets what the other stored for the same ` +
        `arguments; ${fix}`,
    );
  }
};

// Which cache was meant, or which there are.
function unusedAdvice(name: string, used: readonly string[]): string {
  const nearest = nearestName(name, used);
  return nearest !== undefined
    ? `did you mean ${nearest}?`
    : used.length === 0
    ? "no method of the app uses a cache"
    : `the caches of the app's methods are ${used.join(", ")}`;
}

// A logger that fails must not stop the app it only warns about.
function warn(app: CachingApp, message: string): void {
  try {
    (app.logger.warn ?? app.logger.error).call(app.logger, message);
  } catch {
    // Nowhere left to report it.
  }
}

/** The names of the caches the beans' caching decorators use, sorted. */
export function cacheNamesOf(beans: CachingApp["beans"]): string[] {
  return [...usedCaches(beans).keys()].sort();
}

/**
 * The caching decorators in force on the app's beans, by cache name: each once a bean (an object
 * two beans' names share, once), since two beans of one method share its entries.
 */
function usedCaches(beans: CachingApp["beans"]): Map<string, UsedOperation[]> {
  const byCache = new Map<string, UsedOperation[]>();
  const seen = new Set<unknown>();
  for (const { instance } of beans) {
    if (seen.has(instance)) continue;
    seen.add(instance);
    const classes = classesOf(instance);
    const methods = new Set(
      classes.flatMap((cls) => [...(entryOf<CachingEntry>(cls, CACHING)?.keys() ?? [])]),
    );
    for (const method of methods) {
      // The operations a call of the method applies: an override's own replace its parent's.
      for (const operation of cacheOperations(instance as object, method)) {
        const where = `${classes[0]?.name || "(anonymous)"}.${method}()`;
        const list = byCache.get(operation.name) ?? [];
        list.push({ operation, where });
        byCache.set(operation.name, list);
      }
    }
  }
  return byCache;
}
