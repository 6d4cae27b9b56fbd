import { ConfigError } from "./config_error.ts";
import { keyLine } from "./key_line.ts";

/** Reads one environment variable; `undefined` when it is not set. */
export type EnvLookup = (name: string) => string | undefined;

interface RuntimeGlobals {
  Deno?: { env: { get(name: string): string | undefined } };
  process?: { env: Record<string, string | undefined> };
}

/**
 * The runtime's environment, read one variable at a time and only when a `${VAR}` asks for it:
 * under Deno that needs `--allow-env=VAR` for exactly those variables.
 */
export function runtimeEnv(): EnvLookup {
  const g = globalThis as RuntimeGlobals;
  if (g.Deno !== undefined) return (name) => g.Deno!.env.get(name);
  if (g.process?.env !== undefined) return (name) => g.process!.env[name];
  return () => undefined;
}

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_.]*)(?::([^}]*))?\}/g;

/** Replaces `${VAR}` and `${VAR:default}` in one string; `where` names it in errors. */
export function substitute(text: string, env: EnvLookup, where: string): string {
  return text.replace(PLACEHOLDER, (_match, name: string, fallback: string | undefined) => {
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
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(
      `${where} uses \${${name}}, which is not set; set it or write \${${name}:default}`,
    );
  });
}

/**
 * Substitutes every string of a parsed document. Errors name the file, the key, and its line when
 * `lines` (from `yamlLines`) knows it: `application.yml:7: search[0].password uses ${PW}, ...`.
 */
export function substituteAll(
  value: unknown,
  env: EnvLookup,
  file: string,
  key = "",
  lines?: ReadonlyMap<string, number>,
): unknown {
  if (typeof value === "string") {
    if (!value.includes("${")) return value;
    const line = keyLine(lines, key);
    return substitute(
      value,
      env,
      `${file}${line === undefined ? "" : `:${line}`}: ${key || "(root)"}`,
    );
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => substituteAll(item, env, file, `${key}[${i}]`, lines));
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // An own "__proto__" from YAML would become the prototype if assigned: skip it.
      if (k === "__proto__") continue;
      out[k] = substituteAll(v, env, file, key ? `${key}.${k}` : k, lines);
    }
    return out;
  }
  return value;
}
