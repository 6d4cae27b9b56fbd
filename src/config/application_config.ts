import { ConfigError } from "./config_error.ts";
import { type EnvLookup, runtimeEnv, substituteAll } from "./env.ts";
import { keyLine } from "./key_line.ts";

/** Configuration as parsed from `application.yml` (or given as an object). */
export type ConfigValues = Record<string, unknown>;

/** A loaded configuration and where it came from. */
export interface LoadedConfig {
  readonly values: ConfigValues;
  /** The file, for messages; `"config"` when given as an object. */
  readonly source: string;
  /** The file's directory: relative paths in it resolve against this. */
  readonly dir: string | undefined;
  /** The line of each key (dotted path, `list[0]` for items), when read from a file. */
  readonly lines?: ReadonlyMap<string, number>;
}

/** Reads `application.yml` (a path or file URL) or takes an object, and substitutes `${VAR}`. */
export async function loadConfig(
  source: string | URL | ConfigValues | undefined,
  env: EnvLookup = runtimeEnv(),
): Promise<LoadedConfig> {
  if (source === undefined) return { values: {}, source: "config", dir: undefined };
  if (typeof source !== "string" && !(source instanceof URL)) {
    return {
      values: substituteAll(source, env, "config") as ConfigValues,
      source: "config",
      dir: undefined,
    };
  }
  // Loaded only for a file, so an app configured by object needs no file system and no YAML
  // parser: neither is evaluated, and a bundle split into chunks leaves both out of its entry.
  const { readFile } = await import("node:fs/promises");
  const { dirname, resolve } = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const file = resolve(typeof source === "string" ? source : fileURLToPath(source));
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ConfigError(`Cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  const { parseConfigText } = await import("./yaml_config.ts");
  return parseConfigText(text, file, dirname(file), env);
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
