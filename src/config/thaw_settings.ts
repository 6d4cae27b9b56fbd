import {
  checkLateKeys,
  configLocation,
  configValue,
  type LoadedConfig,
} from "./application_config.ts";
import { shownValue } from "../shown_value.ts";
import { ConfigError } from "./config_error.ts";
import {
  type KeyDeclaration,
  keyDeclarations,
  MOVED_KEYS,
  RUNNER_SECTIONS,
  type SettingOf,
  SHARED_SECTIONS,
  type THAW_KEYS,
  THAW_SECTIONS,
  THAW_SUBSECTIONS,
} from "./thaw_keys.ts";
import type { MANAGEMENT_KEYS } from "./management_keys.ts";
import type { FORWARD_HEADERS_KEYS } from "./forward_headers_keys.ts";
import type { LOGGING_KEYS } from "./logging_keys.ts";
import type { TASK_KEYS } from "./task_keys.ts";
import type { KAFKA_KEYS } from "./kafka_keys.ts";
import type { JOB_KEYS } from "./job_keys.ts";
import type { SECURITY_KEYS } from "./security_keys.ts";
import type { BROADCAST_KEYS } from "./broadcast_keys.ts";
import type { SECURITY_SCHEME_KEYS } from "./security_scheme_keys.ts";
import { isMapping } from "../object_guards.ts";

/**
 * Every table of keys: the core's, and those its modules declare where they are imported (the
 * actuator's, the client address's, the logging feature's).
 */
type DeclaredKeys =
  & typeof THAW_KEYS
  & typeof MANAGEMENT_KEYS
  & typeof FORWARD_HEADERS_KEYS
  & typeof LOGGING_KEYS
  & typeof TASK_KEYS
  & typeof KAFKA_KEYS
  & typeof JOB_KEYS
  & typeof SECURITY_KEYS
  & typeof BROADCAST_KEYS
  & typeof SECURITY_SCHEME_KEYS;

/** A key Thaw reads. */
export type SettingKey = keyof DeclaredKeys;

/** The value a key is read as: its type, `undefined` where it has no default. */
export type Setting<K extends SettingKey> = SettingOf<DeclaredKeys, K>;

/**
 * Thaw's own settings, read once from the configuration: every declared key,
 * checked for its type, with its default where the configuration leaves it out. Readonly; the
 * rest of the code receives it instead of reading the configuration.
 */
export interface ThawSettings {
  /** A key's value, or its default. */
  get<K extends SettingKey>(key: K): Setting<K>;
  /** `file:line: key`: where a key is, for messages. */
  where(key: string): string;
  /** The active profiles. */
  readonly profiles: readonly string[];
  /** The configuration the settings were read from (for the sections of the app's own, `info`). */
  readonly config: LoadedConfig;
}

/**
 * The optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * neighbours (`prot` is one step from `port`).
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

// The declared keys, and every key that holds some (`server`, `management.endpoint.health`,
// `app.openapi`): made when asked, as an entry point's module may have declared more since. Read
// once per app and per unknown key: not worth keeping.
function tree(): { keys: ReadonlyMap<string, KeyDeclaration>; parents: ReadonlySet<string> } {
  const keys = new Map<string, KeyDeclaration>(keyDeclarations());
  const parents = new Set<string>();
  for (const key of keys.keys()) {
    const parts = key.split(".");
    for (let i = 1; i < parts.length; i++) parents.add(parts.slice(0, i).join("."));
  }
  return { keys, parents };
}

/** The keys one level under `parent`, declared or holding declared ones. */
function childrenOf(parent: string): string[] {
  const { keys, parents } = tree();
  const depth = parent.split(".").length + 1;
  return [...new Set([...keys.keys(), ...parents])]
    .filter((k) => k.startsWith(`${parent}.`) && k.split(".").length === depth);
}

/** The known key nearest to an unknown one, when it is near enough to be what was meant. */
export function nearestKey(key: string, candidates: readonly string[]): string | undefined {
  const name = key.slice(key.lastIndexOf(".") + 1);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate.slice(candidate.lastIndexOf(".") + 1));
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(1, Math.min(3, Math.floor(name.length / 3))) ? best : undefined;
}

/**
 * The name nearest to an unknown one, compared regardless of case (`Prices` is `prices`), when it
 * is near enough to be what was meant: a name of the app's own (a cache's, a decorator's option)
 * rather than a dotted key.
 */
export function nearestName(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(1, Math.min(3, Math.floor(name.length / 3))) ? best : undefined;
}

