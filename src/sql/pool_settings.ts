// The settings of a datasource's pool, as a plain object, and the `pool` keys of a `datasource:`
// entry that give them: pure, so that the migration runner checks them as it reads the entry.
import { ConfigError } from "../config/config_error.ts";
import { shownValue } from "../shown_value.ts";
import { durationKey } from "../config/duration.ts";
import { isMapping } from "../object_guards.ts";
import {
  resolveSqliteSettings,
  type SqliteSettings,
  sqliteSettingsFrom,
} from "./sqlite_settings.ts";

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
  /**
   * PostgreSQL, MySQL: how long a statement outside a transaction with a `timeout` waits for the
   * database's answer before the call fails and its connection is closed (default 60 000 ms).
   */
  readonly statementTimeoutMs?: number;
  /**
   * SQLite: the pragmas of each connection (`pool.sqlite.synchronous`, `journal-mode`,
   * `foreign-keys`); refused on another database.
   */
  readonly sqlite?: SqliteSettings;
  /**
   * PostgreSQL, MariaDB, MySQL: how long a statement may run before the database stops it (the
   * call fails with `timeout`, its connection kept); none by default. SQLite refuses it.
   */
  readonly queryTimeoutMs?: number;
}

/**
 * The connections of a pool the migration runner takes its connection from, in place of data
 * access's: a file's statements run in one query (MySQL's `multipleStatements`), values are read as
 * the runner always read them (no `supportBigNumbers`), and the session is named (PostgreSQL's
 * `application_name`), so that a runner waiting for the lock is told who holds it.
 */
export interface MigrationSession {
  readonly applicationName?: string;
}

/** Every setting, defaults applied; `queryTimeoutMs` stays unset where none is given. */
export type ResolvedPoolSettings =
  & Required<Omit<PoolSettings, "queryTimeoutMs">>
  & Pick<PoolSettings, "queryTimeoutMs">;

/** The defaults of {@linkcode PoolSettings}. */
export const POOL_DEFAULTS: ResolvedPoolSettings = {
  maxSize: 10,
  idleTimeoutMs: 30_000,
  acquireTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  busyTimeoutMs: 5_000,
  statementTimeoutMs: 60_000,
  sqlite: { foreignKeys: true },
};

// The settings that are numbers.
type NumberSetting = Exclude<keyof PoolSettings, "sqlite">;

/** Why SQLite takes no query timeout, after what asked for one. */
export const SQLITE_NO_TIMEOUT =
  "cannot be kept on SQLite: its statements run synchronously in the process, and no runtime " +
  "lets JavaScript interrupt one (a timer fires only after it ended). Bound the work itself " +
  "(LIMIT, an index), or leave the timeout to the server databases";

/** `settings` over the defaults; refuses a value that is not a positive number, naming it. */
export function resolvePoolSettings(
  datasource: string,
  settings: PoolSettings,
): ResolvedPoolSettings {
  const resolved: { -readonly [K in keyof ResolvedPoolSettings]: ResolvedPoolSettings[K] } = {
    ...POOL_DEFAULTS,
  };
  for (const key of SETTINGS) {
    if (key === "sqlite") {
      resolved.sqlite = resolveSqliteSettings(datasource, settings.sqlite);
      continue;
    }
    const value = settings[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new RangeError(
        `datasource "${datasource}": ${keyOf(key)} must be a positive number, got ${
          shownValue(value)
        }`,
      );
    }
    resolved[key] = key === "maxSize" ? Math.floor(value) : value;
  }
  if (resolved.maxSize < 1) {
    throw new RangeError(`datasource "${datasource}": ${keyOf("maxSize")} must be at least 1`);
  }
  return resolved;
}

// Every setting, the one without a default included.
const SETTINGS = [...Object.keys(POOL_DEFAULTS), "queryTimeoutMs"] as (keyof PoolSettings)[];

// The `pool` keys of a datasource entry, and the setting each gives: durations as Spring Boot
// writes them (`30s`, `500ms`; a bare number is milliseconds), the size a whole number.
const POOL_KEYS: Readonly<Record<string, keyof PoolSettings>> = {
  "max-size": "maxSize",
  "idle-timeout": "idleTimeoutMs",
  "acquire-timeout": "acquireTimeoutMs",
  "connect-timeout": "connectTimeoutMs",
  "busy-timeout": "busyTimeoutMs",
  "statement-timeout": "statementTimeoutMs",
  "query-timeout": "queryTimeoutMs",
  sqlite: "sqlite",
};

/** The key a user writes for `setting` (`pool.max-size`), as errors name it. */
function keyOf(setting: NumberSetting): string {
  const key = Object.keys(POOL_KEYS).find((k) => POOL_KEYS[k] === setting);
  return `pool.${key ?? setting}`;
}

/**
 * The settings a `pool` mapping gives (`max-size`, `idle-timeout`, `acquire-timeout`,
 * `connect-timeout`, `busy-timeout`, `statement-timeout`, `query-timeout`, and `sqlite`'s own); a
 * `ConfigError`
 * naming the key, where `at` places it, for an unknown key or a value out of range.
 */
export function poolSettingsFrom(raw: unknown, at: (key: string) => string): PoolSettings {
  if (raw === undefined || raw === null) return {};
  if (!isMapping(raw)) {
    throw new ConfigError(
      `${at("pool")} must be a mapping (${Object.keys(POOL_KEYS).join(", ")}), got ${
        shownValue(raw)
      }`,
    );
  }
  const settings: Record<string, number | SqliteSettings> = {};
  // `sqlite: { synchronous: NORMAL }`, or `sqlite.synchronous: NORMAL` as the key is named.
  let sqlite: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(raw)) {
    if (key.startsWith("sqlite.")) {
      sqlite ??= {};
      Object.defineProperty(sqlite, key.slice("sqlite.".length), { value, enumerable: true });
      continue;
    }
    const field = Object.hasOwn(POOL_KEYS, key) ? POOL_KEYS[key] : undefined;
    if (field === undefined) {
      throw new ConfigError(
        `${at(`pool.${key}`)} is not a pool setting (${Object.keys(POOL_KEYS).join(", ")})`,
      );
    }
    if (field === "sqlite") {
      if (isMapping(value)) sqlite = { ...value, ...sqlite };
      else settings.sqlite = sqliteSettingsFrom(value, at);
      continue;
    }
    if (field !== "maxSize") {
      settings[field] = durationKey(value, at(`pool.${key}`), { min: 1 });
      continue;
    }
    if (!Number.isSafeInteger(value) || (value as number) < 1) {
      throw new ConfigError(
        `${at(`pool.${key}`)} must be a whole number above 0, got ${shownValue(value)}`,
      );
    }
    settings[field] = value as number;
  }
  if (sqlite !== undefined) settings.sqlite = sqliteSettingsFrom(sqlite, at);
  return settings;
}
