import { isAbsolute, resolve } from "node:path";
import type { LoadedConfig } from "../config/application_config.ts";
import { ConfigError } from "../config/config_error.ts";
import {
  booleanSetting,
  connectionEntries,
  type ConnectionEntry,
  type EntryRules,
  optionalString,
  shown,
} from "../config/connection_settings.ts";
import type { Placeholders } from "../config/connection_settings.ts";
import type { OptionalPackages } from "../runtime/optional_module.ts";
import { type PoolSettings, poolSettingsFrom, SQLITE_NO_TIMEOUT } from "./pool_settings.ts";
import { sqliteMisfit } from "./sqlite_settings.ts";
import { DIALECTS } from "./dialects.ts";
import type { DatabaseKind } from "./sql_dialect.ts";
import { definedFields } from "../defined_fields.ts";

export type { DatabaseKind };

/** Where the records go unless `migrations.table` says otherwise. */
export const DEFAULT_RECORDS_TABLE = "framework_migrations";

/** One SQL datasource, validated. */
export interface Datasource {
  readonly name: string;
  readonly kind: DatabaseKind;
  /**
   * SQLite: the database file (absolute) or `:memory:`. Others: the URL without credentials
   * (userinfo, `?user=`, `?password=`); printed through `maskUrl` all the same, for any other
   * secret parameter a driver takes.
   */
  readonly location: string;
  readonly username?: string;
  readonly password?: string;
  readonly migrationsEnabled: boolean;
  /** `migrations.strict_order` (see `ConnectionEntry`). */
  readonly strictOrder: boolean;
  /** `migrations.flyway_compatible` (see `ConnectionEntry`). */
  readonly validateOnMigrate: boolean;
  /** `migrations.placeholders` (see `ConnectionEntry`); absent: files are taken as written. */
  readonly placeholders?: Placeholders;
  readonly table: string;
  /** Where its `url` is configured, for messages: `file:line: key`. */
  readonly source?: string;
  /** `primary: true`: the client data access injects by class among several. */
  readonly primary?: boolean;
  /** `pool`: how data access pools its connections (the runner opens one of its own). */
  readonly pool?: PoolSettings;
}

const RULES: EntryRules = {
  keys: new Set(["name", "url", "username", "password", "migrations", "primary", "pool"]),
  migrationKeys: new Set(["enabled", "table", "strict_order", "flyway_compatible", "placeholders"]),
  kind: "datasource",
  needs: "name and url",
};
// Interpolated into SQL: a plain identifier, within every database's length limit.
const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const SCHEMES: Record<string, DatabaseKind> = {
  "postgres:": "postgres",
  "postgresql:": "postgres",
  "mysql:": "mysql",
  "mariadb:": "mysql",
};

/**
 * Reads the `datasource` list of a loaded configuration. SQLite paths are relative to the
 * working directory, as every SQLite tool takes them. Credentials may sit in the URL (userinfo,
 * `?user=`, `?password=`) or in `username`/`password` (which win); the password never appears in
 * a message.
 */
export function datasources(config: LoadedConfig, key: string, cwd: string): Datasource[] {
  const entries = connectionEntries(config, key, RULES);
  const list = entries.map((entry) => datasourceOf(entry, cwd));
  // Once the URL has said which database it is: `pool.sqlite` fits SQLite alone.
  list.forEach((d, i) => {
    const misfit = sqliteMisfit(d.kind, d.location, d.pool?.sqlite);
    if (misfit !== undefined) {
      throw new ConfigError(`${entries[i].at(misfit.key)} ${misfit.message}`);
    }
  });
  refuseSharedRecords(list);
  return list;
}

// What a datasource has whatever its database: all but its kind and location.
type DatasourceBase = Omit<Datasource, "kind" | "location">;

function datasourceOf(entry: ConnectionEntry, cwd: string): Datasource {
  const { name, values, migrations, at } = entry;
  const table = migrations.table ?? DEFAULT_RECORDS_TABLE;
  if (typeof table !== "string" || !TABLE.test(table)) {
    throw new ConfigError(
      `${at("migrations.table")} must be a table name (letters, digits, _; up to 63), got ${
        shown(table)
      }`,
    );
  }
  const base = {
    name,
    migrationsEnabled: entry.migrationsEnabled,
    strictOrder: entry.strictOrder,
    validateOnMigrate: entry.validateOnMigrate,
    ...definedFields({ placeholders: entry.placeholders }),
    table,
    source: at("url"),
    ...(booleanSetting(values.primary, false, at("primary")) ? { primary: true } : {}),
    ...(values.pool === undefined ? {} : { pool: poolSettingsFrom(values.pool, at) }),
    ...credentials(optionalString(values.username, at("username")), "username"),
    ...credentials(optionalString(values.password, at("password"), true), "password"),
  };
  const url = values.url;
  if (typeof url !== "string" || url === "") {
    throw new ConfigError(
      `${at("url")} is missing: give sqlite:<file>, postgres://host/db or mysql://host/db`,
    );
  }
  return url.startsWith("sqlite:")
    ? sqliteDatasource(base, url, at, cwd)
    : serverDatasource(base, url, at);
}

