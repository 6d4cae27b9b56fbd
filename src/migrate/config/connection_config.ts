import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { configLocation, type LoadedConfig } from "../../config/application_config.ts";
import { keyLine } from "../../config/key_line.ts";
import { parseConfigText } from "../../config/yaml_config.ts";
import { ConfigError } from "../../config/config_error.ts";
import type { EnvLookup } from "../../config/env.ts";

const APPLICATION_FILES = ["application.yml", "application.yaml"];

/** Where a runner's connection list was found, or which files were looked at in vain. */
export type FoundConfig =
  | { readonly config: LoadedConfig; readonly key: string }
  | { readonly config: undefined; readonly looked: readonly string[] };

/**
 * Finds a runner's connection list in a config folder: under one of `keys` in the first module
 * file (`search-config.yml`, `datasource-config.yml`...) that has one, else in `application.yml`.
 */
export async function findConnectionList(
  configDir: string,
  env: EnvLookup,
  moduleFiles: readonly string[],
  keys: readonly string[],
): Promise<FoundConfig> {
  const looked: string[] = [];
  for (const name of [...moduleFiles, ...APPLICATION_FILES]) {
    const file = join(configDir, name);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new ConfigError(`Cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
    looked.push(file);
    const config = parseConfigText(text, file, configDir, env);
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
  if (looked.length === 0) await requireConfigDir(configDir);
  return { config: undefined, looked };
}

// A config folder that is not there is named as such, not as a folder without the files.
async function requireConfigDir(configDir: string): Promise<void> {
  let info;
  try {
    info = await stat(configDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return;
    throw new ConfigError(
      `the config folder ${configDir} does not exist (-c; it holds application.yml)`,
      { cause: error },
    );
  }
  if (!info.isDirectory()) {
    throw new ConfigError(`the config folder ${configDir} is not a folder (-c)`);
  }
}
