import type { ThawSettings } from "../config/thaw_settings.ts";
import { checkOptionsObject } from "../options_object.ts";
import type { THAW_KEYS } from "../config/thaw_keys.ts";
import { ConfigError } from "../config/config_error.ts";
import { parsePathRegex } from "../web/path_regex.ts";
import { parsePathPattern } from "../web/path_pattern.ts";
import { asFlag } from "./openapi_feature.ts";
import { isMapping } from "../object_guards.ts";

/**
 * Options of the OpenAPI document and its docs page: `openApi(options)`, or the `app.openapi`
 * keys of `application.yml` (the option's keys win over the file's).
 */
export interface OpenApiOptions {
  /** Whether to serve anything; `true` by default. `false` turns off the file's keys. */
  readonly enabled?: boolean | undefined;
  /** Where the JSON document is served; `/openapi.json` by default; `false`: not served. */
  readonly path?: string | false | undefined;
  /** Where the Swagger UI page is served; `/docs` by default; `false`: not served. */
  readonly docs?: string | false | undefined;
  /** `info.title`; `OpenAPI definition` by default (springdoc's). */
  readonly title?: string | undefined;
  /** `info.version`; `v0` by default (springdoc's). */
  readonly version?: string | undefined;
  /** `info.description`, in CommonMark. */
  readonly description?: string | undefined;
}

/** The options resolved: what to serve, and what the document says of itself. */
export interface OpenApiSettings {
  /** Where to serve the document; `undefined`: nowhere. */
  readonly path: string | undefined;
  /** Where to serve the docs page; `undefined`: nowhere. */
  readonly docs: string | undefined;
  readonly title: string;
  readonly version: string;
  readonly description: string | undefined;
}

// The keys under `app.openapi` that the settings declare: a key added there must be read here.
type Subkey<K> = K extends `app.openapi.${infer S}` ? S : never;
const KEYS = [
  "enabled",
  "path",
  "docs",
  "title",
  "version",
  "description",
] as const satisfies readonly Subkey<keyof typeof THAW_KEYS>[];

/**
 * Refuses options that are not an object of the file's keys: `openApi({ titel })` must not serve
 * the default title without a word. `hint` is said after a value that is not an object.
 */
export function checkOptionKeys(options: unknown, caller: string, hint?: string): void {
  checkOptionsObject(options, caller, KEYS, { error: ConfigError, hint });
}

/**
 * Resolves the options of `openApi()` (or `openApiDocument(app, options)`: `caller`) over the
 * `app.openapi` keys; `true` is `openApi()` without options. Nothing in either: nothing served.
 * Throws a `ConfigError` naming the key and its line for a wrong type, an unknown key or a path
 * that is not a plain literal path.
 */
export function openApiSettings(
  settings: ThawSettings,
  option: OpenApiOptions | boolean | undefined,
  caller = "openApi()",
): OpenApiSettings {
  const raw = settings.get("app.openapi");
  const where = (key?: string) =>
    settings.where(key === undefined ? "app.openapi" : `app.openapi.${key}`);
  const file = fileOptions(raw, where);
  checkOptionValue(option, caller);
  const code: Record<string, unknown> = typeof option === "object" ? { ...option } : {};
  const pick: Picker = (key) =>
    code[key] !== undefined ? [code[key], `${caller} option ${key}`] : [file[key], where(key)];

  const [enabledValue, enabledAt] = pick("enabled");
  const enabledFlag = asFlag(enabledValue);
  if (enabledValue !== undefined && enabledFlag === undefined) {
    throw new ConfigError(`${enabledAt} must be true or false`);
  }
  const enabled = option === false
    ? false
    : enabledFlag ?? (option !== undefined || (raw !== undefined && raw !== null));

  const path = route(pick, "path", "/openapi.json");
  // No document, no page: unless the page's path is given too, which cannot work.
  const docsAsked = typeof pick("docs")[0] === "string" && asFlag(pick("docs")[0]) === undefined;
  const docs = path === undefined && !docsAsked ? undefined : route(pick, "docs", "/docs");
  if (enabled && docs !== undefined && path === undefined) {
    throw new ConfigError(
      `${pick("docs")[1]}: the docs page loads the document, so openapi.path cannot be false`,
    );
  }
  if (enabled && docs !== undefined && docs === path) {
    throw new ConfigError(`${pick("docs")[1]}: the docs page and the document need two paths`);
  }
  return {
    path: enabled ? path : undefined,
    docs: enabled ? docs : undefined,
    title: text(pick, "title") ?? "OpenAPI definition",
    version: text(pick, "version") ?? "v0",
    description: text(pick, "description"),
  };
}

// A key's value, the option's over the file's, and where it was given.
type Picker = (key: (typeof KEYS)[number]) => [unknown, string];

// `app.openapi: false` (or `${OPENAPI:true}` set to false) is `enabled: false`, so that options
// given in code do not turn back on what the file turned off.
function fileOptions(
  raw: unknown,
  where: (key?: string) => string,
): Record<string, unknown> {
  const fileFlag = asFlag(raw);
  if (fileFlag !== undefined) return { enabled: fileFlag };
  if (isMapping(raw)) {
    for (const key of Object.keys(raw)) {
      if (!(KEYS as readonly string[]).includes(key)) {
        throw new ConfigError(`${where(key)}: unknown key; the keys are ${KEYS.join(", ")}`);
      }
    }
    return raw;
  }
  if (raw !== undefined && raw !== null) {
    throw new ConfigError(`${where()} must be true, false or a map of ${KEYS.join(", ")}`);
  }
  return {};
}

// Checked, not trusted: `openapi: isProduction ? null : {...}` must not serve in production.
function checkOptionValue(option: unknown, caller: string): void {
  if (option !== undefined && typeof option !== "boolean") checkOptionKeys(option, caller);
}

function text(pick: Picker, key: "title" | "version" | "description"): string | undefined {
  const [value, at] = pick(key);
  if (value === undefined || value === null) return undefined;
  // YAML reads `version: 1.10` as the number 1.1: the text is gone before it gets here.
  if (typeof value === "number") {
    throw new ConfigError(`${at} must be text: quote it (${key}: "${value}")`);
  }
  if (typeof value !== "string") throw new ConfigError(`${at} must be text`);
  return value;
}

function route(pick: Picker, key: "path" | "docs", fallback: string): string | undefined {
  const [value, at] = pick(key);
  if (asFlag(value) === false) return undefined;
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "string") throw new ConfigError(`${at} must be a path or false`);
  // A trailing `/` is dropped, as in mappings.
  const path = value.length > 1 && value.endsWith("/") ? value.slice(0, -1) : value;
  let variables: readonly string[];
  try {
    variables = parsePathPattern(path, parsePathRegex).variables;
  } catch (error) {
    throw new ConfigError(`${at}: ${(error as Error).message}`);
  }
  if (variables.length > 0 || path === "/") {
    throw new ConfigError(`${at} must be a fixed path like /docs, got "${value}"`);
  }
  return path;
}
