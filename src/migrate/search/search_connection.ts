import { configLocation, configValue, type LoadedConfig } from "../../config/application_config.ts";
import { ConfigError } from "../../config/config_error.ts";

/** Seconds a request may take, and a connection may take to open, unless configured. */
export const DEFAULT_TIMEOUT_SECONDS = 10;
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 5;
/** Where the runner keeps its records (and its lock) on the cluster, unless configured. */
export const DEFAULT_RECORDS_INDEX = "framework_migrations";

/** One search-cluster connection, validated. */
export interface SearchConnection {
  readonly name: string;
  /** Tried in this order; only a transport failure moves on to the next. */
  readonly hosts: readonly URL[];
  readonly username?: string;
  readonly password?: string;
  readonly sslVerification: boolean;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  /** A proxy URL, `false` to ignore `HTTP(S)_PROXY`, `undefined` for the runtime's default. */
  readonly proxy: URL | false | undefined;
  readonly migrationsEnabled: boolean;
  readonly recordsIndex: string;
}

const KEYS = new Set([
  "name",
  "hosts",
  "username",
  "password",
  "ssl_verification",
  "timeout",
  "connect_timeout",
  "proxy",
  "migrations",
]);
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
// OpenSearch's own rule for index names, lowercase only.
const INDEX_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/**
 * Reads the list of connections under `key` (`search` or `opensearch`) of a loaded configuration.
 * Every error names the file, the line and the key, so it can be fixed without guessing.
 */
export function searchConnections(config: LoadedConfig, key: string): SearchConnection[] {
  const list = configValue(config.values, key);
  const at = (k: string) => configLocation(config, k);
  if (!Array.isArray(list)) {
    throw new ConfigError(`${at(key)} must be a list of connections (- name: ..., hosts: [...])`);
  }
  const seen = new Set<string>();
  return list.map((entry: unknown, i) => {
    const base = `${key}[${i}]`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      throw new ConfigError(`${at(base)} must be a mapping with name and hosts`);
    }
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e)) {
      if (!KEYS.has(k)) {
        throw new ConfigError(`${at(`${base}.${k}`)} is not a connection setting`);
      }
    }
    const name = e.name;
    if (typeof name !== "string" || !NAME.test(name)) {
      throw new ConfigError(
        `${at(`${base}.name`)} must be a folder name (letters, digits, _ . -), got ${
          JSON.stringify(name)
        }`,
      );
    }
    if (seen.has(name)) throw new ConfigError(`${at(`${base}.name`)}: "${name}" is used twice`);
    seen.add(name);
    const hostList = typeof e.hosts === "string" ? [e.hosts] : e.hosts;
    if (!Array.isArray(hostList) || hostList.length === 0) {
      throw new ConfigError(`${at(`${base}.hosts`)} is missing: give at least one URL`);
    }
    const hosts = hostList.map((h: unknown, j) => httpUrl(h, at(`${base}.hosts[${j}]`), true));
    const username = optionalString(e.username, at(`${base}.username`));
    const password = optionalString(e.password, at(`${base}.password`), true);
    const migrations = e.migrations ?? {};
    if (typeof migrations !== "object" || migrations === null || Array.isArray(migrations)) {
      throw new ConfigError(`${at(`${base}.migrations`)} must be a mapping (enabled, index)`);
    }
    const m = migrations as Record<string, unknown>;
    for (const k of Object.keys(m)) {
      if (k !== "enabled" && k !== "index") {
        throw new ConfigError(`${at(`${base}.migrations.${k}`)} is not a migrations setting`);
      }
    }
    const recordsIndex = m.index ?? DEFAULT_RECORDS_INDEX;
    if (typeof recordsIndex !== "string" || !INDEX_NAME.test(recordsIndex)) {
      throw new ConfigError(
        `${at(`${base}.migrations.index`)} must be a lowercase index name, got ${
          JSON.stringify(recordsIndex)
        }`,
      );
    }
    let proxy: URL | false | undefined;
    if (e.proxy === false || e.proxy === "false") proxy = false;
    else if (e.proxy !== undefined && e.proxy !== null && e.proxy !== "") {
      proxy = httpUrl(e.proxy, at(`${base}.proxy`), false);
    }
    return {
      name,
      hosts,
      username,
      password,
      sslVerification: boolean(e.ssl_verification, true, at(`${base}.ssl_verification`)),
      timeoutMs: seconds(e.timeout, DEFAULT_TIMEOUT_SECONDS, at(`${base}.timeout`)),
      connectTimeoutMs: seconds(
        e.connect_timeout,
        DEFAULT_CONNECT_TIMEOUT_SECONDS,
        at(`${base}.connect_timeout`),
      ),
      proxy,
      migrationsEnabled: boolean(m.enabled, false, at(`${base}.migrations.enabled`)),
      recordsIndex,
    };
  });
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
    throw new ConfigError(`${where} must be an http:// or https:// URL, got ${safe(value)}`);
  }
  if (host && (url.username || url.password)) {
    throw new ConfigError(`${where}: put credentials in username and password, not in the URL`);
  }
  if (host && (url.search || url.hash)) {
    throw new ConfigError(`${where} must not carry a query or a fragment`);
  }
  return url;
}

// A URL may hold a password: show only its scheme and host.
function safe(value: unknown): string {
  if (typeof value !== "string") return JSON.stringify(value) ?? String(value);
  return JSON.stringify(value.replace(/\/\/[^@/]*@/, "//***@"));
}

function optionalString(value: unknown, where: string, secret = false): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && !secret) return String(value);
  if (typeof value !== "string") {
    throw new ConfigError(`${where} must be a string${secret ? "" : `, got ${safe(value)}`}`);
  }
  return value;
}

function boolean(value: unknown, fallback: boolean, where: string): boolean {
  if (value === undefined || value === null) return fallback;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  throw new ConfigError(`${where} must be true or false, got ${safe(value)}`);
}

// Values <= 0 fall back to the default, as in the original.
function seconds(value: unknown, fallback: number, where: string): number {
  if (value === undefined || value === null) return fallback * 1000;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n) || n > 86_400) {
    throw new ConfigError(`${where} must be a number of seconds, got ${safe(value)}`);
  }
  return n <= 0 ? fallback * 1000 : Math.round(n * 1000);
}
