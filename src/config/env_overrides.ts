import type { ConfigValues } from "./config_values.ts";
import { ConfigError } from "./config_error.ts";
import { copyTree } from "./plain_data.ts";
import type { EnvLookup } from "./env.ts";
import type { KeyType } from "./thaw_keys.ts";
import { isMapping } from "../object_guards.ts";

/** A key's path: mapping keys and list indexes. */
type Path = readonly (string | number)[];

/**
 * How an environment variable's text is read for the key it overrides: `numbers` and `booleans`
 * are lists whose items are read as such.
 */
export type OverrideKind = "number" | "boolean" | "list" | "numbers" | "booleans" | "text";

/** A key the environment set: the dotted key (`search[0].hosts`) and the variable. */
export interface EnvOverride {
  readonly key: string;
  readonly variable: string;
}

// A key an environment variable can name: ASCII letters, digits, `-` and `_` (a key holding a dot
// or anything else cannot be told apart once upper-cased and joined).
const SEGMENT = /^[A-Za-z0-9_-]+$/;

/**
 * The environment variable that overrides a key: the path's segments upper-cased and joined by
 * `_`, each `-` turned into `_`, a list index as its number (`search[0].hosts` is
 * `SEARCH_0_HOSTS`, `server.shutdown-timeout` is `SERVER_SHUTDOWN_TIMEOUT`). `undefined` for a
 * key no variable reaches: a top-level key (a `path:` or `home:` would be set by the shell's own
 * `PATH` and `HOME`), or one with a segment that is not letters, digits, `-` and `_`.
 */
export function envName(path: Path): string | undefined {
  return envNames(path)?.[0];
}

/**
 * The names that override a key, the first first: {@linkcode envName}'s, then Spring Boot's own,
 * which drops each `-` (`SERVER_SHUTDOWNTIMEOUT`), where that differs.
 */
export function envNames(path: Path): readonly string[] | undefined {
  if (path.length < 2) return undefined;
  const parts: string[] = [];
  for (const segment of path) {
    if (typeof segment === "number") parts.push(String(segment));
    else if (SEGMENT.test(segment)) parts.push(segment.toUpperCase());
    else return undefined;
  }
  const name = parts.join("_");
  const underscored = name.replaceAll("-", "_");
  const dashless = name.replaceAll("-", "");
  return underscored === dashless ? [underscored] : [underscored, dashless];
}

/**
 * Whether a variable is a service link that Kubernetes (`enableServiceLinks`) or Docker sets for
 * each service: `MAIL_PORT=tcp://10.0.0.11:25` for a service named `mail`. Never an override: it
 * would set `mail.port` (or `server.port`, for a service named `server`) to an address.
 */
export function isServiceLink(variable: string, text: string): boolean {
  return /_PORT(?:_\d+_(?:TCP|UDP|SCTP))?$/.test(variable) &&
    /^(?:tcp|udp|sctp):\/\/\S*:\d+$/.test(text);
}

/** A dotted key as the line map writes it: `search[0].hosts[1]`. */
export function dottedKey(path: Path): string {
  let key = "";
  for (const segment of path) {
    key += typeof segment === "number" ? `[${segment}]` : key === "" ? segment : `.${segment}`;
  }
  return key;
}

function isScalar(value: unknown): boolean {
  return value === null || typeof value !== "object";
}

function kindOf(value: unknown): OverrideKind {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => typeof v === "number")) return "numbers";
    if (value.length > 0 && value.every((v) => typeof v === "boolean")) return "booleans";
    return "list";
  }
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "boolean";
  return "text";
}

/**
 * What an environment variable can set: every value of the document that a variable can name, by
 * its dotted key (a key holding a `.` is named by none, so it cannot take a nested key's place).
 */
function valuePaths(value: unknown, path: (string | number)[], out: Map<string, Path>): void {
  if (isMapping(value)) {
    for (const key of Object.keys(value)) {
      if (SEGMENT.test(key)) valuePaths(value[key], [...path, key], out);
    }
  } else if (Array.isArray(value) && !value.every(isScalar)) {
    value.forEach((item, i) => valuePaths(item, [...path, i], out));
  } else if (path.length > 1) {
    // A scalar, or a list of scalars: the list is given whole, as `a,b,c`.
    out.set(dottedKey(path), path);
  }
}