function sqliteDatasource(
  base: DatasourceBase,
  url: string,
  at: ConnectionEntry["at"],
  cwd: string,
): Datasource {
  const path = url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
  if (path === "" || path.includes("\0")) {
    throw new ConfigError(`${at("url")} must name a file: sqlite:./data/app.db`);
  }
  const location = path === ":memory:" ? path : isAbsolute(path) ? path : resolve(cwd, path);
  if (base.pool?.queryTimeoutMs !== undefined) {
    throw new ConfigError(`${at("pool.query-timeout")} ${SQLITE_NO_TIMEOUT}`);
  }
  return { ...base, kind: "sqlite", location };
}

function serverDatasource(
  base: DatasourceBase,
  url: string,
  at: ConnectionEntry["at"],
): Datasource {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  const kind = parsed && SCHEMES[parsed.protocol];
  if (parsed === undefined || kind === undefined || parsed.hostname === "") {
    throw new ConfigError(
      `${at("url")} must be sqlite:<file>, postgres://host/db or mysql://host/db, got ${
        shown(url)
      }`,
    );
  }
  if (kind === "mysql" && parsed.pathname.length <= 1) {
    throw new ConfigError(`${at("url")} must name the database: mysql://host:3306/<database>`);
  }
  // `?user=` and `?password=` are credentials as much as a userinfo is (and win over it, as in
  // node-postgres). All leave the URL: it is printed ("cannot connect to <location>"), and
  // mysql2 would ignore them there anyway.
  const query = parsed.searchParams;
  const decoded = (part: string) => {
    try {
      return part ? decodeURIComponent(part) : undefined;
    } catch (error) {
      throw new ConfigError(
        `${at("url")}: the user name or password is not valid percent-encoding (write % as %25)`,
        { cause: error },
      );
    }
  };
  const fromUrl = {
    ...credentials(decoded(parsed.username), "username"),
    ...credentials(decoded(parsed.password), "password"),
    ...credentials(query.get("user") ?? undefined, "username"),
    ...credentials(query.get("password") ?? undefined, "password"),
  };
  parsed.username = "";
  parsed.password = "";
  // Only when present: deleting re-encodes the whole query.
  for (const k of ["user", "password"]) if (query.has(k)) query.delete(k);
  return { ...fromUrl, ...base, kind, location: parsed.href };
}

/**
 * Two enabled datasources keeping their records in one table of one database would each read the other's
 * records as their own: its files as missing (which `repair` drops, so they run again), a file of
 * the same path as applied. Each database is told apart by what names it in the URL (host, port,
 * database; the SQLite file), so two spellings of one server are not caught: one check, not proof.
 */
function refuseSharedRecords(list: readonly Datasource[]): void {
  const seen = new Map<string, Datasource>();
  for (const d of list) {
    // A disabled entry runs nothing (an app may list one database twice); each `:memory:` is a
    // database of its own.
    if (!d.migrationsEnabled || d.location === ":memory:") continue;
    let database = d.location;
    const port = DIALECTS[d.kind].defaultPort;
    if (port !== undefined) {
      const u = new URL(d.location);
      database = `${u.hostname.toLowerCase()}:${u.port || port}${u.pathname}`;
    }
    const key = `${d.kind} ${database} ${d.table}`;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, d);
      continue;
    }
    const line = /:(\d+):/.exec(first.source ?? "")?.[1];
    throw new ConfigError(
      `${d.source}: datasource "${d.name}" keeps its records in ${d.table} of the same database ` +
        `as datasource "${first.name}"${line ? ` (line ${line})` : ""}; give one of them its own ` +
        `migrations.table`,
    );
  }
}

function credentials(
  value: string | undefined,
  key: "username" | "password",
): { username?: string } | { password?: string } {
  // An empty value (`${DB_PASSWORD:}` unset) means none.
  return value === undefined || value === "" ? {} : { [key]: value };
}

/**
 * What a datasource's driver needs installed (`packages`, called `what` in the message), named
 * after the datasource and where it is configured: what `importOptional` says when it is missing.
 */
export function driverPackages(
  datasource: Datasource,
  packages: string[],
  what: string,
): OptionalPackages {
  return {
    packages,
    what,
    neededBy:
      `${datasource.source ? `${datasource.source}: ` : ""}datasource "${datasource.name}" ` +
      `(kind ${datasource.kind})`,
    connection: datasource.name,
  };
}
