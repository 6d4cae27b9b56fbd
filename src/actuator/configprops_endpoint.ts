// The `configprops` endpoint: in Spring Boot 3's shape, Thaw's own settings by section (as read,
// defaults included) and the app's `@ConfigurationProperties` beans (as bound), masked as
// `management.endpoint.configprops.show-values` says.
import { endpointRoute } from "./endpoint_route.ts";
import { configValue } from "../config/application_config.ts";
import { keyDeclarations, THAW_SUBSECTIONS } from "../config/thaw_keys.ts";
import type { SettingKey, ThawSettings } from "../config/thaw_settings.ts";
import { propertiesPrefix } from "../context/configuration_properties.ts";
import type { CompiledRoute } from "../web/compile.ts";
import { isPlainObject } from "../object_guards.ts";
import { keySource } from "./env_endpoint.ts";
import { defineKey, type ShowValues, type ValueShower, valueShower } from "./show_values.ts";

/** One bean of settings: its prefix, its values, and what the configuration gave for them. */
export interface PropertiesBean {
  readonly prefix: string;
  /** The values as read (Thaw's with their defaults) or as the bean holds them. */
  readonly properties: Record<string, unknown>;
  /** The configuration's own values under the prefix: `{ value, origin }` for each. */
  readonly inputs: Record<string, unknown>;
}

/** `GET {base}/configprops`: Spring's `ConfigurationPropertiesDescriptor`, one context. */
export interface ConfigpropsReport {
  readonly contexts: {
    readonly application: { readonly beans: Record<string, PropertiesBean> };
  };
}

// Sets `value` at the path of `key` under `prefix`, making the mappings on the way.
function setPath(target: Record<string, unknown>, prefix: string, key: string, value: unknown) {
  const parts = key.slice(prefix.length + 1).split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(node[part])) defineKey(node, part, {});
    node = node[part] as Record<string, unknown>;
  }
  defineKey(node, parts[parts.length - 1], value);
}

// What the configuration gave under `key`, each value as `{ value, origin }`.
function inputsOf(
  settings: ThawSettings,
  shower: ValueShower,
  key: string,
  raw: unknown,
  depth = 0,
): unknown {
  if (depth <= 32 && Array.isArray(raw) && raw.length > 0) {
    return raw.map((v, i) => inputsOf(settings, shower, `${key}[${i}]`, v, depth + 1));
  }
  if (depth <= 32 && isPlainObject(raw) && Object.keys(raw).length > 0) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw)) {
      defineKey(out, shower.key(k), inputsOf(settings, shower, `${key}.${k}`, v, depth + 1));
    }
    return out;
  }
  const { origin } = keySource(settings.config, key);
  return {
    value: shower.value(key, raw),
    ...(origin === undefined ? {} : { origin: shower.key(origin) }),
  };
}

/** The section a key of Thaw's is listed under: `app.openapi`, else its first part. */
function sectionOf(key: string): string {
  return THAW_SUBSECTIONS.find((s) => key.startsWith(`${s}.`)) ?? key.slice(0, key.indexOf("."));
}

/**
 * The body of `GET {base}/configprops`: a bean for each section of Thaw's keys (`server`,
 * `management`, `logging`, `thaw`, `app`, `app.openapi`), by its prefix, then each
 * `@ConfigurationProperties` bean among `beans`, by its name.
 */
export function configpropsReport(
  settings: ThawSettings,
  beans: readonly { name: string; instance: unknown }[],
  show: ShowValues,
): ConfigpropsReport {
  const shower = valueShower(settings.config, show);
  const out: Record<string, PropertiesBean> = {};
  const declared = keyDeclarations().map(([key]) => key);
  for (const key of declared) {
    // A key holding others (`app.openapi`) is listed through them.
    if (declared.some((other) => other.startsWith(`${key}.`))) continue;
    const prefix = sectionOf(key);
    const bean = out[prefix] ??= { prefix, properties: {}, inputs: {} };
    // Every declared key is one the settings read (the actuator's declared on import).
    const value: unknown = settings.get(key as SettingKey);
    if (value !== undefined) setPath(bean.properties, prefix, key, shower.tree(key, value));
    const raw = configValue(settings.config.values, key);
    if (raw !== undefined && raw !== null) {
      setPath(bean.inputs, prefix, key, inputsOf(settings, shower, key, raw));
    }
  }
  for (const { name, instance } of beans) {
    const prefix = propertiesPrefix(instance);
    if (prefix === undefined) continue;
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(instance as object)) defineKey(fields, k, v);
    const section = configValue(settings.config.values, prefix);
    const inputs = isPlainObject(section) ? inputsOf(settings, shower, prefix, section) : {};
    // A bean named as one of Thaw's sections is told apart by its class, as Spring names such.
    const id = Object.hasOwn(out, name)
      ? `${prefix}-${(instance as object).constructor.name}`
      : name;
    defineKey(out, shower.key(id), {
      prefix: shower.key(prefix),
      properties: shower.tree(prefix, fields) as Record<string, unknown>,
      inputs: inputs as Record<string, unknown>,
    });
  }
  return { contexts: { application: { beans: out } } };
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

/**
 * `GET {base}/configprops`, and `GET {base}/configprops/{prefix}` for the beans whose prefix
 * starts with it (404 where none does), read as each request comes.
 */
export function configpropsRoutes(
  base: string,
  settings: ThawSettings,
  beans: () => readonly { name: string; instance: unknown }[],
  show: ShowValues,
): CompiledRoute[] {
  const route = (path: string, handler: CompiledRoute["handler"]) =>
    endpointRoute("GET", path, handler);
  return [
    route(
      `${base}/configprops`,
      () =>
        new Response(JSON.stringify(configpropsReport(settings, beans(), show)), {
          headers: JSON_HEADERS,
        }),
    ),
    route(`${base}/configprops/{prefix}`, (c) => {
      const given = c.req.param("prefix") ?? "";
      const all = configpropsReport(settings, beans(), show).contexts.application.beans;
      const chosen: Record<string, PropertiesBean> = {};
      for (const [id, bean] of Object.entries(all)) {
        if (bean.prefix.startsWith(given)) defineKey(chosen, id, bean);
      }
      return Object.keys(chosen).length === 0
        ? new Response(null, { status: 404, headers: { "cache-control": "no-store" } })
        : new Response(JSON.stringify({ contexts: { application: { beans: chosen } } }), {
          headers: JSON_HEADERS,
        });
    }),
  ];
}
