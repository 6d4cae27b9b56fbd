import { ConfigError } from "./config_error.ts";
import { type EnvLookup, overrideEnv, runtimeEnv, substituteAll } from "./env.ts";
import { applyEnvOverrides, declaredKind } from "./env_overrides.ts";
import type { ConfigValues } from "./config_values.ts";

import { keyAndParents } from "./key_line.ts";
import { keyDeclarations, MOVED_KEYS } from "./thaw_keys.ts";
import { printable } from "../shown_value.ts";

/** A configuration file as `loadConfig` read it, with where each key came from. */
export interface LoadedConfig {
  /** The keys, after `${VAR}` substitution. */
  readonly values: ConfigValues;
  /** The file, for messages; `"config"` when given as an object. */
  readonly source: string;
  /** The file's directory: relative paths in it resolve against this. */
  readonly dir: string | undefined;
  /** The line of each key (dotted path, `list[0]` for items), when read from a file. */
  readonly lines?: ReadonlyMap<string, number>;
  /**
   * Where a key came from when not from `source`: a profile's file, or `environment variable
   * SERVER_PORT`.
   */
  readonly origins?: ReadonlyMap<string, string>;
  /** The active profiles, in the order their files were read over `source`. */
  readonly profiles?: readonly string[];
  /**
   * The environment variables a key's value took through `${VAR}` placeholders, by key: named
   * where the key is, so that a value the file does not show is traced to what set it.
   */
  readonly variables?: ReadonlyMap<string, readonly string[]>;
}

// What `loadConfig` returned carries this, so that `bootstrap` tells a loaded file from a
// configuration object that happens to have a `values` key. A registered symbol, not a WeakSet:
// a file loaded by another copy of the package (npm and JSR, two versions) is recognised too. Not
// enumerable, so a copy (`{ ...loaded }`, `structuredClone`) does not carry it.
const LOADED: unique symbol = Symbol.for("@thaw/thaw.loadedConfig") as never;

// The texts `${file:...}` placeholders read: secrets, whatever key holds them.
const fileSecretTexts = new WeakMap<LoadedConfig, readonly string[]>();

/**
 * Marks a configuration as read from a file by `loadConfig`; `secrets` are the texts its
 * `${file:path}` placeholders read, masked in every message.
 */
export function registerLoadedConfig(
  config: LoadedConfig,
  secrets: readonly string[] = [],
): LoadedConfig {
  // Deeply: one loaded file may configure several apps, and `app.config` is its `values`, so a
  // change made through one app would otherwise show in the others.
  deepFreeze(config.values);
  Object.defineProperty(config, LOADED, { value: true });
  fileSecretTexts.set(config, secrets);
  return Object.freeze(config);
}

/**
 * The texts the `${file:path}` placeholders of a configuration read, however short: a value that
 * holds one came from a secret file.
 */
export function fileSecrets(config: LoadedConfig): readonly string[] {
  return fileSecretTexts.get(config) ?? [];
}

// A key whose value is a secret: a word of its name (`db_password`, `accessToken`,
// `client-secret`, `smtppass`, `jwt`, `signature`, `bearer`, Cloud Foundry's `VCAP_SERVICES`),
// or `auth`, `pw` or `key` alone as a word of it. Spring's names and more: wide on purpose, a value
// masked for nothing garbles a message, one shown for nothing leaks; but not `author`,
// `oauth-enabled`.
/** Whether a key's value is a secret, by the words of its name. */
export function isSecretKey(key: string): boolean {
  const words = key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/);
  return /pass|pwd|secret|token|credential|apikey|accesskey|privatekey|signature|jwt|bearer|vcapservices/
    .test(words.join("")) ||
    words.some((word) => ["auth", "authorization", "pw", "key"].includes(word));
}

/**
 * What no message may show of a configuration: the values of keys named like secrets
 * (`password`, `token`, `api-key`...) and the texts of secret files.
 */
export function configSecrets(config: LoadedConfig): string[] {
  const out = [...fileSecrets(config)];
  // The resource server's `jwt` and `opaquetoken` sections hold where public keys and the
  // introspection endpoint are and which claims to read (an audience such as `users`): masked, each
  // would garble every message naming the same word. Their keys are judged by their own names
  // (`client-secret` is one).
  const jwt = configValue(config.values, "security.oauth2.resourceserver.jwt");
  const opaque = configValue(config.values, "security.oauth2.resourceserver.opaquetoken");
  const walk = (value: unknown, secret: boolean): void => {
    // Text only: a number or a flag under `token-ttl` or `auth-enabled` is no secret, and masking
    // every `3600` or `true` would garble the message.
    if (typeof value === "string") {
      if (secret && value !== "true" && value !== "false") out.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, secret);
    } else if (typeof value === "object" && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        walk(child, secret || (child !== jwt && child !== opaque && isSecretKey(key)));
      }
    }
  };
  walk(config.values, false);
  // Masking every `on` would garble the message and hide nothing worth the name.
  return out.filter((secret) => secret.length >= 3);
}

