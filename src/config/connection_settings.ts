import { isMapping } from "../object_guards.ts";
import { configLocation, configValue, type LoadedConfig } from "./application_config.ts";
import { ConfigError } from "./config_error.ts";
import { maskUrl, maskUrls } from "./secrets_mask.ts";
import { definedFields } from "../defined_fields.ts";

/** A connection's `migrations.placeholders`: name → the text that replaces `${name}`. */
export type Placeholders = ReadonlyMap<string, string>;

/** What a placeholder's name may be, in a migration file and in the configuration. */
export const PLACEHOLDER_NAME: RegExp = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** One entry of a connection list, checked for its shape, its keys and its name. */
export interface ConnectionEntry {
  readonly name: string;
  readonly values: Readonly<Record<string, unknown>>;
  /** The entry's `migrations` mapping (`{}` when absent). */
  readonly migrations: Readonly<Record<string, unknown>>;
  readonly migrationsEnabled: boolean;
  /**
   * `migrations.strict_order`: a pending file that sorts before an applied one is an error. Its
   * default is `migrations.flyway_compatible`.
   */
  readonly strictOrder: boolean;
  /**
   * `migrations.flyway_compatible`: Flyway's validate-on-migrate, so `migrate` refuses, before it
   * writes anything, an applied versioned file that was edited or is gone.
   */
  readonly validateOnMigrate: boolean;
  /**
   * `migrations.placeholders`: what replaces `${name}` in its migration files. Absent (or empty
   * of entries), files are taken as written: upgrading changes no file that holds a `${`.
   */
  readonly placeholders?: Placeholders;
  /** `file:line: key` of a key of this entry, for messages. */
  at(key: string): string;
}

/** What a connection list accepts. */
export interface EntryRules {
  readonly keys: ReadonlySet<string>;
  readonly migrationKeys: ReadonlySet<string>;
  /** What an entry is, for messages. */
  readonly kind: "connection" | "datasource";
  /** What an entry needs, for messages: `name and hosts`. */
  readonly needs: string;
}

// The name is a folder under the migrations root and part of record ids: no path tricks.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * Reads the list under `key`: every item a mapping of known keys with a unique folder-safe
 * `name`. Every error names the file, the line and the key, so it can be fixed without guessing.
 */
export function connectionEntries(
  config: LoadedConfig,
  key: string,
  rules: EntryRules,
): ConnectionEntry[] {
  const list = configValue(config.values, key);
  if (!Array.isArray(list)) {
    throw new ConfigError(
      `${configLocation(config, key)} must be a list (- name: ..., with ${rules.needs})`,
    );
  }
  const seen = new Set<string>();
  return list.map((item: unknown, i) => {
    const at = (k: string) =>
      configLocation(config, k === "" ? `${key}[${i}]` : `${key}[${i}].${k}`);
    if (!isMapping(item)) {
      throw new ConfigError(`${at("")} must be a mapping with ${rules.needs}`);
    }
    for (const k of Object.keys(item)) {
      if (!rules.keys.has(k)) throw new ConfigError(`${at(k)} is not a ${rules.kind} setting`);
    }
    const name = item.name;
    if (typeof name !== "string" || !NAME.test(name)) {
      throw new ConfigError(
        `${at("name")} must be a folder name (letters, digits, _ . -), got ${shown(name)}`,
      );
    }
    if (seen.has(name)) throw new ConfigError(`${at("name")}: "${name}" is used twice`);
    seen.add(name);
    const migrations = item.migrations ?? {};
    if (!isMapping(migrations)) {
      throw new ConfigError(
        `${at("migrations")} must be a mapping (${[...rules.migrationKeys].join(", ")})`,
      );
    }
    for (const k of Object.keys(migrations)) {
      if (!rules.migrationKeys.has(k)) {
        throw new ConfigError(`${at(`migrations.${k}`)} is not a migrations setting`);
      }
    }
    // Flyway's defaults in one switch; an explicit strict_order still wins, as outOfOrder does.
    const flyway = booleanSetting(
      migrations.flyway_compatible,
      false,
      at("migrations.flyway_compatible"),
    );
    const migrationsEnabled = booleanSetting(migrations.enabled, false, at("migrations.enabled"));
    const strictOrder = booleanSetting(
      migrations.strict_order,
      flyway,
      at("migrations.strict_order"),
    );
    const placeholders = placeholderSetting(migrations.placeholders, at);
    return {
      name,
      values: item,
      migrations,
      migrationsEnabled,
      strictOrder,
      validateOnMigrate: flyway,
      ...definedFields({ placeholders }),
      at,
    };
  });
}

