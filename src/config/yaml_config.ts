import { loadAll, YAMLException } from "js-yaml";
import type { LoadedConfig } from "./application_config.ts";
import type { ConfigValues } from "./config_values.ts";
import { ConfigError } from "./config_error.ts";
import { type EnvLookup, type SecretFiles, substituteAll } from "./env.ts";
import { yamlLines } from "./yaml_lines.ts";

/** Parses YAML text; a syntax error names the file, the line and the column. */
export function parseYaml(text: string, file: string): ConfigValues {
  let docs: unknown[];
  try {
    // Aliases are capped: a few nested ones ("billion laughs") expand exponentially when the
    // document is walked for ${VAR} substitution. `loadAll`, because js-yaml's `load` refuses a
    // file with no document, which is what an empty or all-comments file is.
    // An empty document (`---` with nothing, or only comments, after it) holds no keys.
    docs = loadAll(text, null, { filename: file, maxAliases: 100 })
      .filter((doc) => doc !== null && doc !== undefined);
  } catch (error) {
    if (error instanceof YAMLException && error.mark) {
      throw new ConfigError(
        `${file}:${error.mark.line + 1}:${error.mark.column + 1}: ${error.reason}` +
          bareVariableHint(text.split("\n")[error.mark.line] ?? ""),
        { cause: error },
      );
    }
    throw new ConfigError(`${file}: ${(error as Error).message}`, { cause: error });
  }
  if (docs.length > 1) {
    throw new ConfigError(
      `${file}: holds ${docs.length} YAML documents (separated by "---" or "..."); put every ` +
        "key in one",
    );
  }
  const doc = docs[0];
  if (doc === undefined || doc === null) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError(`${file}: the document must be a mapping of keys`);
  }
  return doc as ConfigValues;
}

// In a flow collection `{` opens a mapping, so `[${URL}]` is no placeholder to YAML: a syntax
// error whose line holds one says what to write instead.
function bareVariableHint(line: string): string {
  const bare = /[[{,]\s*(\$\{[^}\s]*\})/.exec(line);
  return bare === null ? "" : `; a \${VAR} inside [ ] or { } must be quoted: ["${bare[1]}"]`;
}

/**
 * Parses and substitutes the text of a configuration file, keeping the line of each key; a
 * `${file:path}` is refused (reading one is `loadConfig`'s).
 */
export const parseConfigText = (
  text: string,
  file: string,
  dir: string | undefined,
  env: EnvLookup,
): LoadedConfig => substituteConfig(parseYaml(text, file), text, file, dir, env);

/** Substitutes a parsed document's placeholders, keeping the line of each key of its text. */
export function substituteConfig(
  doc: ConfigValues,
  text: string,
  file: string,
  dir: string | undefined,
  env: EnvLookup,
  files?: SecretFiles,
): LoadedConfig & { readonly lines: Map<string, number> } {
  // Lines first, so that an unset ${VAR} is reported at its line like any other mistake.
  const lines = yamlLines(text);
  const variables = new Map<string, string[]>();
  const values = substituteAll(doc, env, file, "", lines, files, variables) as ConfigValues;
  return { values, source: file, dir, lines, ...(variables.size === 0 ? {} : { variables }) };
}
