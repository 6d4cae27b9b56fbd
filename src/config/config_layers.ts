import type { ConfigValues } from "./config_values.ts";
import { ConfigError } from "./config_error.ts";
import { keyAndParents } from "./key_line.ts";
import { isMapping } from "../object_guards.ts";

/** One file's keys, with the line of each (dotted, `list[0]` for items). */
export interface ConfigLayer {
  readonly values: ConfigValues;
  readonly lines: ReadonlyMap<string, number>;
  /** The file, for messages. */
  readonly source: string;
}

/** The layers merged: each key's line, and its file where that is not the first layer's. */
export interface MergedLayers {
  readonly values: ConfigValues;
  readonly lines: Map<string, number>;
  readonly origins: Map<string, string>;
}

/**
 * Merges configuration files, each over the ones before it: a mapping of a later file merges
 * into the same mapping of an earlier one key by key, anything else (a value, a list, a mapping
 * over a value) replaces what was there whole. Each key keeps the line of the file it now comes
 * from, so an error points at the file that set the value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeLayers } from "./config_layers.ts";
 *
 * const merged = mergeLayers([
 *   { source: "application.yml", values: { server: { port: 8080, hostname: "0.0.0.0" } },
 *     lines: new Map([["server", 1], ["server.port", 2], ["server.hostname", 3]]) },
 *   { source: "application-prod.yml", values: { server: { port: 80 } },
 *     lines: new Map([["server", 1], ["server.port", 2]]) },
 * ]);
 * assert.deepEqual(merged.values, { server: { port: 80, hostname: "0.0.0.0" } });
 * assert.equal(merged.origins.get("server.port"), "application-prod.yml");
 * assert.equal(merged.origins.get("server.hostname"), undefined);
 * ```
 */
export function mergeLayers(layers: readonly ConfigLayer[]): MergedLayers {
  // Which layer each replaced key (and everything under it) comes from; the first layer owns the
  // rest. A key belongs to the latest layer that replaced it or a key above it: later layers have
  // higher numbers, so that is the highest number on its way up.
  const owners = new Map<string, number>();
  let values: ConfigValues = {};
  layers.forEach((layer, i) => {
    values = mergeInto(values, layer.values, "", i, owners) as ConfigValues;
  });
  const ownerOf = (key: string): number =>
    Math.max(0, ...keyAndParents(key).map((k) => owners.get(k) ?? 0));
  const lines = new Map<string, number>();
  const origins = new Map<string, string>();
  layers.forEach((layer, i) => {
    for (const [key, line] of layer.lines) {
      if (ownerOf(key) !== i) continue;
      lines.set(key, line);
      if (i > 0) origins.set(key, layer.source);
    }
  });
  return { values, lines, origins };
}

function mergeInto(
  base: unknown,
  over: unknown,
  key: string,
  layer: number,
  owners: Map<string, number>,
): unknown {
  if (!isMapping(base) || !isMapping(over)) {
    if (key !== "") owners.set(key, layer);
    return over;
  }
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const child = key === "" ? k : `${key}.${k}`;
    const merged = Object.hasOwn(base, k) ? mergeInto(base[k], v, child, layer, owners) : v;
    if (!Object.hasOwn(base, k)) owners.set(child, layer);
    Object.defineProperty(out, k, {
      value: merged,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

// A profile names a file beside application.yml: no path, no dot at the start.
const PROFILE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * The active profiles from a list or a comma-separated text (`dev, local`), each checked: a
 * profile becomes part of a file name. Empty items are dropped; a name given twice counts once.
 */
export function profileList(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  const items = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(items) || !items.every((item) => typeof item === "string")) {
    throw new ConfigError(
      `${where} must be a list of profile names, or one text of names separated by commas`,
    );
  }
  const names: string[] = [];
  for (const item of items.map((i: string) => i.trim()).filter((i: string) => i !== "")) {
    if (!PROFILE.test(item)) {
      throw new ConfigError(
        `${where}: ${JSON.stringify(item)} is not a profile name (letters, digits, _ . -, ` +
          `starting with a letter or a digit)`,
      );
    }
    if (!names.includes(item)) names.push(item);
  }
  return names;
}

/** `application.yml` and `prod`: `application-prod.yml`, beside it. */
export function profileFileName(file: string, profile: string): string {
  const slash = Math.max(file.lastIndexOf("/"), file.lastIndexOf("\\"));
  const dot = file.lastIndexOf(".");
  return dot > slash + 1
    ? `${file.slice(0, dot)}-${profile}${file.slice(dot)}`
    : `${file}-${profile}`;
}