/** Freezes an object and everything it holds. */
export function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

/** Whether `value` is a configuration `loadConfig` read. */
export function isLoadedConfig(value: unknown): value is LoadedConfig {
  return typeof value === "object" && value !== null &&
    (value as { [LOADED]?: unknown })[LOADED] === true;
}

/**
 * What `scanComponents(config)` scanned, as a check of what `bootstrap` was given against it:
 * throws a `ConfigError` (`where` is the key's place) when `app.component-scan` now holds other
 * directories, or one of the classes found is not among `classes`.
 */
export interface ScanRecord {
  readonly check: (
    where: string,
    directories: readonly string[],
    classes: readonly unknown[],
  ) => void;
}

// The configurations whose `app.component-scan` was scanned, so that `bootstrap` neither ignores
// the key when nothing scanned it nor takes a scan of other directories, or a scan whose classes
// were left out, for it.
const scanned = new WeakMap<object, ScanRecord>();

/** Records that the `app.component-scan` directories of a configuration were scanned. */
export function markScanned(config: object, record: ScanRecord): void {
  scanned.set(config, record);
}

/** What was scanned for a configuration, if anything. */
export function scanRecord(config: unknown): ScanRecord | undefined {
  return typeof config === "object" && config !== null ? scanned.get(config) : undefined;
}

// The own keys of a loaded configuration: an object made of them alone is a copy of one.
const LOADED_KEYS = new Set([
  "values",
  "source",
  "dir",
  "lines",
  "origins",
  "profiles",
  "variables",
]);

/**
 * The configuration `bootstrap` was given: a file `loadConfig` read, or an object, whose `${VAR}`
 * placeholders are substituted here.
 */
export function resolveConfig(
  source: ConfigValues | LoadedConfig | undefined,
  env: EnvLookup = runtimeEnv(),
): LoadedConfig {
  if (source === undefined) return { values: {}, source: "config", dir: undefined };
  if (isLoadedConfig(source)) return source;
  if (typeof source === "string" || source instanceof URL) {
    // The one mistake an edge-sized entry point has to explain: reading a file lives elsewhere.
    const given = source instanceof URL
      ? `new URL(${JSON.stringify(source.href)})`
      : JSON.stringify(source);
    throw new ConfigError(
      `bootstrap({ config: ${given} }): a path is read by loadConfig, which lives in its own ` +
        `entry point so that an edge worker carries no file system and no YAML parser: ` +
        `import { loadConfig } from "@thaw/thaw/config" and pass ` +
        `config: await loadConfig(${given})`,
    );
  }
  if (typeof source !== "object" || source === null || Array.isArray(source)) {
    throw new ConfigError(
      `bootstrap({ config }) takes an object of keys or what loadConfig returns, got ${
        Array.isArray(source) ? "an array" : source === null ? "null" : typeof source
      }`,
    );
  }
  const keys = Object.keys(source);
  if (
    keys.length > 0 && keys.every((key) => LOADED_KEYS.has(key)) &&
    typeof source.values === "object" && typeof source.source === "string"
  ) {
    // `{ ...loaded, values: {...} }` reads as the keys `values`, `source`, ...: every setting
    // would be ignored without a word.
    throw new ConfigError(
      `bootstrap({ config }) got a copy of what loadConfig returned (${source.source}), which ` +
        `is no longer marked as read from a file and would be taken as the keys ` +
        `${keys.join(", ")}: pass what loadConfig returned itself, or its keys as an object ` +
        `(config: { ...loaded.values, ... })`,
    );
  }
  const variables = new Map<string, string[]>();
  const substituted = substituteAll(
    source,
    env,
    "config",
    "",
    undefined,
    undefined,
    variables,
  ) as ConfigValues;
  const { values, origins } = withEnvOverrides(substituted, new Map(), overrideEnv(env));
  // As a loaded file's: `app.config` cannot be changed behind the beans that read it.
  deepFreeze(values);
  const traced = placeholderVariables(variables, origins);
  return {
    values,
    source: "config",
    dir: undefined,
    ...(origins.size === 0 ? {} : { origins }),
    ...(traced.size === 0 ? {} : { variables: traced }),
  };
}

