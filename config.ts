/**
 * Reading `application.yml`: `loadConfig(path)` reads the file, substitutes its `${VAR}`
 * placeholders and keeps each key's line for error messages; give what it returns to
 * `bootstrap({ config })`. Apart from the default entry point because it needs a file system and
 * a YAML parser, which an edge worker configured by an object does without.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { loadConfig } from "@thaw/thaw/config";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-"));
 * await writeFile(join(dir, "application.yml"), "server:\n  port: ${PORT:8080}\n");
 * const config = await loadConfig(join(dir, "application.yml"), { env: {} });
 * assert.deepEqual(config.values, { server: { port: "8080" } });
 * ```
 *
 * @module
 */
export { loadConfig, type LoadConfigOptions } from "./src/config/load_config.ts";
export type { LoadedConfig } from "./src/config/application_config.ts";
export type { ConfigValues } from "./src/config/config_values.ts";
export { ConfigError } from "./src/config/config_error.ts";
