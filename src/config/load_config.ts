import { readFile, stat } from "node:fs/promises";
import { checkOptionsObject } from "../options_object.ts";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  configLocation,
  configValue,
  type LoadedConfig,
  placeholderVariables,
  registerLoadedConfig,
  withEnvOverrides,
} from "./application_config.ts";
import type { ConfigValues } from "./config_values.ts";
import { ConfigError } from "./config_error.ts";
import { type ConfigLayer, mergeLayers, profileFileName, profileList } from "./config_layers.ts";
import { type EnvLookup, overrideEnv, PLACEHOLDER, runtimeEnv, type SecretFiles } from "./env.ts";
import { parseYaml, substituteConfig } from "./yaml_config.ts";

/** Options of {@linkcode loadConfig}. */
export interface LoadConfigOptions {
  /**
   * The environment: what `${VAR}` placeholders read, what overrides keys (`SERVER_PORT` for
   * `server.port`) and `THAW_PROFILES_ACTIVE`; the runtime's environment by default.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * The active profiles, in order (a list, or names separated by commas); by default the
   * environment's `THAW_PROFILES_ACTIVE`, else `thaw.profiles.active` of the file.
   */
  readonly profiles?: readonly string[] | string;
}

const OPTION_KEYS = ["env", "profiles"];
// A secret file is a password or a key, not a document: a larger one is a wrong path.
const MAX_SECRET_FILE = 1024 * 1024;

/**
 * Reads `application.yml` (a path, relative to the working directory, or a file URL), substitutes
 * its `${VAR}` placeholders and keeps the line of each key, for `bootstrap({ config })`. Its
 * `app.component-scan` directories resolve against the file's directory. Throws a `ConfigError`
 * naming the file (and the line) for a file that cannot be read, malformed YAML, a document that
 * is not a mapping, or a placeholder whose variable is unset and has no default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { bootstrap } from "@thaw/thaw";
 * import { loadConfig } from "@thaw/thaw/config";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-"));
 * await writeFile(join(dir, "application.yml"), "greeting:\n  name: ${NAME:world}\n");
 *
 * const config = await loadConfig(join(dir, "application.yml"), { env: { NAME: "Ada" } });
 * assert.deepEqual(config.values, { greeting: { name: "Ada" } });
 * const app = await bootstrap({ config });
 * assert.deepEqual(app.config, { greeting: { name: "Ada" } });
 * ```
 */
export async function loadConfig(
  path: string | URL,
  options: LoadConfigOptions = {},
): Promise<LoadedConfig> {
  if (typeof path !== "string" && !(path instanceof URL)) {
    throw new ConfigError(`loadConfig takes a path or a file URL, got ${typeof path}`);
  }
  // An option loadConfig does not know, or an env that is not an object, would leave the
  // placeholders to the process's environment without a word.
  checkOptionsObject(options as unknown, "loadConfig(path, options)", OPTION_KEYS, {
    error: ConfigError,
  });
  const values = options.env;
  if (values !== undefined && (typeof values !== "object" || values === null)) {
    throw new ConfigError(
      `loadConfig(path, { env }) takes an object of variables ({ PORT: "8080" }), got ${
        values === null ? "null" : typeof values
      }`,
    );
  }
  const given = values === undefined
    ? undefined
    : (name: string) => Object.hasOwn(values, name) ? values[name] : undefined;
  // A `file:` URL given as text is read as the URL it is, not as a relative path.
  const file = resolve(
    typeof path === "string" && !path.startsWith("file:") ? path : fileURLToPath(path),
  );
  return await readLayeredConfig(file, given ?? runtimeEnv(), overrideEnv(given), options.profiles);
}

/**
 * Reads a configuration file as `loadConfig` does: the file, then the file of each active
 * profile over it, then the environment's overrides. `env` reads `${VAR}` placeholders,
 * `overrides` the variables that override keys and `THAW_PROFILES_ACTIVE`.
 */
