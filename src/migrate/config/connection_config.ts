import { stat } from "node:fs/promises";
import { join } from "node:path";
import {
  configLocation,
  type LoadedConfig,
  withEnvOverrides,
} from "../../config/application_config.ts";
import { keyLine } from "../../config/key_line.ts";
import { readConfigFile, readLayeredConfig } from "../../config/load_config.ts";
import { ConfigError } from "../../config/config_error.ts";
import { type EnvLookup, overrideEnv } from "../../config/env.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";

const APPLICATION_FILES = ["application.yml", "application.yaml"];

/** Where a runner's connection list was found, or which files were looked at in vain. */
export type FoundConfig =
  | { readonly config: LoadedConfig; readonly key: string }
  | { readonly config: undefined; readonly looked: readonly string[] };

/**
 * Finds a runner's connection list in a config folder: under one of `keys` in the first module
 * file (`search-config.yml`, `datasource-config.yml`...) that has one, else in `application.yml`.
 * Each file is read as an app reads its configuration: `${file:path}` secrets, the environment's
 * overrides (`SEARCH_0_PASSWORD`), and for `application.yml` the active profiles' files.
 */
export async function findConnectionList(
  configDir: string,
  env: EnvLookup,
  moduleFiles: readonly string[],
  keys: readonly string[],
  optionNames: OptionNames = COMMAND_LINE_NAMES,
): Promise<FoundConfig> {
  const looked: string[] = [];
  const overrides = overrideEnv(env);
  for (const name of [...moduleFiles, ...APPLICATION_FILES]) {
    const file = join(configDir, name);
    try {
      await stat(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
    }
    looked.push(file);
    const config = APPLICATION_FILES.includes(name)
      ? await readLayeredConfig(file, env, overrides)
      : await moduleFile(file, configDir, env, overrides);
    const [key, other] = keys.filter((k) => Object.hasOwn(config.values, k));
    // Aliases of one list: reading one and ignoring the other would drop connections unseen.
    if (other !== undefined) {
      const line = keyLine(config.lines, key);
      throw new ConfigError(
        `${configLocation(config, other)}: is another name for ${key}:, which is set too` +
          `${line === undefined ? "" : ` (line ${line})`}; keep one`,
      );
    }
    if (key !== undefined) return { config, key };
  }
  if (looked.length === 0) await requireConfigDir(configDir, optionNames);
  return { config: undefined, looked };
}

async function moduleFile(
  file: string,
  configDir: string,
  env: EnvLookup,
  overrides: EnvLookup,
): Promise<LoadedConfig> {
  const read = await readConfigFile(file, env);
  const { values, lines, origins } = withEnvOverrides(read.values, read.lines, overrides);
  return { values, source: file, dir: configDir, lines, origins };
}

// A config folder that is not there is named as such, not as a folder without the files.
async function requireConfigDir(configDir: string, optionNames: OptionNames): Promise<void> {
  let info;
  try {
    info = await stat(configDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return;
    throw new ConfigError(
      `the config folder ${configDir} does not exist (${optionNames.config}; it holds ` +
        "application.yml)",
      { cause: error },
    );
  }
  if (!info.isDirectory()) {
    throw new ConfigError(`the config folder ${configDir} is not a folder (${optionNames.config})`);
  }
}
