import { configValue } from "../config/application_config.ts";
import { shownValue } from "../shown_value.ts";
import type { ConfigValues } from "../config/config_values.ts";
import { ConfigError } from "../config/config_error.ts";
import { durationKey } from "../config/duration.ts";
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";
import { isMapping } from "../object_guards.ts";
import { definedFields } from "../defined_fields.ts";

/** What `thaw.cache.<name>` sets for one cache. */
export interface CacheSettings {
  /** `ttl`, in milliseconds: how long an entry lives when the method gives no `ttl`. */
  readonly ttlMs?: number;
  /** `max-entries`: the most entries the in-memory cache keeps, the least recently used going first. */
  readonly maxEntries?: number;
  /**
   * `max-bytes`: the most bytes the in-memory cache's entries may count for together (as
   * `entrySize` counts them), the least recently used going first.
   */
  readonly maxBytes?: number;
  /** `timeout`, in milliseconds: how long one call of the store may take. */
  readonly timeoutMs?: number;
}

/** How many entries an in-memory cache keeps when `max-entries` does not say. */
export const DEFAULT_MAX_ENTRIES = 10_000;

/** How many bytes an in-memory cache's entries count for at most when `max-bytes` does not say: 64 MiB. */
export const DEFAULT_MAX_BYTES = 67_108_864;

/** How long one call of a cache's store may take when `timeout` does not say. */
export const DEFAULT_TIMEOUT_MS = 2_000;

const KEYS = ["ttl", "max-entries", "max-bytes", "timeout"];

/**
 * The settings of each cache under `thaw.cache`, checked: a key other than `ttl`, `max-entries`,
 * `max-bytes` and `timeout`, a duration that is not one, or a count below 1 is a `ConfigError`
 * naming the key and where it was written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cacheSettings } from "./cache_settings.ts";
 *
 * const where = (key: string) => `application.yml: ${key}`;
 * const settings = cacheSettings({ thaw: { cache: { users: { ttl: "5m" } } } }, where);
 * assert.deepEqual(settings.get("users"), { ttlMs: 300_000 });
 * assert.throws(
 *   () => cacheSettings({ thaw: { cache: { users: { tll: "5m" } } } }, where),
 *   /application.yml: thaw.cache.users.tll: unknown key; the keys of a cache are ttl, max-entries/,
 * );
 * ```
 */
export function cacheSettings(
  config: ConfigValues,
  locate: (key: string) => string,
): ReadonlyMap<string, CacheSettings> {
  const settings = new Map<string, CacheSettings>();
  const section = configValue(config, "thaw.cache");
  if (section === undefined || section === null) return settings;
  if (!isMapping(section)) {
    throw new ConfigError(`${locate("thaw.cache")} must be a mapping of cache names`);
  }
  for (const [name, value] of Object.entries(section)) {
    const prefix = `thaw.cache.${name}`;
    if (value === null) continue;
    if (!isMapping(value)) {
      throw new ConfigError(`${locate(prefix)} must be a mapping of ${KEYS.join(", ")}`);
    }
    let ttlMs: number | undefined;
    let maxEntries: number | undefined;
    let maxBytes: number | undefined;
    let timeoutMs: number | undefined;
    for (const [key, raw] of Object.entries(value)) {
      const where = locate(`${prefix}.${key}`);
      if (key === "ttl") {
        // An entry's time to live waits on no timer: days and years are fine.
        ttlMs = duration(raw, where, Number.MAX_SAFE_INTEGER);
      } else if (key === "timeout") {
        timeoutMs = duration(raw, where, MAX_DURATION_MS);
      } else if (key === "max-entries") {
        maxEntries = count(raw, where);
      } else if (key === "max-bytes") {
        maxBytes = count(raw, where);
      } else {
        throw new ConfigError(`${where}: unknown key; the keys of a cache are ${KEYS.join(", ")}`);
      }
    }
    settings.set(name, {
      ...definedFields({ ttlMs, maxEntries, maxBytes, timeoutMs }),
    });
  }
  return settings;
}

function count(raw: unknown, where: string): number {
  const n = typeof raw === "string" && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) {
    throw new ConfigError(`${where} must be a whole number from 1, got ${shownValue(raw)}`);
  }
  return n;
}

function duration(raw: unknown, where: string, max: number): number {
  return durationKey(raw, where, { min: 1, max });
}
