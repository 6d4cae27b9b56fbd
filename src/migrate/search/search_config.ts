import { join } from "node:path";
import { readFile } from "node:fs/promises";
import { type LoadedConfig, parseConfigText } from "../../config/application_config.ts";
import { ConfigError } from "../../config/config_error.ts";
import type { EnvLookup } from "../../config/env.ts";
import { type SearchConnection, searchConnections } from "./search_connection.ts";

/** The module files read before `application.yml`, in this order; `search` is the primary name. */
const MODULE_FILES = [
  "search-config.yml",
  "search-config.yaml",
  "opensearch-config.yml",
  "opensearch-config.yaml",
];
const APPLICATION_FILES = ["application.yml", "application.yaml"];
const KEYS = ["search", "opensearch"];

/**
 * Finds the search connections of a config folder: the `search` (or `opensearch`) key of the first
 * module config file that has one, else of `application.yml`.
 */
export async function loadSearchConnections(
  configDir: string,
  env: EnvLookup,
): Promise<SearchConnection[]> {
  const looked: string[] = [];
  for (const name of [...MODULE_FILES, ...APPLICATION_FILES]) {
    const file = join(configDir, name);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new ConfigError(`Cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
    looked.push(file);
    const config: LoadedConfig = parseConfigText(text, file, configDir, env);
    const key = KEYS.find((k) => Object.hasOwn(config.values, k));
    if (key !== undefined) return searchConnections(config, key);
  }
  throw new ConfigError(
    looked.length === 0
      ? `No configuration in ${configDir}: expected application.yml or search-config.yml`
      : `No search connections: none of ${looked.join(", ")} has a "search" key`,
  );
}
