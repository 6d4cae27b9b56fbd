import { ConfigError } from "./config_error.ts";
import { keyLine } from "./key_line.ts";

/** Reads one environment variable; `undefined` when it is not set. */
export type EnvLookup = (name: string) => string | undefined;

interface RuntimeGlobals {
  Deno?: {
    env: { get(name: string): string | undefined };
    permissions?: { querySync?(descriptor: { name: "env"; variable: string }): { state: string } };
  };
  process?: { env: Record<string, string | undefined> };
}

/**
 * The runtime's environment, read one variable at a time and only when a `${VAR}` asks for it:
 * under Deno that needs `--allow-env=VAR` for exactly those variables.
 */
export function runtimeEnv(): EnvLookup {
  return RUNTIME_ENV;
}

const RUNTIME_ENV: EnvLookup = (name) => {
  const g = globalThis as RuntimeGlobals;
  if (g.Deno !== undefined) return g.Deno.env.get(name);
  return g.process?.env?.[name];
};

/**
 * The runtime's environment for the overrides, which look up many names the app may not be
 * allowed to read: under Deno a variable the permissions do not grant reads as unset, rather than
 * prompting or failing (`--allow-env` grants them all). A given lookup that throws reads as unset.
 */
export function overrideEnv(lookup?: EnvLookup): EnvLookup {
  const read = lookup ?? RUNTIME_ENV;
  const deno = (globalThis as RuntimeGlobals).Deno;
  const query = deno?.permissions?.querySync;
  if (read === RUNTIME_ENV && deno !== undefined && query !== undefined) {
    return (name) =>
      query.call(deno.permissions, { name: "env", variable: name }).state === "granted"
        ? deno.env.get(name)
        : undefined;
  }
  return (name) => {
    try {
      return read(name);
    } catch {
      return undefined;
    }
  };
}

/**
 * What `${file:path}` placeholders read: the text of each file (its trailing line breaks
 * dropped), or why it could not be read. Only `loadConfig` reads files.
 */
export type SecretFiles = ReadonlyMap<
  string,
  { readonly text: string } | { readonly error: string }
>;

/** A `${VAR}` or `${VAR:default}` placeholder: the name, and the default. */
export const PLACEHOLDER: RegExp = /\$\{([A-Za-z_][A-Za-z0-9_.]*)(?::([^}]*))?\}/g;

/**
 * Replaces `${VAR}` and `${VAR:default}` in one string; `where` names it in errors. `used` hears
 * the name of each variable whose value the text took (not a default's, not a file's).
 */
export function substitute(
  text: string,
  env: EnvLookup,
  where: string,
  files?: SecretFiles,
  used?: (name: string) => void,
): string {
  return text.replace(PLACEHOLDER, (_match, name: string, fallback: string | undefined) => {
    if (fallback?.includes("${file:")) {
      // The first `}` ends the placeholder: `${PW:${file:pw}}` would give `${file:pw` and a `}`.
      throw new ConfigError(
        `${where}: the default of \${${name}:...} holds a placeholder; a default is plain text`,
      );
    }
    if (name === "file" && fallback !== undefined) return secretFile(fallback, where, files);
    let value: string | undefined;
    try {
      value = env(name);
    } catch (error) {
      throw new ConfigError(
        `${where} uses \${${name}}, but the environment cannot be read ` +
          `(under Deno, run with --allow-env=${name}): ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (value !== undefined) {
      used?.(name);
      return value;
    }
    if (fallback !== undefined) return fallback;
    throw new ConfigError(
      `${where} uses \${${name}}, which is not set; set it or write \${${name}:default}`,
    );
  });
}

function secretFile(path: string, where: string, files: SecretFiles | undefined): string {
  const read = files?.get(path);
  if (read === undefined) {
    throw new ConfigError(
      `${where} uses \${file:${path}}: a file is read by loadConfig of @thaw/thaw/config, ` +
        `not in a configuration object`,
    );
  }
  if ("error" in read) {
    throw new ConfigError(`${where} uses \${file:${path}}, which cannot be read: ${read.error}`);
  }
  return read.text;
}

/**
 * Substitutes every string of a parsed document. Errors name the file, the key, and its line when
 * `lines` (from `yamlLines`) knows it: `application.yml:7: search[0].password uses ${PW}, ...`.
 * `variables`, when given, gets the environment variables each key's value took, by key.
 */
export function substituteAll(
  value: unknown,
  env: EnvLookup,
  file: string,
  key = "",
  lines?: ReadonlyMap<string, number>,
  files?: SecretFiles,
  variables?: Map<string, string[]>,
): unknown {
  if (typeof value === "string") {
    if (!value.includes("${")) return value;
    const line = keyLine(lines, key);
    const used: string[] = [];
    const out = substitute(
      value,
      env,
      `${file}${line === undefined ? "" : `:${line}`}: ${key || "(root)"}`,
      files,
      (name) => void (used.includes(name) || used.push(name)),
    );
    if (used.length > 0) variables?.set(key, used);
    return out;
  }
  if (Array.isArray(value)) {
    return value.map((item, i) =>
      substituteAll(item, env, file, `${key}[${i}]`, lines, files, variables)
    );
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // An own "__proto__" from YAML would become the prototype if assigned: skip it.
      if (k === "__proto__") continue;
      out[k] = substituteAll(v, env, file, key ? `${key}.${k}` : k, lines, files, variables);
    }
    return out;
  }
  return value;
}
