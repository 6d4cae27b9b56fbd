// The settings of a datasource's pool, as a plain object: the configuration maps its keys to it.

/** How a datasource's pool sizes and bounds its connections. Every field has a default. */
export interface PoolSettings {
  /** The most connections open at once (default 10; SQLite `:memory:` always has one). */
  readonly maxSize?: number;
  /** How long an unused connection stays open (default 30 000 ms). */
  readonly idleTimeoutMs?: number;
  /** How long a call waits for a free connection before it fails (default 10 000 ms). */
  readonly acquireTimeoutMs?: number;
  /** How long opening one connection may take (default 10 000 ms). */
  readonly connectTimeoutMs?: number;
  /** SQLite: how long a statement waits for another connection's write lock (default 5 000 ms). */
  readonly busyTimeoutMs?: number;
}

/** Every setting, defaults applied. */
export type ResolvedPoolSettings = Required<PoolSettings>;

/** The defaults of {@linkcode PoolSettings}. */
export const POOL_DEFAULTS: ResolvedPoolSettings = {
  maxSize: 10,
  idleTimeoutMs: 30_000,
  acquireTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  busyTimeoutMs: 5_000,
};

/** `settings` over the defaults; refuses a value that is not a positive number, naming it. */
export function resolvePoolSettings(
  datasource: string,
  settings: PoolSettings,
): ResolvedPoolSettings {
  const resolved = { ...POOL_DEFAULTS };
  for (const key of Object.keys(POOL_DEFAULTS) as (keyof PoolSettings)[]) {
    const value = settings[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new RangeError(
        `datasource "${datasource}": pool setting ${key} must be a positive number, got ${
          String(value)
        }`,
      );
    }
    resolved[key] = key === "maxSize" ? Math.floor(value) : value;
  }
  if (resolved.maxSize < 1) {
    throw new RangeError(`datasource "${datasource}": pool setting maxSize must be at least 1`);
  }
  return resolved;
}
