// What `bootstrap` knows of caching: where the caching decorators leave the check of the app's
// caches against `thaw.cache`, and what is left to check when no bean caches at all. The check
// itself, and the names it suggests, come with the decorators, so that an app without caching
// neither loads nor carries them.
import { type ContextLogger, featureOf } from "../context/class_record.ts";
import { configValue } from "../config/application_config.ts";
import { ConfigError } from "../config/config_error.ts";
import type { ConfigValues } from "../config/config_values.ts";
import { isMapping } from "../object_guards.ts";

/** What `bootstrap` gives the check of an app's caches, once every bean is made. */
export interface CachingApp {
  readonly beans: readonly { readonly instance: unknown }[];
  readonly config: ConfigValues;
  /** Where a key of the configuration is, for messages. */
  readonly locate: (key: string) => string;
  readonly logger: ContextLogger;
}

/** Checks the caches the app's beans use against its `thaw.cache` settings. */
export type CacheCheck = (app: CachingApp) => void;

/** Where the caching decorators leave their {@linkcode CacheCheck} in a class's metadata. */
export const CACHE_CHECK: unique symbol = Symbol("thaw.cache-check");

/**
 * Stops `bootstrap` with a `ConfigError` when `thaw.cache` names a cache no method uses (its
 * settings would do nothing: `prics` would leave `prices` without a ttl); the caching decorators'
 * check also warns of what it finds in the caches that are used.
 */
export function checkCaches(app: CachingApp): void {
  const check = featureOf<CacheCheck>(app.beans, CACHE_CHECK);
  if (check !== undefined) return check(app);
  // No method caches: any name is one no method uses, and there is none to suggest.
  const [name] = configuredCaches(app.config);
  if (name !== undefined) throw unusedCache(app.locate, name, "no method of the app uses a cache");
}

/** The cache names `thaw.cache` configures. */
export function configuredCaches(config: ConfigValues): string[] {
  const section = configValue(config, "thaw.cache");
  return isMapping(section) ? Object.keys(section) : [];
}

/**
 * The error of a configured cache `name` that none of the app's methods uses, `advice` saying
 * what the app's caches are or which was meant.
 */
export function unusedCache(
  locate: (key: string) => string,
  name: string,
  advice: string,
): ConfigError {
  return new ConfigError(
    `${locate(`thaw.cache.${name}`)}: no @Cacheable, @CachePut or @CacheEvict method uses a ` +
      `cache named ${name}; ${advice}`,
  );
}
