// The caches' series as Spring (Micrometer) names them: `cache.gets` by `result` (`hit`, `miss`),
// `cache.puts` and `cache.evictions`, each by `cache` and `cache.manager` (the manager's bean name;
// Spring's `cacheManager`, which Prometheus's lint refuses as camelCase). Read from the counts the caching interceptor keeps, as a scrape comes: a cache call costs
// an addition. Only the caches the app's methods declare are reported, each from its first scrape
// at 0: a cache the app's code names from a request's data makes no series.
import type {
  Attributes,
  BatchObservableCallback,
  MeterProvider,
  Observable,
  ObservableCounter,
} from "@opentelemetry/api";
import { CacheManager } from "../cache/cache_manager.ts";
import { cacheNamesOf } from "../cache/cache_names.ts";
import { cacheStatisticsOf } from "../cache/cache_statistics.ts";
import { VERSION } from "../version.ts";
import { FollowedProviders } from "./followed_providers.ts";

interface CacheInstruments {
  readonly gets: ObservableCounter;
  readonly puts: ObservableCounter;
  readonly evictions: ObservableCounter;
}

/**
 * Reports the counts of the caches the `beans`' methods declare, for each `CacheManager` among
 * them, on the providers `providers` gives (followed as caches are called), until the returned
 * function is called.
 */
export function observeCaches(
  beans: readonly { readonly name: string; readonly instance: unknown }[],
  providers: () => readonly MeterProvider[],
): () => void {
  const managers = new Map<CacheManager, string>();
  for (const { name, instance } of beans) {
    if (instance instanceof CacheManager && !managers.has(instance)) managers.set(instance, name);
  }
  const names = cacheNamesOf(beans);
  if (managers.size === 0 || names.length === 0) return () => {};
  const read = (
    observe: (counter: ObservableCounter, value: number, attributes: Attributes) => void,
    { gets, puts, evictions }: CacheInstruments,
  ) => {
    for (const [manager, cacheManager] of managers) {
      const statistics = cacheStatisticsOf(manager);
      for (const cache of names) {
        const counts = statistics.of(cache);
        const attributes = { cache, "cache.manager": cacheManager };
        observe(gets, counts.hits, { ...attributes, result: "hit" });
        observe(gets, counts.misses, { ...attributes, result: "miss" });
        observe(puts, counts.puts, attributes);
        observe(evictions, counts.evictions, attributes);
      }
    }
  };
  const followed = new FollowedProviders(
    providers,
    (provider) => {
      const meter = provider.getMeter("thaw", VERSION);
      const instruments: CacheInstruments = {
        gets: meter.createObservableCounter("cache.gets", {
          unit: "{get}",
          description: "Reads of a cache by @Cacheable methods: hit, or miss.",
        }),
        puts: meter.createObservableCounter("cache.puts", {
          unit: "{put}",
          description: "Entries stored in a cache by @Cacheable and @CachePut methods.",
        }),
        evictions: meter.createObservableCounter("cache.evictions", {
          unit: "{eviction}",
          description: "Evictions from a cache by @CacheEvict methods (a key, or all).",
        }),
      };
      const observables: Observable[] = Object.values(instruments);
      const callback: BatchObservableCallback = (result) =>
        read(
          (counter, value, attributes) => result.observe(counter, value, attributes),
          instruments,
        );
      meter.addBatchObservableCallback(callback, observables);
      return () => meter.removeBatchObservableCallback(callback, observables);
    },
    (remove) => remove(),
  );
  followed.now();
  const follow = () => void followed.now();
  const unwatch = [...managers.keys()].map((manager) => cacheStatisticsOf(manager).watch(follow));
  return () => {
    unwatch.forEach((stop) => stop());
    followed.stop();
  };
}
