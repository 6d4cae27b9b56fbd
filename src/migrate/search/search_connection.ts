import type { LoadedConfig } from "../../config/application_config.ts";
import { ConfigError } from "../../config/config_error.ts";
import type { EnvLookup } from "../../config/env.ts";
import {
  booleanSetting,
  connectionEntries,
  type EntryRules,
  optionalString,
  shown,
} from "../../config/connection_settings.ts";
import type { Placeholders } from "../../config/connection_settings.ts";
import { AUTH_KEYS, authSetting, type SearchAuth } from "./auth/search_auth.ts";
import { definedFields } from "../../defined_fields.ts";

/** Seconds a request may take, and a connection may take to open, unless configured. */
export const DEFAULT_TIMEOUT_SECONDS = 10;
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 5;
/** Seconds a migration lock lives without renewal, unless `migrations.lock_lease` says otherwise. */
export const DEFAULT_LOCK_LEASE_SECONDS = 120;
/** Where the runner keeps its records (and its lock) on the cluster, unless configured. */
export const DEFAULT_RECORDS_INDEX = "framework_migrations";

/** One search-cluster connection, validated. */
export interface SearchConnection {
  readonly name: string;
  /** Tried in this order; only a transport failure moves on to the next. */
  readonly hosts: readonly URL[];
  /** Basic authentication's user (also in {@linkcode SearchConnection.auth}). */
  readonly username?: string;
  readonly password?: string;
  /**
   * How requests authenticate: basic, `api_key`, `bearer_token` or `aws_sigv4`, at most one.
   * Absent: none, or basic from `username`/`password` for a connection made in code.
   */
  readonly auth?: SearchAuth;
  readonly sslVerification: boolean;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  /** A proxy URL, `false` to ignore `HTTP(S)_PROXY`, `undefined` for the runtime's default. */
  readonly proxy: URL | false | undefined;
  readonly migrationsEnabled: boolean;
  /** `migrations.strict_order` (see `ConnectionEntry`). */
  readonly strictOrder: boolean;
  /** `migrations.flyway_compatible` (see `ConnectionEntry`). */
  readonly validateOnMigrate: boolean;
  /** `migrations.placeholders` (see `ConnectionEntry`); absent: files are taken as written. */
  readonly placeholders?: Placeholders;
  readonly recordsIndex: string;
  /** How long the lock lives without renewal (`migrations.lock_lease`, seconds). */
  readonly lockLeaseMs: number;
  /** `primary: true`: the client `search()` of `@thaw/thaw/search` injects by class among several. */
  readonly primary?: boolean;
  /**
   * `max_retries`: how many times the app's client (`search()`) sends a request again on another
   * host after no answer or a 502/503/504; absent, the client's default. The runner keeps its own
   * rules (a write that may have been applied is never sent again).
   */
  readonly maxRetries?: number;
}

const RULES: EntryRules = {
  keys: new Set([
    "name",
    "hosts",
    "username",
    "password",
    ...AUTH_KEYS,
    "ssl_verification",
    "timeout",
    "connect_timeout",
    "proxy",
    "migrations",
    "primary",
    "max_retries",
  ]),
  migrationKeys: new Set([
    "enabled",
    "index",
    "lock_lease",
    "strict_order",
    "flyway_compatible",
    "placeholders",
  ]),
  kind: "connection",
  needs: "name and hosts",
};
// OpenSearch's own rule for index names, lowercase only.
const INDEX_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/**
 * Reads the list of connections under `key` (`search` or `opensearch`) of a loaded configuration.
 * Every error names the file, the line and the key, so it can be fixed without guessing. `env` is
 * where `aws_sigv4` credentials come from when the configuration gives none.
 */
