// Spring Boot 3's `show-values` for `env` and `configprops`: what those endpoints show of each
// configured value. `never` (the default) hides every value; `always` hides what is a secret by
// its key, by where it came from (a `${file:}` secret file) or by its shape (a URL's credentials).
import {
  configSecrets,
  fileSecrets,
  isSecretKey,
  type LoadedConfig,
} from "../config/application_config.ts";
import { ConfigError } from "../config/config_error.ts";
import { composeMasks, type Mask, maskUrl, maskUrls, secretsMask } from "../config/secrets_mask.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { isPlainObject } from "../object_guards.ts";

/** What `management.endpoint.{env,configprops}.show-values` lets an endpoint show. */
export type ShowValues = "never" | "always";

/** A value not shown, as Spring Boot writes it. */
export const MASKED = "******";

/**
 * Reads `management.endpoint.{endpoint}.show-values`. Spring's `when-authorized` shows values to a
 * user in a role, and Thaw has no roles to ask: it stops `bootstrap`, naming the key, rather than
 * quietly showing all or nothing.
 */
export function showValues(settings: ThawSettings, endpoint: "env" | "configprops"): ShowValues {
  const key = `management.endpoint.${endpoint}.show-values` as const;
  const value = settings.get(key);
  if (value === "when-authorized") {
    throw new ConfigError(
      `${settings.where(key)}: when-authorized shows values to users in a role, and Thaw has ` +
        "no roles: write always, with the actuator on the management port or behind a guard, " +
        "or never",
    );
  }
  return value;
}

/** What an endpoint shows of configured keys and values. */
export interface ValueShower {
  /** A key as shown: the configuration's secrets and any URL's credentials in it masked. */
  key(key: string): string;
  /** A value as shown, under its dotted key (`app.db.password`, `app.hosts[0]`). */
  value(key: string, value: unknown): unknown;
  /** A mapping or a list as shown, each value under its own dotted key, each key masked. */
  tree(key: string, value: unknown): unknown;
}

// Deeper than any configuration is written: a cycle a bean's schema made, cut.
const MAX_DEPTH = 32;
// The most values one tree shows; past it, the rest is masked.
const MAX_VALUES = 10_000;

/**
 * How `env` and `configprops` show a configuration's values. With `never`, every value but `null`
 * is {@linkcode MASKED}. With `always`, so is the value of a key named like a secret (numbers
 * too) and every text holding what a `${file:}` placeholder read; URLs' credentials and the
 * configuration's secrets quoted elsewhere are masked in place (`postgres://***@db/shop`). Keys
 * are masked alike in both. What JSON cannot write (a `BigInt`, a function) is shown as text.
 */
export function valueShower(config: LoadedConfig, show: ShowValues): ValueShower {
  const secrets = configSecrets(config);
  const files = fileSecrets(config).filter((text) => text !== "");
  const numbers = numberSecrets(config.values);
  // A number under a secret's key is no text the other masks hide (`3600` would be masked in
  // every message), yet a mapping may have it as a key: such a key is masked where it is whole.
  const quoted: Mask = composeMasks(
    maskUrls,
    secretsMask(secrets),
    (text) => text.replace(/[^.[\]]+/g, (part) => numbers.has(part) ? "***" : part),
  );
  const inPlace: Mask = composeMasks(maskUrl, secretsMask(secrets));
  const value = (key: string, raw: unknown): unknown => {
    if (raw === null || raw === undefined) return null;
    if (show === "never" || isSecretKey(key)) return MASKED;
    const leaf = jsonLeaf(raw);
    if (typeof leaf !== "string") return leaf;
    return files.some((text) => leaf.includes(text)) ? MASKED : inPlace(leaf);
  };
  // `above` holds the objects on the way down, and `left` bounds the values one answer walks: an
  // object that refers to itself, or one shared at every level (YAML aliases, a bean's fields),
  // would otherwise be walked once per path, 2^depth times.
  let left = 0;
  const tree = (key: string, raw: unknown, above: readonly unknown[]): unknown => {
    if (above.length > MAX_DEPTH || above.includes(raw) || left-- <= 0) return MASKED;
    if (Array.isArray(raw)) {
      return raw.length === 0
        ? value(key, raw)
        : raw.map((v, i) => tree(`${key}[${i}]`, v, [...above, raw]));
    }
    if (!isPlainObject(raw) || Object.keys(raw).length === 0) return value(key, raw);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw)) {
      defineKey(out, quoted(k), tree(key === "" ? k : `${key}.${k}`, v, [...above, raw]));
    }
    return out;
  };
  return {
    key: quoted,
    value,
    tree: (key, raw) => {
      left = MAX_VALUES;
      return tree(key, raw, []);
    },
  };
}

// The numbers of three digits or more under a key named like a secret (`pin.password: 123456`),
// as text.
function numberSecrets(values: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (value: unknown, secret: boolean, depth: number): void => {
    if (typeof value === "number" || typeof value === "bigint") {
      if (secret && String(value).length >= 3) out.add(String(value));
    } else if (typeof value === "object" && value !== null && depth < MAX_DEPTH) {
      for (const [key, child] of Object.entries(value)) {
        walk(child, secret || isSecretKey(key), depth + 1);
      }
    }
  };
  walk(values, false, 0);
  return out;
}

/** Sets an own property, so that a `__proto__` key stays a key. */
export function defineKey(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

// A value as JSON writes it: text for what it would write as `null` or refuse.
function jsonLeaf(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "object":
      if (Array.isArray(value)) return [];
      if (isPlainObject(value)) return {};
      if (value instanceof Date) {
        return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
      }
      try {
        return String(value);
      } catch {
        return "(object)";
      }
    case "function":
      // Never its source text, which `String` gives.
      return "(function)";
    default:
      return String(value);
  }
}