/**
 * Reads an environment variable's text as the key wants it: a whole or decimal number where a
 * number was, `true`/`false` where a boolean was, a comma-separated list (each item trimmed, an
 * empty text for the empty list) where a list was. Text that does not read as such stays text,
 * for the key's reader to refuse with the variable's name.
 */
export function overrideValue(text: string, kind: OverrideKind): unknown {
  switch (kind) {
    case "number": {
      const number = /^\s*[+-]?\d+(?:\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
      return Number.isFinite(number) ? number : text;
    }
    case "boolean":
      return text === "true" ? true : text === "false" ? false : text;
    case "list":
      return text.trim() === "" ? [] : text.split(",").map((item) => item.trim());
    case "numbers":
    case "booleans": {
      const item = kind === "numbers" ? "number" : "boolean";
      return (overrideValue(text, "list") as string[]).map((t) => overrideValue(t, item));
    }
    case "text":
      return text;
  }
}

/** How the environment's text is read for a declared key of this type. */
export function declaredKind(type: KeyType): OverrideKind {
  switch (type) {
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "list":
      return "list";
    case "string":
    case "choice":
    case "feature":
      return "text";
  }
}

/**
 * The configuration with every key that an environment variable names replaced by its value. The
 * keys an environment variable reaches: every value of the document (a list of values is one,
 * given as `a,b,c`; a list of mappings is reached item by item, `SEARCH_0_PASSWORD`), and every
 * key of `declared` (Thaw's own, so `SERVER_PORT` works with no `server:` in the file). The
 * document is not changed; the result is a new one.
 *
 * @param values the configuration, after its `${VAR}` placeholders
 * @param lookup reads one variable (`undefined`: not set)
 * @param declared Thaw's keys, dotted, with how each reads text (`undefined`: not reachable)
 */
export function applyEnvOverrides(
  values: ConfigValues,
  lookup: EnvLookup,
  declared: readonly (readonly [string, OverrideKind | undefined])[],
): { readonly values: ConfigValues; readonly overrides: readonly EnvOverride[] } {
  const found = new Map<string, Path>();
  valuePaths(values, [], found);
  const kinds = new Map<string, OverrideKind>();
  for (const [key, kind] of declared) {
    if (kind === undefined) continue;
    kinds.set(key, kind);
    if (!found.has(key)) found.set(key, key.split("."));
  }
  let out: ConfigValues = values;
  const overrides: EnvOverride[] = [];
  for (const [key, path] of found) {
    let variable: string | undefined;
    let text: string | undefined;
    for (const name of envNames(path) ?? []) {
      text = lookup(name);
      if (text !== undefined && !isServiceLink(name, text)) {
        variable = name;
        break;
      }
    }
    if (variable === undefined || text === undefined) continue;
    const kind = kinds.get(key) ?? kindOf(valueAt(values, path));
    if (out === values) out = copyTree(values) as ConfigValues;
    const blocked = setAt(out, path, overrideValue(text, kind));
    if (blocked !== undefined) {
      throw new ConfigError(
        `environment variable ${variable} sets ${key}, but ${blocked} holds a value, not keys: ` +
          `give ${blocked} as keys in the file, or unset ${variable}`,
      );
    }
    overrides.push({ key, variable });
  }
  return { values: out, overrides };
}

function valueAt(values: unknown, path: Path): unknown {
  let node = values;
  for (const segment of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

// Sets the value at `path`, making the mappings on the way; when a value that is not a mapping
// (a list, a number) stands where a mapping would have to be, the dotted key that holds it.
function setAt(root: ConfigValues, path: Path, value: unknown): string | undefined {
  let node: Record<string | number, unknown> = root;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i];
    let next = Object.hasOwn(node, segment) ? node[segment] : undefined;
    if (next === undefined || next === null) {
      next = {};
      Object.defineProperty(node, segment, {
        value: next,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    if (typeof next !== "object" || (typeof path[i + 1] === "string" && Array.isArray(next))) {
      return dottedKey(path.slice(0, i + 1));
    }
    node = next as Record<string | number, unknown>;
  }
  Object.defineProperty(node, path[path.length - 1], {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return undefined;
}
