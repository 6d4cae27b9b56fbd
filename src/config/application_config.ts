import { ConfigError } from "./config_error.ts";
import { type EnvLookup, runtimeEnv, substituteAll } from "./env.ts";
import { keyLine } from "./key_line.ts";

/** Configuration as parsed from `application.yml` (or given as an object). */
export type ConfigValues = Record<string, unknown>;

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
}

// What `loadConfig` returned carries this, so that `bootstrap` tells a loaded file from a
// configuration object that happens to have a `values` key. A registered symbol, not a WeakSet:
// a file loaded by another copy of the package (npm and JSR, two versions) is recognised too. Not
// enumerable, so a copy (`{ ...loaded }`, `structuredClone`) does not carry it.
const LOADED: unique symbol = Symbol.for("@thaw/thaw.loadedConfig") as never;

/** Marks a configuration as read from a file by `loadConfig`. */
export function registerLoadedConfig(config: LoadedConfig): LoadedConfig {
  // Deeply: one loaded file may configure several apps, and `app.config` is its `values`, so a
  // change made through one app would otherwise show in the others.
  deepFreeze(config.values);
  Object.defineProperty(config, LOADED, { value: true });
  return Object.freeze(config);
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

/** What `scanComponents(config)` scanned: the key's value then, and the classes it found. */
export interface ScanRecord {
  /** `app.component-scan` as it was scanned, as JSON. */
  readonly directories: string;
  readonly classes: readonly unknown[];
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
const LOADED_KEYS = new Set(["values", "source", "dir", "lines"]);

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
  const values = substituteAll(source, env, "config") as ConfigValues;
  // As a loaded file's: `app.config` cannot be changed behind the beans that read it.
  deepFreeze(values);
  return { values, source: "config", dir: undefined };
}

/**
 * Where a key is, for an error message: `file:line: key`, or `file: key` when the line is not
 * known (the key is missing: then its parent's line is used, if known).
 */
export function configLocation(config: LoadedConfig, key: string): string {
  const line = keyLine(config.lines, key);
  return line === undefined ? `${config.source}: ${key}` : `${config.source}:${line}: ${key}`;
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

/** An integer setting within bounds; numeric strings (from `${VAR}`) are accepted. */
export function configInteger(
  config: LoadedConfig,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const value = configValue(config.values, key);
  if (value === undefined || value === null) return undefined;
  const n = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(
      `${config.source}: ${key} must be an integer from ${min} to ${max}, got ${
        JSON.stringify(value)
      }`,
    );
  }
  return n;
}

/** A `true`/`false` setting; the strings `true` and `false` (from `${VAR}`) are accepted. */
export function configBoolean(config: LoadedConfig, key: string): boolean | undefined {
  const value = configValue(config.values, key);
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "string" ? value.trim() : undefined;
  if (typeof value === "boolean") return value;
  if (text === "true" || text === "false") return text === "true";
  throw new ConfigError(
    `${config.source}: ${key} must be true or false, got ${JSON.stringify(value)}`,
  );
}

/** A list of strings; a single string counts as a list of one. */
export function configStrings(config: LoadedConfig, key: string): string[] {
  const value = configValue(config.values, key);
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((v) => typeof v === "string" && v !== "")) {
    throw new ConfigError(`${config.source}: ${key} must be a path or a list of paths`);
  }
  return list as string[];
}