export async function readLayeredConfig(
  file: string,
  env: EnvLookup,
  overrides: EnvLookup,
  profileOption?: LoadConfigOptions["profiles"],
): Promise<LoadedConfig> {
  const secrets: string[] = [];
  const base = await readConfigFile(file, env, secrets);
  const profiles = activeProfiles(profileOption, overrides, base);
  const layers: (ConfigLayer & Pick<LoadedConfig, "variables">)[] = [base];
  // With no profile active, Spring's fallback profile `default`: its file is read when it exists,
  // and is not an active profile (`config.profiles` stays empty).
  const read = profiles.length > 0
    ? profiles.map((profile) => ({ profile, optional: false }))
    : [{ profile: DEFAULT_PROFILE, optional: true }];
  for (const { profile, optional } of read) {
    const profileFile = profileFileName(file, profile);
    if (optional && !(await exists(profileFile))) continue;
    const layer = await readConfigFile(profileFile, env, secrets, profile);
    if (configValue(layer.values, "thaw.profiles.active") !== undefined) {
      throw new ConfigError(
        `${configLocation(layer, "thaw.profiles.active")}: the active profiles are chosen in ` +
          `${file} (or THAW_PROFILES_ACTIVE), not in a profile's own file`,
      );
    }
    layers.push(layer);
  }
  const merged = mergeLayers(layers);
  // A key's placeholders are those of the layer its value comes from.
  const variables = new Map<string, readonly string[]>();
  for (const layer of layers) {
    for (const [key, names] of layer.variables ?? []) {
      if ((merged.origins.get(key) ?? file) === layer.source) variables.set(key, names);
    }
  }
  const overridden = withEnvOverrides(merged.values, merged.lines, overrides, merged.origins);
  const traced = placeholderVariables(variables, overridden.origins);
  return registerLoadedConfig({
    values: overridden.values,
    source: file,
    dir: dirname(file),
    lines: overridden.lines,
    origins: overridden.origins,
    profiles,
    ...(traced.size === 0 ? {} : { variables: traced }),
  }, secrets);
}

/** The profile whose file is read when no profile is active (Spring's default profile). */
const DEFAULT_PROFILE = "default";

// Whether a profile's file is there to read; any other failure is left to the read, which names it.
async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

// The option, else THAW_PROFILES_ACTIVE, else the file's `thaw.profiles.active`.
function activeProfiles(
  option: LoadConfigOptions["profiles"],
  env: EnvLookup,
  base: LoadedConfig,
): string[] {
  if (option !== undefined) return profileList(option, "loadConfig(path, { profiles })");
  const fromEnv = env("THAW_PROFILES_ACTIVE");
  if (fromEnv !== undefined) {
    return profileList(fromEnv, "environment variable THAW_PROFILES_ACTIVE");
  }
  return profileList(
    configValue(base.values, "thaw.profiles.active"),
    configLocation(base, "thaw.profiles.active"),
  );
}

/**
 * Reads one configuration file: parses it, reads the files its `${file:path}` placeholders name
 * (relative to the file's folder; each one's text is added to `secrets`), and substitutes its
 * placeholders. `profile` names the profile a file is read for, in the error when it is missing.
 */
export async function readConfigFile(
  file: string,
  env: EnvLookup,
  secrets: string[] = [],
  profile?: string,
): Promise<LoadedConfig & { readonly values: ConfigValues; readonly lines: Map<string, number> }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (profile !== undefined && (error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new ConfigError(
        `The profile ${profile} is active, but ${file} does not exist: create it (it may be ` +
          `empty), or leave the profile out`,
        { cause: error },
      );
    }
    throw new ConfigError(`Cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  const doc = parseYaml(text, file);
  const files = new Map<string, { text: string } | { error: string }>();
  for (const path of secretFilePaths(doc)) {
    files.set(path, await readSecretFile(resolve(dirname(file), path)));
  }
  for (const read of files.values()) if ("text" in read) secrets.push(read.text);
  return substituteConfig(doc, text, file, dirname(file), env, files as SecretFiles);
}

async function readSecretFile(path: string): Promise<{ text: string } | { error: string }> {
  try {
    const bytes = await readFile(path);
    if (bytes.byteLength > MAX_SECRET_FILE) {
      return { error: `it holds ${bytes.byteLength} bytes, over ${MAX_SECRET_FILE}` };
    }
    // `echo pw > file` ends it with a line break that is no part of the secret.
    return { text: new TextDecoder().decode(bytes).replace(/(?:\r?\n)+$/, "") };
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
}

/** The paths of the `${file:path}` placeholders of a parsed document. */
function secretFilePaths(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (typeof value === "string") {
    for (const match of value.matchAll(PLACEHOLDER)) {
      if (match[1] === "file" && match[2] !== undefined) out.add(match[2]);
    }
  } else if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) secretFilePaths(child, out);
  }
  return out;
}