/**
 * `migrations.placeholders`: a mapping of name to text; a number or a boolean stands for its text
 * (`shards: 2` is "2"). A value is never shown in a message: it may be a secret (a password for a
 * CREATE USER).
 */
function placeholderSetting(
  value: unknown,
  at: (key: string) => string,
): Placeholders | undefined {
  // `placeholders:` with every entry commented out is none, as other empty settings are.
  if (value === undefined || value === null) return undefined;
  const placeholders = new Map<string, string>();
  if (!isMapping(value)) {
    throw new ConfigError(
      `${at("migrations.placeholders")} must be a mapping of name: value (prefix: dev_), got ${
        kind(value)
      }`,
    );
  }
  for (const [name, v] of Object.entries(value)) {
    const where = at(`migrations.placeholders.${name}`);
    if (!PLACEHOLDER_NAME.test(name)) {
      throw new ConfigError(
        `${where} is not a placeholder name: letters, digits, _ . -, starting with a letter or _`,
      );
    }
    if (typeof v === "string") placeholders.set(name, v);
    else if (typeof v === "boolean" || Number.isSafeInteger(v)) placeholders.set(name, String(v));
    else if (typeof v === "number" && Number.isFinite(v)) {
      // YAML read `1.10` as 1.1 and `123456789012345678` as ...680: the text is gone.
      throw new ConfigError(
        `${where} is a number YAML may not keep as written (only whole numbers up to 2^53 are): ` +
          `write it in quotes`,
      );
    } else {
      throw new ConfigError(`${where} must be a string, a number or true/false, got ${kind(v)}`);
    }
  }
  // An empty mapping is none, as the absent key is: files are taken as written.
  return placeholders.size === 0 ? undefined : placeholders;
}

/** What a value is, without showing it. */
function kind(value: unknown): string {
  if (value === undefined || value === null) return 'nothing (write "" for an empty value)';
  if (Array.isArray(value)) return "a list";
  if (typeof value === "number") return "a number that is not finite";
  return typeof value === "object" ? "a mapping" : `a ${typeof value}`;
}

/**
 * A value for a message. Secrets are masked before the text is built (see `maskUrl`): every
 * userinfo and password-like URL parameter, whatever the shape of the URL, so no password is
 * printed. Each string is masked whole, also inside a list or a mapping.
 */
export function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(maskUrl(value));
  const text = JSON.stringify(value, (_key, v) => typeof v === "string" ? maskUrl(v) : v) ??
    String(value);
  // Keys too: YAML splits `https://admin: pw@host` (a space after the colon) into a mapping.
  return maskUrls(text);
}

/** An optional string; a secret's value never appears in the message. */
export function optionalString(value: unknown, where: string, secret = false): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && !secret) return String(value);
  if (typeof value !== "string") {
    throw new ConfigError(`${where} must be a string${secret ? "" : `, got ${shown(value)}`}`);
  }
  return value;
}

/** `true`/`false`, also as strings (from `${VAR}`). */
export function booleanSetting(value: unknown, fallback: boolean, where: string): boolean {
  if (value === undefined || value === null) return fallback;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  throw new ConfigError(`${where} must be true or false, got ${shown(value)}`);
}
