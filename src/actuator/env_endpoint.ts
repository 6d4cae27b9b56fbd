// The `env` endpoint: the configuration's keys in Spring Boot 3's shape, grouped by the source
// each value comes from (the environment's overrides, each profile's file, the file), masked as
// `management.endpoint.env.show-values` says.
import { endpointRoute } from "./endpoint_route.ts";
import { keyOrigin, type LoadedConfig } from "../config/application_config.ts";
import { profileFileName } from "../config/config_layers.ts";
import type { CompiledRoute } from "../web/compile.ts";
import { isPlainObject } from "../object_guards.ts";
import { defineKey, type ShowValues, valueShower } from "./show_values.ts";

/** One key's value, and where it is written (`file:line`, `environment variable SERVER_PORT`). */
export interface EnvValue {
  readonly value: unknown;
  readonly origin?: string;
}

/** `GET {base}/env`: Spring's `EnvironmentDescriptor`. */
export interface EnvReport {
  readonly activeProfiles: readonly string[];
  readonly defaultProfiles: readonly string[];
  readonly propertySources: {
    readonly name: string;
    readonly properties: Record<string, EnvValue>;
  }[];
}

/** `GET {base}/env/{toMatch}`: Spring's `EnvironmentEntryDescriptor`. */
export interface EnvEntry {
  readonly property: { readonly source: string; readonly value: unknown };
  readonly activeProfiles: readonly string[];
  readonly defaultProfiles: readonly string[];
  readonly propertySources: { readonly name: string; readonly property?: EnvValue }[];
}

/** The source the environment's overrides are listed under. */
const ENVIRONMENT = "environment variables";
// Spring's fallback profile, whose file `loadConfig` reads when no profile is active.
const DEFAULT_PROFILES = ["default"];

/** One value of the configuration: its dotted key, the value, its source and origin. */
interface Property {
  readonly key: string;
  readonly value: unknown;
  readonly source: string;
  readonly origin: string | undefined;
}

/**
 * Where a key's value comes from: `environment variables` for an override, else the file that
 * set it (a profile's, or the configuration's own), with its line where known.
 */
export function keySource(
  config: LoadedConfig,
  key: string,
): { readonly source: string; readonly origin: string | undefined } {
  const { source, line } = keyOrigin(config, key);
  if (source.startsWith("environment variable ")) return { source: ENVIRONMENT, origin: source };
  return { source, origin: line === undefined ? undefined : `${source}:${line}` };
}

/**
 * Every value of a configuration by its dotted key (`app.hosts[0]`), as Spring flattens a YAML
 * file: a value that is no mapping or list, or an empty one.
 */
function properties(config: LoadedConfig): Property[] {
  const out: Property[] = [];
  const walk = (key: string, value: unknown): void => {
    const children = Array.isArray(value)
      ? value.map((v, i) => [`${key}[${i}]`, v] as const)
      : isPlainObject(value)
      ? Object.entries(value).map(([k, v]) => [key === "" ? k : `${key}.${k}`, v] as const)
      : undefined;
    if (children !== undefined && children.length > 0) {
      for (const [k, v] of children) walk(k, v);
    } else if (key !== "" && value !== undefined) {
      out.push({ key, value, ...keySource(config, key) });
    }
  };
  walk("", config.values);
  return out;
}

/**
 * The sources in Spring's order, the one that wins first: the environment's overrides, each
 * active profile's file (the last read first), the configuration's own file. A file read is
 * listed though it set nothing; the environment, and the default profile's file, where they did.
 */
function sourceNames(config: LoadedConfig, found: ReadonlySet<string>): string[] {
  const profiles = (config.profiles ?? []).map((p) => profileFileName(config.source, p)).reverse();
  const fallback = config.profiles?.length === 0
    ? [profileFileName(config.source, DEFAULT_PROFILES[0])].filter((f) => found.has(f))
    : [];
  const names = [
    ...(found.has(ENVIRONMENT) ? [ENVIRONMENT] : []),
    ...profiles,
    ...fallback,
  ];
  // Whatever else set a key (none does today), before the file.
  for (const name of found) if (!names.includes(name) && name !== config.source) names.push(name);
  return [...names, config.source];
}

/** The body of `GET {base}/env`: every key by its source, each value shown as `show` says. */
export function envReport(config: LoadedConfig, show: ShowValues): EnvReport {
  const shower = valueShower(config, show);
  const all = properties(config);
  const names = sourceNames(config, new Set(all.map((p) => p.source)));
  const sources = names.map((name) => ({ name, properties: {} as Record<string, EnvValue> }));
  const bySource = new Map(sources.map((s) => [s.name, s.properties]));
  for (const { key, value, source, origin } of all) {
    // sourceNames lists every source a key came from.
    const properties = bySource.get(source);
    if (properties === undefined) throw new Error(`env: ${source} is not among the sources`);
    defineKey(properties, shower.key(key), {
      value: shower.value(key, value),
      ...(origin === undefined ? {} : { origin: shower.key(origin) }),
    });
  }
  return {
    activeProfiles: [...(config.profiles ?? [])],
    defaultProfiles: DEFAULT_PROFILES,
    propertySources: sources.map(({ name, properties }) => ({
      name: shower.key(name),
      properties,
    })),
  };
}

/**
 * The body of `GET {base}/env/{toMatch}`: the value of one key (as `env` lists it), with the
 * source that holds it; `undefined` for a key no source holds.
 */
export function envEntry(
  config: LoadedConfig,
  show: ShowValues,
  name: string,
): EnvEntry | undefined {
  const all = properties(config);
  const found = all.find((p) => p.key === name);
  if (found === undefined) return undefined;
  const shower = valueShower(config, show);
  const value = shower.value(found.key, found.value);
  const names = sourceNames(config, new Set(all.map((p) => p.source)));
  return {
    property: { source: shower.key(found.source), value },
    activeProfiles: [...(config.profiles ?? [])],
    defaultProfiles: DEFAULT_PROFILES,
    propertySources: names.map((source) =>
      source === found.source
        ? {
          name: shower.key(source),
          property: {
            value,
            ...(found.origin === undefined ? {} : { origin: shower.key(found.origin) }),
          },
        }
        : { name: shower.key(source) }
    ),
  };
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

/** `GET {base}/env` and `GET {base}/env/{toMatch}` (404 for a key no source holds). */
export function envRoutes(base: string, config: LoadedConfig, show: ShowValues): CompiledRoute[] {
  // The configuration does not change once read: the whole answer is made once.
  const report = JSON.stringify(envReport(config, show));
  const route = (path: string, handler: CompiledRoute["handler"]) =>
    endpointRoute("GET", path, handler);
  return [
    route(`${base}/env`, () => new Response(report, { headers: JSON_HEADERS })),
    route(`${base}/env/{toMatch}`, (c) => {
      const entry = envEntry(config, show, c.req.param("toMatch") ?? "");
      return entry === undefined
        ? new Response(null, { status: 404, headers: { "cache-control": "no-store" } })
        : new Response(JSON.stringify(entry), { headers: JSON_HEADERS });
    }),
  ];
}