/**
 * The configuration with the environment's overrides (`SERVER_PORT` for `server.port`), each
 * overridden key's origin the variable, and its lines from the file forgotten.
 */
export function withEnvOverrides(
  values: ConfigValues,
  lines: Map<string, number>,
  lookup: EnvLookup,
  origins: Map<string, string> = new Map(),
): { values: ConfigValues; lines: Map<string, number>; origins: Map<string, string> } {
  // A key that holds declared keys (`app.openapi`) is reached through them, not replaced whole.
  const keys = keyDeclarations();
  const declared = [
    ...keys.map(([key, d]) =>
      [
        key,
        keys.some(([other]) => other.startsWith(`${key}.`)) ? undefined : declaredKind(d.type),
      ] as const
    ),
    // A key Thaw no longer reads, set from the environment, is refused as in a file: a deploy
    // that set it must hear that it does nothing now.
    ...Object.keys(MOVED_KEYS).map((key) => [key, "text"] as const),
  ];
  const applied = applyEnvOverrides(values, lookup, declared);
  envRead.set(applied.values, [keys.length, lookup]);
  if (applied.overrides.length > 0) {
    // One pass: a key goes when it, or a key above it, was overridden.
    const overridden = new Set(applied.overrides.map((o) => o.key));
    const under = (key: string) => keyAndParents(key).some((k) => overridden.has(k));
    for (const map of [lines, origins]) for (const k of map.keys()) if (under(k)) map.delete(k);
  }
  for (const { key, variable } of applied.overrides) {
    origins.set(key, `environment variable ${variable}`);
  }
  return { values: applied.values, lines, origins };
}

// What each configuration's overrides were read with: the keys declared then, and the lookup.
const envRead = new WeakMap<ConfigValues, readonly [number, EnvLookup]>();

/**
 * Throws where the environment sets a key declared after `config` read it (a feature's entry point
 * imported after `loadConfig`): its variable was not applied, and would be dropped without a word.
 * `only`: that key alone (what `listen`, imported after `bootstrap`, reads).
 */
export function checkLateKeys(config: LoadedConfig, only?: string): void {
  const read = envRead.get(config.values);
  if (read && read[0] < keyDeclarations().length) {
    for (const [key, origin] of withEnvOverrides(config.values, new Map(), read[1]).origins) {
      if (!config.origins?.has(key) && (only ?? key) === key) {
        throw new ConfigError(
          `${origin} sets ${key}, declared after ${config.source} was read: import its ` +
            `feature's entry point before loading the configuration`,
        );
      }
    }
  }
}

/**
 * Where a key is, for an error message: `file:line: key`, or `file: key` when the line is not
 * known (the key is missing: then its parent's line is used, if known).
 */
export function configLocation(config: LoadedConfig, key: string): string {
  const { source, line } = keyOrigin(config, key);
  const variables = config.variables?.get(key);
  const from = variables === undefined
    ? ""
    : ` (from environment variable${variables.length > 1 ? "s" : ""} ${variables.join(", ")})`;
  return printable(
    line === undefined ? `${source}: ${key}${from}` : `${source}:${line}: ${key}${from}`,
  );
}

/**
 * The placeholders' variables of the keys whose value is still the file's: a key an environment
 * override replaced (`origins` says so) is named by that override instead.
 */
export function placeholderVariables(
  variables: ReadonlyMap<string, readonly string[]>,
  origins: ReadonlyMap<string, string>,
): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  for (const [key, names] of variables) {
    if (!origins.get(key)?.startsWith("environment variable ")) out.set(key, names);
  }
  return out;
}

/**
 * Where a key's value came from: the file (a profile's, the environment) and the line, of the key
 * itself or, for a key that is missing, of its nearest parent that is there.
 */
export function keyOrigin(
  config: LoadedConfig,
  key: string,
): { readonly source: string; readonly line: number | undefined } {
  for (const k of keyAndParents(key)) {
    const line = config.lines?.get(k);
    const origin = config.origins?.get(k);
    if (line !== undefined || origin !== undefined) {
      return { source: origin ?? config.source, line };
    }
  }
  return { source: config.source, line: undefined };
}

/** The value at a dotted key (`server.port`), or `undefined`. */
export function configValue(values: ConfigValues, key: string): unknown {
  let node: unknown = values;
  for (const part of key.split(".")) {
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, part)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}
