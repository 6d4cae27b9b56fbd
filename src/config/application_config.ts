import { load, YAMLException } from "js-yaml";
import { ConfigError } from "./config_error.ts";
import { type EnvLookup, runtimeEnv, substituteAll } from "./env.ts";
import { keyLine, yamlLines } from "./yaml_lines.ts";

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

/** Parses YAML text; a syntax error names the file, the line and the column. */
export function parseYaml(text: string, file: string): ConfigValues {
  let doc: unknown;
  try {
    // Aliases are capped: a few nested ones ("billion laughs") expand exponentially when the
    // document is walked for ${VAR} substitution.
    doc = load(text, { filename: file, maxAliases: 100 });
  } catch (error) {
    if (error instanceof YAMLException && error.mark) {
      throw new ConfigError(
        `${file}:${error.mark.line + 1}:${error.mark.column + 1}: ${error.reason}`,
        { cause: error },
      );
    }
    throw new ConfigError(`${file}: ${(error as Error).message}`, { cause: error });
  }
  if (doc === undefined || doc === null) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError(`${file}: the document must be a mapping of keys`);
  }
  return doc as ConfigValues;
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
  // Loaded only for a file, so an app configured by object needs no file system.
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
  return parseConfigText(text, file, dirname(file), env);
}

/** Parses and substitutes the text of a configuration file, keeping the line of each key. */
export function parseConfigText(
  text: string,
  file: string,
  dir: string | undefined,
  env: EnvLookup,
): LoadedConfig {
  const doc = parseYaml(text, file);
  // Lines first, so that an unset ${VAR} is reported at its line like any other mistake.
  const lines = yamlLines(text);
  const values = substituteAll(doc, env, file, "", lines) as ConfigValues;
  return { values, source: file, dir, lines };
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