/**
 * Every key under Thaw's sections that Thaw does not read: each an error naming the key, where it
 * is and the key it may have been meant as.
 */
export function unknownKeys(config: LoadedConfig): string[] {
  const { keys, parents } = tree();
  const errors: string[] = [];
  const walk = (key: string, value: unknown): void => {
    if (keys.has(key) && !parents.has(key)) return;
    const moved = (MOVED_KEYS as Record<string, string | undefined>)[key];
    if (moved !== undefined && !parents.has(key)) {
      errors.push(`${configLocation(config, key)}: Thaw no longer reads this key: ${moved}`);
      return;
    }
    if (!parents.has(key)) {
      const parent = key.slice(0, key.lastIndexOf("."));
      const siblings = childrenOf(parent);
      const nearest = nearestKey(key, siblings);
      errors.push(
        `${configLocation(config, key)}: unknown key; ` +
          (nearest !== undefined
            ? `did you mean ${nearest}?`
            : siblings.length === 0
            ? `Thaw reads no key under ${parent} (so none of its keys would do anything)`
            : `the keys under ${parent} are ${
              siblings.map((k) => k.slice(parent.length + 1)).join(", ")
            }`),
      );
      return;
    }
    if (value === undefined || value === null) return;
    if (!isMapping(value)) {
      // A feature's own switch (`app.openapi: false`) is read by the feature.
      if (keys.has(key)) return;
      errors.push(
        `${configLocation(config, key)} must be a mapping of ${
          childrenOf(key).join(", ") || "keys"
        }`,
      );
      return;
    }
    for (const [child, v] of Object.entries(value)) {
      if (child.includes(".")) errors.push(dotted(`${key}.${child}`, child));
      else walk(`${key}.${child}`, v);
    }
  };
  // `health.enabled: true` under `management:` is one key holding a dot, which no reader takes for
  // `management.health.enabled`: it would be ignored without a word.
  const dotted = (key: string, written: string): string =>
    `${configLocation(config, key)}: a key holding "." is not read as nested keys; write ` +
    `${written.split(".").join(": ")}: on lines of their own, one under the other`;
  // A section none of whose keys is declared is an entry point's the app does not import
  // (`management` without the actuator): nothing reads it, so nothing there can mislead.
  for (const section of [...THAW_SECTIONS, ...THAW_SUBSECTIONS]) {
    if (parents.has(section)) walk(section, configValue(config.values, section));
  }
  for (const key of Object.keys(config.values)) {
    const section = key.slice(0, key.indexOf(".")).toLowerCase();
    if (key.includes(".") && [...THAW_SECTIONS, ...SHARED_SECTIONS].includes(section)) {
      errors.push(dotted(key, key));
    }
  }

  for (const section of SHARED_SECTIONS) {
    const value = configValue(config.values, section);
    if (!isMapping(value)) continue;
    const ours = childrenOf(section);
    for (const child of Object.keys(value)) {
      const key = `${section}.${child}`;
      if (ours.includes(key)) continue;
      // `openapi.enabled: false` under `app:` would leave the docs served without a word.
      if (child.includes(".") && ours.includes(`${section}.${child.split(".")[0]}`)) {
        errors.push(dotted(key, child));
        continue;
      }
      const nearest = nearestKey(key, ours);
      if (nearest !== undefined && fits(nearest, value[child])) {
        errors.push(`${configLocation(config, key)}: unknown key; did you mean ${nearest}?`);
      }
    }
  }
  return errors;
}

/** Whether a value has the shape a declared key (or a parent of declared keys) holds. */
function fits(key: string, value: unknown): boolean {
  const children = childrenOf(key);
  if (isMapping(value)) {
    // `enabled` alone is what any feature flag of the app's own holds (`app.openai.enabled`).
    const keys = Object.keys(value);
    return children.length > 0 && keys.some((k) => k !== "enabled") &&
      keys.every((k) => children.includes(`${key}.${k}`));
  }
  // A switch alone (`app.openai: false`) says nothing of which feature it is for.
  if (children.length > 0) return false;
  const declaration = tree().keys.get(key);
  switch (declaration?.type) {
    case "list":
      return typeof value === "string" ||
        (Array.isArray(value) && value.every((v) => typeof v === "string"));
    case "integer":
      return typeof value === "number" || /^\s*\d+\s*$/.test(String(value));
    case "boolean":
    case "feature":
      return typeof value === "boolean" || value === "true" || value === "false";
    case "string":
    case "choice":
      return typeof value === "string";
    default:
      return false;
  }
}

