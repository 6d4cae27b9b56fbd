import { ConfigError } from "../../config/config_error.ts";
import type { EnvLookup } from "../../config/env.ts";
import { findConnectionList } from "../config/connection_config.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";
import { type Datasource, datasources } from "../../sql/datasource.ts";

const MODULE_FILES = ["datasource-config.yml", "datasource-config.yaml"];

/**
 * Finds the datasources of a config folder: the `datasource` key of `datasource-config.yml`, else
 * of `application.yml`. When there is none, the error shows what to add.
 */
export async function loadDatasources(
  configDir: string,
  migrationsRoot: string,
  env: EnvLookup,
  cwd: string,
  optionNames: OptionNames = COMMAND_LINE_NAMES,
): Promise<Datasource[]> {
  const found = await findConnectionList(configDir, env, MODULE_FILES, ["datasource"], optionNames);
  if (found.config !== undefined) return datasources(found.config, found.key, cwd);
  const where = found.looked.length === 0
    ? `${configDir} has no application.yml or datasource-config.yml`
    : `none of ${found.looked.join(", ")} has a "datasource" key`;
  throw new ConfigError(
    `No SQL datasource: ${where}. Add one to application.yml, for example an embedded SQLite ` +
      `database (no server needed):

datasource:
  - name: main
    url: sqlite:./data/app.db
    migrations:
      enabled: true

then put .sql files in ${migrationsRoot}/main/ (for ${
        optionNames.mode("search")
      }, configure "search" instead).`,
  );
}