export function searchConnections(
  config: LoadedConfig,
  key: string,
  env?: EnvLookup,
): SearchConnection[] {
  return connectionEntries(config, key, RULES).map(
    ({ name, values: e, migrations, at, ...rest }) => {
      const hostList = typeof e.hosts === "string" ? [e.hosts] : e.hosts;
      if (!Array.isArray(hostList) || hostList.length === 0) {
        throw new ConfigError(`${at("hosts")} is missing: give at least one URL`);
      }
      const hosts = hostList.map((h: unknown, j) => httpUrl(h, at(`hosts[${j}]`), true));
      const recordsIndex = migrations.index ?? DEFAULT_RECORDS_INDEX;
      if (typeof recordsIndex !== "string" || !INDEX_NAME.test(recordsIndex)) {
        throw new ConfigError(
          `${at("migrations.index")} must be a lowercase index name, got ${shown(recordsIndex)}`,
        );
      }
      let proxy: URL | false | undefined;
      if (e.proxy === false || e.proxy === "false") proxy = false;
      else if (e.proxy !== undefined && e.proxy !== null && e.proxy !== "") {
        proxy = httpUrl(e.proxy, at("proxy"), false);
      }
      const auth = authSetting(e, at, env);
      const username = optionalString(e.username, at("username"));
      const password = optionalString(e.password, at("password"), true);
      return {
        name,
        hosts,
        ...definedFields({ username, password, auth }),
        sslVerification: booleanSetting(e.ssl_verification, true, at("ssl_verification")),
        timeoutMs: seconds(e.timeout, DEFAULT_TIMEOUT_SECONDS, at("timeout")),
        connectTimeoutMs: seconds(
          e.connect_timeout,
          DEFAULT_CONNECT_TIMEOUT_SECONDS,
          at("connect_timeout"),
        ),
        proxy,
        migrationsEnabled: rest.migrationsEnabled,
        strictOrder: rest.strictOrder,
        validateOnMigrate: rest.validateOnMigrate,
        ...definedFields({ placeholders: rest.placeholders }),
        recordsIndex,
        lockLeaseMs: lockLease(migrations.lock_lease, at("migrations.lock_lease")),
        ...(booleanSetting(e.primary, false, at("primary")) ? { primary: true } : {}),
        ...(e.max_retries === undefined || e.max_retries === null
          ? {}
          : { maxRetries: retries(e.max_retries, at("max_retries")) }),
      };
    },
  );
}

function httpUrl(value: unknown, where: string, host: boolean): URL {
  let url: URL | undefined;
  if (typeof value === "string") {
    try {
      url = new URL(value);
    } catch {
      // reported below
    }
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ConfigError(`${where} must be an http:// or https:// URL, got ${shown(value)}`);
  }
  if (host && (url.username || url.password)) {
    throw new ConfigError(`${where}: put credentials in username and password, not in the URL`);
  }
  if (host && (url.search || url.hash)) {
    throw new ConfigError(`${where} must not carry a query or a fragment`);
  }
  return url;
}

// A lease under a second could not be renewed in time by a runner on a slow network.
function lockLease(value: unknown, where: string): number {
  if (value === undefined || value === null) return DEFAULT_LOCK_LEASE_SECONDS * 1000;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n) || n < 1 || n > 86_400) {
    throw new ConfigError(
      `${where} must be a number of seconds from 1 to 86400, got ${shown(value)}`,
    );
  }
  return Math.round(n * 1000);
}

function retries(value: unknown, where: string): number {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 100) {
    throw new ConfigError(`${where} must be a whole number from 0 to 100, got ${shown(value)}`);
  }
  return n;
}

// Values <= 0 fall back to the default, as in the original.
function seconds(value: unknown, fallback: number, where: string): number {
  if (value === undefined || value === null) return fallback * 1000;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n) || n > 86_400) {
    throw new ConfigError(`${where} must be a number of seconds, got ${shown(value)}`);
  }
  return n <= 0 ? fallback * 1000 : Math.round(n * 1000);
}

/**
 * How `connection` authenticates: its `auth`, or, for a connection made in code with only
 * `username`/`password`, basic authentication as it always was.
 */
export function connectionAuth(connection: SearchConnection): SearchAuth | undefined {
  if (connection.auth !== undefined) return connection.auth;
  if (connection.username === undefined) return undefined;
  return { method: "basic", username: connection.username, password: connection.password ?? "" };
}