/** Top-level keys one or two edits from a section Thaw reads: likely meant as it. */
export function nearMissSections(config: LoadedConfig): string[] {
  const sections = [...THAW_SECTIONS, ...RUNNER_SECTIONS];
  const warnings: string[] = [];
  for (const key of Object.keys(config.values)) {
    if (sections.includes(key) || key === "app") continue;
    for (const section of sections) {
      const distance = editDistance(key.toLowerCase(), section);
      if (distance <= (section.length <= 5 ? 1 : 2)) {
        warnings.push(
          `${configLocation(config, key)}: not a section Thaw reads, so its keys are ignored; ` +
            `did you mean ${section}?`,
        );
        break;
      }
    }
  }
  return warnings;
}

/** One key's value checked against its declaration; `undefined` for a key left out. */
function readKey(config: LoadedConfig, key: string, declaration: KeyDeclaration): unknown {
  const value = configValue(config.values, key);
  if (value === undefined || value === null) return declaration.default;
  const where = configLocation(config, key);
  switch (declaration.type) {
    case "integer": {
      const { min = 0, max = Number.MAX_SAFE_INTEGER } = declaration;
      const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
      if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
        throw new ConfigError(
          `${where} must be an integer from ${min} to ${max}, got ${shownValue(value)}`,
        );
      }
      return n;
    }
    case "boolean": {
      if (typeof value === "boolean") return value;
      const text = typeof value === "string" ? value.trim() : undefined;
      if (text === "true" || text === "false") return text === "true";
      throw new ConfigError(`${where} must be true or false, got ${shownValue(value)}`);
    }
    case "string":
      if (typeof value !== "string") throw new ConfigError(`${where} must be text`);
      return value;
    case "choice":
      if (typeof value !== "string" || !declaration.choices.includes(value)) {
        throw new ConfigError(
          `${where} must be ${declaration.choices.join(" or ")}, got ${shownValue(value)}`,
        );
      }
      return value;
    case "list": {
      // An empty text is the empty list, as the same text from the environment is.
      const list = Array.isArray(value) ? value : value === "" ? [] : [value];
      if (!list.every((v) => typeof v === "string" && v !== "")) {
        throw new ConfigError(`${where} must be a text or a list of texts`);
      }
      return Object.freeze([...list]);
    }
    case "feature":
      return value;
  }
}

/**
 * Reads Thaw's settings from a configuration: every declared key checked for its type, every
 * unknown key under Thaw's sections refused (all of them in one `ConfigError`, each with its file,
 * line and nearest known key). A top-level key that looks like a misspelt section (`managment:`)
 * goes to `warn`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfig } from "./application_config.ts";
 * import { readSettings } from "./thaw_settings.ts";
 *
 * const settings = readSettings(resolveConfig({ server: { port: "9090" } }, () => undefined));
 * assert.equal(settings.get("server.port"), 9090);
 * assert.equal(settings.get("server.shutdown-timeout"), 30);
 * assert.throws(
 *   () => readSettings(resolveConfig({ server: { prot: 1 } }, () => undefined)),
 *   { message: "config: server.prot: unknown key; did you mean server.port?" },
 * );
 * ```
 */
export function readSettings(
  config: LoadedConfig,
  warn: (message: string) => void = () => {},
): ThawSettings {
  checkLateKeys(config);
  // Before the errors: `managment:` explains why `management.endpoint.health` did nothing.
  for (const warning of nearMissSections(config)) warn(warning);
  const errors = unknownKeys(config);
  if (errors.length === 1) throw new ConfigError(errors[0]);
  if (errors.length > 1) {
    throw new ConfigError(`${errors.length} unknown keys:\n  ${errors.join("\n  ")}`);
  }
  const values = new Map<string, unknown>();
  for (const [key, declaration] of keyDeclarations()) {
    values.set(key, readKey(config, key, declaration));
  }
  // Only what loadConfig read: a configuration object has no profile files to read.
  const profiles = config.profiles ?? [];
  if (
    config.profiles === undefined &&
    (values.get("thaw.profiles.active") as readonly string[]).length > 0
  ) {
    warn(
      `${configLocation(config, "thaw.profiles.active")} names profiles, but this configuration ` +
        `was not read by loadConfig, so no profile's file was read: none is active`,
    );
  }
  return Object.freeze({
    get: <K extends SettingKey>(key: K) => values.get(key) as Setting<K>,
    where: (key: string) => configLocation(config, key),
    profiles: Object.freeze([...profiles]),
    config,
  });
}
