import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import {
  type Differences,
  diffJson,
  IN_FILE_ONLY,
  type Rules,
  type Step,
  walk,
} from "./json_diff.ts";

/**
 * Drift rules for index settings, of a template and of an index (checked on an OpenSearch 2.19
 * node; docs/migrations-reference.md, "Drift"):
 * - Settings are flattened to dotted keys with the `index.` prefix, their scalar values as text:
 *   the cluster answers `{"index": {"number_of_shards": "1"}}` to `{"number_of_shards": 1}`, and
 *   `"true"` to `true`. Nested and dotted forms are the same setting.
 * - An index is compared on the settings its file sets (the cluster adds `uuid`,
 *   `creation_date`, ...); a static setting cannot change on a live index.
 */

// Deeper settings than this are not flattened further (the cluster has none): a hostile body
// cannot make the flattened keys grow with the square of its depth.
const MAX_SETTINGS_DEPTH = 64;

/**
 * Index settings that cannot change on an open index (OpenSearch's static index settings, as
 * `PUT /{index}/_settings` refuses them with "Can't update non dynamic settings"). A key is static
 * when it is one of these or starts with one followed by `.`.
 */
const STATIC_SETTINGS = [
  "index.number_of_shards",
  "index.number_of_routing_shards",
  "index.routing_partition_size",
  "index.shard.check_on_startup",
  "index.codec",
  "index.soft_deletes.enabled",
  "index.load_fixed_bitset_filters_eagerly",
  "index.merge.policy",
  "index.replication.type",
  "index.remote_store",
  "index.sort",
  "index.store.type",
  "index.store.preload",
  "index.analysis",
  "index.similarity",
  "index.knn",
  "index.mapping.nested_objects",
  "index.provided_name",
  "index.uuid",
  "index.creation_date",
  "index.version",
];

/** Whether `key` (flattened, `index.`-prefixed) is a static index setting. */
export function isStaticSetting(key: string): boolean {
  return STATIC_SETTINGS.some((s) => key === s || key.startsWith(`${s}.`));
}

const STATIC_NOTE = "a static setting: it cannot change on a live index; needs a reindex migration";

/** A setting's value as the cluster returns it: scalars as text, lists of them as lists of text. */
function settingValue(value: unknown): unknown {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map((v) => isJsonObject(v) ? v : settingValue(v));
  return value;
}

/**
 * Settings as the cluster returns them with `flat_settings`: each leaf under its dotted key,
 * `index.`-prefixed (`number_of_shards` and `{"index": {"number_of_shards": 1}}` are both
 * `index.number_of_shards`), scalar values as text. An empty object sets nothing. Iterative.
 */
export function flattenSettings(settings: unknown): Map<string, unknown> {
  const flat = new Map<string, unknown>();
  if (!isJsonObject(settings)) return flat;
  const stack: [string, JsonObject, number][] = [["", settings, 0]];
  while (stack.length > 0) {
    const [prefix, object, depth] = stack.pop()!;
    for (const key of Object.keys(object)) {
      const name = prefix === "" ? key : `${prefix}.${key}`;
      const value = object[key];
      if (isJsonObject(value) && depth < MAX_SETTINGS_DEPTH) stack.push([name, value, depth + 1]);
      else {flat.set(
          name === "index" || name.startsWith("index.") ? name : `index.${name}`,
          settingValue(value),
        );}
    }
  }
  return flat;
}

/**
 * Settings as one JSON object, flattened ({@linkcode flattenSettings}) and sorted by key, each key
 * an own data property: the form a template's settings are compared in.
 */
export function settingsForm(settings: unknown): JsonObject {
  return Object.fromEntries(
    [...flattenSettings(settings)].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
  );
}

/** The settings of `file` that differ from the live ones (flattened keys): what to send again. */
export function differingSettings(file: unknown, cluster: unknown): string[] {
  const live = flattenSettings(cluster);
  const keys: string[] = [];
  for (const [key, value] of flattenSettings(file)) {
    if (value === null) continue; // resets a setting to its default: nothing is kept to compare
    if (!live.has(key)) {
      keys.push(key);
      continue;
    }
    if (diffJson(value, live.get(key)).length > 0) keys.push(key);
  }
  return keys;
}

/**
 * Adds to `out` how a live index's settings differ from those its file sets, under `settings.`:
 * each setting the file sets compared with the live one (one set to `null` resets it: not
 * compared); a static one cannot be changed by applying the file again.
 */
export function diffIndexSettings(file: unknown, cluster: unknown, out: Differences): void {
  const live = flattenSettings(cluster);
  for (const [key, value] of flattenSettings(file)) {
    if (value === null) continue;
    const step: Step = { key, parent: { key: "settings" } };
    const staticOne = isStaticSetting(key);
    const rules: Rules = {
      extras: "report",
      classify: () => staticOne ? { note: STATIC_NOTE, fixable: false } : { fixable: true },
    };
    if (!live.has(key)) {
      out.add(step, IN_FILE_ONLY, !staticOne, staticOne ? STATIC_NOTE : undefined);
    } else walk(value, live.get(key), step, rules, out);
  }
}
