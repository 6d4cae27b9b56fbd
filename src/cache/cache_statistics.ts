// What the caching interceptor counts of each cache of a manager as the app runs: reads that hit
// or missed, entries stored, entries evicted. Kept by the manager object, where the actuator finds
// them from the app's manager beans: the caching code carries none of the actuator's, and counting
// costs an addition, whatever reads it.

/** The counts of one cache since the app began. */
export interface CacheCounts {
  /** Reads that found an entry. */
  hits: number;
  /** Reads that found none (the method ran). */
  misses: number;
  /** Entries stored. */
  puts: number;
  /** Evictions the app asked for: a key, or a whole cache. */
  evictions: number;
}

const NONE: Readonly<CacheCounts> = { hits: 0, misses: 0, puts: 0, evictions: 0 };

/** The counts of the caches of one manager, by cache name. */
export class CacheStatistics {
  readonly #counts = new Map<string, CacheCounts>();
  readonly #watchers = new Set<() => void>();

  /** Counts one `what` of the cache `name`. */
  count(name: string, what: keyof CacheCounts): void {
    let counts = this.#counts.get(name);
    if (counts === undefined) {
      this.#counts.set(name, counts = { hits: 0, misses: 0, puts: 0, evictions: 0 });
    }
    counts[what]++;
    for (const watcher of this.#watchers) {
      try {
        watcher();
      } catch {
        // A meter that fails must not fail the call the cache was there to spare.
      }
    }
  }

  /** The counts of the cache `name` now: zeros before its first call. */
  of(name: string): Readonly<CacheCounts> {
    return this.#counts.get(name) ?? NONE;
  }

  /**
   * Runs `watcher` at each count, until the returned function is called: the meters check there
   * that they report to the meter providers registered now.
   */
  watch(watcher: () => void): () => void {
    this.#watchers.add(watcher);
    return () => void this.#watchers.delete(watcher);
  }
}

const BY_MANAGER = /* @__PURE__ */ new WeakMap<object, CacheStatistics>();

/** The counts of the caches of `manager` (a `CacheManager`), made by the first that asks. */
export function cacheStatisticsOf(manager: object): CacheStatistics {
  let statistics = BY_MANAGER.get(manager);
  if (statistics === undefined) BY_MANAGER.set(manager, statistics = new CacheStatistics());
  return statistics;
}
