import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type LoadedConfig, registerLoadedConfig } from "./application_config.ts";
import { ConfigError } from "./config_error.ts";
import { runtimeEnv } from "./env.ts";
import { parseConfigText } from "./yaml_config.ts";

/** Options of {@linkcode loadConfig}. */
export interface LoadConfigOptions {
  /** Where `${VAR}` placeholders are read; the runtime's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

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
  if (typeof options !== "object" || options === null) {
    throw new ConfigError(`loadConfig(path, options) takes an object of options, got ${options}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== "env") {
      throw new ConfigError(`loadConfig(path, { ${key} }): no such option; the one option is env`);
    }
  }
  const values = options.env;
  if (values !== undefined && (typeof values !== "object" || values === null)) {
    throw new ConfigError(
      `loadConfig(path, { env }) takes an object of variables ({ PORT: "8080" }), got ${
        values === null ? "null" : typeof values
      }`,
    );
  }
  const env = values === undefined
    ? runtimeEnv()
    : (name: string) => Object.hasOwn(values, name) ? values[name] : undefined;
  // A `file:` URL given as text is read as the URL it is, not as a relative path.
  const file = resolve(
    typeof path === "string" && !path.startsWith("file:") ? path : fileURLToPath(path),
  );
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ConfigError(`Cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  return registerLoadedConfig(parseConfigText(text, file, dirname(file), env));
}
