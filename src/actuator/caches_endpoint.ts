// The `caches` endpoint: the app's cache managers and the caches its methods use, in Spring
// Boot's shapes, and the evictions of one cache or of all.
import { endpointRoute } from "./endpoint_route.ts";
import { type Cache, CacheManager } from "../cache/cache_manager.ts";
import { cacheNamesOf } from "../cache/cache_names.ts";
import type { Mask } from "../config/secrets_mask.ts";
import type { CompiledRoute } from "../web/compile.ts";

/** One cache of a manager bean. */
export interface CacheEntry {
  /** The cache's name (`@Cacheable("users")`). */
  readonly name: string;
  /** The manager's bean name. */
  readonly cacheManager: string;
  /** What holds the entries: the cache's class, or the manager's for a plain object. */
  readonly target: string;
  readonly cache: Cache;
}

/** `GET {base}/caches`: Spring's `cacheManagers`, by bean name. */
export interface CachesReport {
  readonly cacheManagers: {
    [manager: string]: { caches: { [name: string]: { target: string } } };
  };
}

/**
 * The caches of the `CacheManager` beans among `beans`: for each, every cache the beans' caching
 * decorators use (a cache the app asks of a manager in its own code is not known here).
 */
export function cachesOf(beans: readonly { name: string; instance: unknown }[]): CacheEntry[] {
  const managers = new Map<CacheManager, string>();
  for (const { name, instance } of beans) {
    if (instance instanceof CacheManager && !managers.has(instance)) managers.set(instance, name);
  }
  if (managers.size === 0) return [];
  const names = cacheNamesOf(beans);
  return [...managers].flatMap(([manager, cacheManager]) =>
    names.map((name) => {
      const cache = manager.getCache(name);
      const own = Object.getPrototypeOf(cache)?.constructor;
      return {
        name,
        cacheManager,
        target: typeof own === "function" && own !== Object && own.name !== ""
          ? own.name
          : manager.constructor.name,
        cache,
      };
    })
  );
}

/** The body of `GET {base}/caches`. */
export function cachesReport(caches: readonly CacheEntry[]): CachesReport {
  const cacheManagers: CachesReport["cacheManagers"] = {};
  for (const { name, cacheManager, target } of caches) {
    (cacheManagers[cacheManager] ??= { caches: {} }).caches[name] = { target };
  }
  return { cacheManagers };
}

const NO_STORE = { "content-type": "application/json", "cache-control": "no-store" };

function answer(status: number, body?: object): Response {
  return body === undefined
    ? new Response(null, { status, headers: { "cache-control": "no-store" } })
    : new Response(JSON.stringify(body), { status, headers: NO_STORE });
}

/**
 * `GET` and `DELETE` of `{base}/caches` and `{base}/caches/{cache}`, as Spring serves them: a
 * `cacheManager` query parameter narrows to one manager; an unknown cache is a 404, a name two
 * managers hold (without the parameter) a 400; an eviction answers 204, or 503 with why (masked)
 * when the store failed.
 */
export function cachesRoutes(
  base: string,
  beans: () => readonly { name: string; instance: unknown }[],
  mask: Mask,
): CompiledRoute[] {
  const chosen = (manager: string | undefined) =>
    cachesOf(beans()).filter((c) => manager === undefined || c.cacheManager === manager);
  // The one cache of a name, or the answer that there is none, or several.
  const one = (name: string, manager: string | undefined): CacheEntry | Response => {
    const found = chosen(manager).filter((c) => c.name === name);
    if (found.length === 1) return found[0];
    return found.length === 0 ? answer(404) : answer(400, {
      error: `cache '${name}' is held by the cache managers ${
        found.map((c) => c.cacheManager).join(", ")
      }: name one with ?cacheManager=`,
    });
  };
  const evict = async (caches: readonly CacheEntry[]): Promise<Response> => {
    try {
      await Promise.all(caches.map((c) => c.cache.clear()));
      return answer(204);
    } catch (error) {
      return answer(503, { error: mask(String((error as Error)?.message ?? error)) });
    }
  };
  return [
    endpointRoute(
      "GET",
      `${base}/caches`,
      (c) => answer(200, cachesReport(chosen(c.req.query("cacheManager")))),
    ),
    endpointRoute("GET", `${base}/caches/{cache}`, (c) => {
      const found = one(c.req.param("cache") ?? "", c.req.query("cacheManager"));
      if (found instanceof Response) return found;
      return answer(200, {
        target: found.target,
        name: found.name,
        cacheManager: found.cacheManager,
      });
    }),
    endpointRoute("DELETE", `${base}/caches`, (c) => evict(chosen(c.req.query("cacheManager")))),
    endpointRoute("DELETE", `${base}/caches/{cache}`, (c) => {
      const found = one(c.req.param("cache") ?? "", c.req.query("cacheManager"));
      return found instanceof Response ? found : evict([found]);
    }),
  ];
}
