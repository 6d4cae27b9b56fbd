import { ConfigError } from "../../config/config_error.ts";
import type { EnvLookup } from "../../config/env.ts";
import { findConnectionList } from "../config/connection_config.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";
import { type SearchConnection, searchConnections } from "./search_connection.ts";

/** The module files read before `application.yml`, in this order; `search` is the primary name. */
const MODULE_FILES = [
  "search-config.yml",
  "search-config.yaml",
  "opensearch-config.yml",
  "opensearch-config.yaml",
];
const KEYS = ["search", "opensearch"];

/**
 * Finds the search connections of a config folder: the `search` (or `opensearch`) key of the first
 * module config file that has one, else of `application.yml`.
 */
export async function loadSearchConnections(
  configDir: string,
  env: EnvLookup,
  optionNames: OptionNames = COMMAND_LINE_NAMES,
): Promise<SearchConnection[]> {
  const found = await findConnectionList(configDir, env, MODULE_FILES, KEYS, optionNames);
  if (found.config !== undefined) return searchConnections(found.config, found.key, env);
  throw new ConfigError(
    found.looked.length === 0
      ? `No configuration in ${configDir}: expected application.yml or search-config.yml`
      : `No search connections: none of ${found.looked.join(", ")} has a "search" key`,
  );
}
