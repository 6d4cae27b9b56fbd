import process from "node:process";
import { ConfigError } from "../config/config_error.ts";
import { maskUrl } from "../config/secrets_mask.ts";
import { DIALECTS } from "../sql/dialects.ts";
import { MIGRATE_API_NAMES } from "./option_names.ts";
import { optionEnv } from "./migrate_api.ts";
import { optionFolder } from "./option_folder.ts";
import type { DatabaseKind } from "../sql/datasource.ts";
import { loadDatasources } from "./sql/sql_config.ts";

/** One SQL datasource of a config folder, as the runner reads it. */
export interface DatasourceInfo {
  /** Its `name`: the folder of its files under the migrations root. */
  readonly name: string;
  /** `sqlite`, `postgres` or `mysql`. */
  readonly kind: DatabaseKind;
  /**
   * SQLite: the database file as an absolute path (a relative `url` starts at `cwd`), or
   * `:memory:`. Others: the URL without its credentials, password-like parameters as `***`.
   */
  readonly location: string;
  /** `migrations.enabled: true`. */
  readonly migrationsEnabled: boolean;
}

/**
 * Reads one datasource of a config folder exactly as {@linkcode migrate} does (`${VAR}`
 * placeholders, a relative SQLite path resolved against `cwd`), so an app opens the database its
 * migrations went to. Credentials are left out. Throws a {@linkcode ConfigError} when the
 * configuration is wrong or has no datasource of that name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { readDatasource } from "@thaw/thaw/migrate";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-doc-"));
 * await writeFile(join(dir, "application.yml"), "datasource:\n  - name: main\n    url: sqlite:${DB:./app.db}\n");
 * const main = await readDatasource({ config: dir, name: "main", env: {}, cwd: dir });
 * assert.equal(main.location, join(dir, "app.db"));
 * assert.equal(main.kind, "sqlite");
 * ```
 */
export async function readDatasource(options: {
  /** The config folder, as for {@linkcode migrate}. */
  readonly config: string | URL;
  /** The datasource's `name`. */
  readonly name: string;
  /** Where `${VAR}` placeholders are read; the runtime's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where relative paths start; the working directory by default. */
  readonly cwd?: string;
}): Promise<DatasourceInfo> {
  const cwd = options.cwd ?? process.cwd();
  const configDir = optionFolder(options.config, cwd);
  const all = await loadDatasources(
    configDir,
    "migrations",
    optionEnv(options.env),
    cwd,
    MIGRATE_API_NAMES,
  );
  const found = all.find((d) => d.name === options.name);
  if (found === undefined) {
    throw new ConfigError(
      `${configDir} has no datasource named "${options.name}" (configured: ${
        all.map((d) => d.name).join(", ")
      })`,
    );
  }
  return {
    name: found.name,
    kind: found.kind,
    // A secret can also sit in a query parameter (`sslpassword=`): masked, as in every report.
    location: DIALECTS[found.kind].file ? found.location : maskUrl(found.location),
    migrationsEnabled: found.migrationsEnabled,
  };
}
