import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { asIs, type Redact, renderValue } from "../render_value.ts";

/**
 * Drift: how a live template, policy, index or alias differs from the file that defines it. Pure
 * (no I/O): each `compare*` function takes what the file sends (placeholders replaced) and what
 * the cluster answers to a GET, brings both to one form, the cluster's, and lists the differences.
 *
 * The rules, each checked on an OpenSearch 2.19 node (docs/migrations-reference.md, "Drift"):
 * - Settings are flattened to dotted keys with the `index.` prefix, their scalar values as text:
 *   the cluster answers `{"index": {"number_of_shards": "1"}}` to `{"number_of_shards": 1}`, and
 *   `"true"` to `true`. Nested and dotted forms are the same setting.
 * - A template is compared whole, on what a PUT sets: `index_patterns` (a string is a list of one),
 *   `template.settings` / `mappings` / `aliases`, `composed_of` (absent is `[]`), `priority`,
 *   `version`, `_meta`, `data_stream` (`{}` gains `timestamp_field: {name: "@timestamp"}`). Empty
 *   `template`, `settings`, `mappings` and `aliases` are dropped; a key the cluster has that the
 *   file does not is a difference.
 * - An index is compared on the settings the file sets (the cluster adds `uuid`, `creation_date`,
 *   ...), on its mappings (a key the cluster adds is no difference, but a field, a key under any
 *   `properties` or `fields`, that the file does not declare is), and on the aliases the file
 *   names (`routing` is `index_routing` and `search_routing`).
 * - A policy is compared on what the file sets; `policy_id`, `last_updated_time`,
 *   `schema_version`, sequence numbers and what ISM adds (an action's `retry`) are not compared.
 * - Scalars are equal when their text is: the cluster answers `10` to `"10"` in a mapping, `7` to
 *   a template's `"priority": "7"`, `false` to `"false"`.
 *
 * Live bodies are untrusted: no key is ever assigned to a plain object (`__proto__` stays a key),
 * nothing recurses on the cluster's depth, and the list of differences is bounded.
 */

/** One way a live resource differs from its file. */
export interface Difference {
  /** Where, dotted: `template.settings.index.number_of_shards`; `""` for the resource itself. */
  readonly path: string;
  /** As the report shows it: `template.settings.index.number_of_shards: file "1", cluster "2"`. */
  readonly text: string;
  /**
   * Whether applying the file again can change it: not a static setting of a live index, a field
   * its file does not declare, or a field's type.
   */
  readonly fixable: boolean;
}

/** At most this many differences per resource are listed; the rest are counted. */
export const MAX_DIFFERENCES = 50;

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
const EXTRA_FIELD_NOTE = "needs a reindex migration: a field cannot be removed from a live index";
const TYPE_NOTE = "needs a reindex migration: a field's type cannot change on a live index";

// ---------------------------------------------------------------------------------------------
// Settings

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

// A flattened settings map as one JSON object, with its keys as own data properties.
function settingsObject(flat: Map<string, unknown>): JsonObject {
  return Object.fromEntries([...flat].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Rendering

const PLAIN_KEY = /^[A-Za-z0-9_@$][A-Za-z0-9_@$.\-]{0,99}$/;

/** One step of a path, linked to its parent: a path is never copied while walking. */
interface Step {
  readonly key: string | number;
  readonly parent?: Step;
  /**
   * In a mapping, whether the key names a field: it is under a `properties` or `fields` that is
   * itself a parameter, not a field of that name.
   */
  readonly field?: boolean;
}

// The step of `key` under `parent`, knowing whether it names a field of a mapping.
function child(parent: Step | undefined, key: string | number): Step {
  const field = typeof key === "string" && holdsFields(parent);
  return field ? { key, parent, field } : { key, parent };
}

// `properties` and `fields` parameters hold fields; a field named so holds parameters.
function holdsFields(step: Step | undefined): boolean {
  return step !== undefined && step.field !== true &&
    (step.key === "properties" || step.key === "fields");
}

function pathText(step: Step | undefined, redact: Redact = asIs): string {
  const parts: string[] = [];
  for (let s = step; s !== undefined; s = s.parent) {
    const key = typeof s.key === "number" ? s.key : redact(s.key);
    parts.push(
      typeof key === "number"
        ? `[${key}]`
        : PLAIN_KEY.test(key)
        ? `.${key}`
        : `[${JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key)}]`,
    );
  }
  const text = parts.reverse().join("");
  return text.startsWith(".") ? text.slice(1) : text;
}

// ---------------------------------------------------------------------------------------------
// Comparing

/** What a difference is, for the notes and whether a re-apply can change it. */
type Kind = "changed" | "missing" | "extra";

/** What a comparison reports, and what it may leave out. */
interface Rules {
  /**
   * A key the cluster has and the file does not: `report` it, `ignore` it (defaults the cluster
   * adds), or report it only as a field (`fields`: under `properties` or `fields`).
   */
  readonly extras: "report" | "ignore" | "fields";
  /** A note and whether a re-apply can change it; default: no note, fixable. */
  readonly classify?: (step: Step, kind: Kind) => { note?: string; fixable: boolean };
  /**
   * A key of the file the cluster does not have that is no difference: the cluster leaves out a
   * mapping parameter at its default value. `object` is the file's object that holds it.
   */
  readonly absentIsDefault?: (
    key: string,
    value: unknown,
    object: JsonObject,
    step: Step,
  ) => boolean;
}

/** Collects differences, at most {@linkcode MAX_DIFFERENCES}; the rest are counted. */
class Differences {
  readonly list: Difference[] = [];
  more = 0;
  moreFixable = false;

  constructor(readonly redact: Redact = asIs) {}

  /** `value` as a message shows it. */
  show(value: unknown): string {
    return renderValue(value, 80, this.redact);
  }

  add(step: Step | undefined, body: string, fixable: boolean, note?: string): void {
    if (this.list.length >= MAX_DIFFERENCES) {
      this.more++;
      this.moreFixable ||= fixable;
      return;
    }
    const path = pathText(step, this.redact);
    const text = `${path === "" ? "" : `${path}: `}${body}${
      note === undefined ? "" : ` (${note})`
    }`;
    this.list.push({ path, text, fixable });
  }

  done(): Difference[] {
    if (this.more === 0) return this.list;
    return [...this.list, {
      path: "",
      text: `and ${this.more} more difference(s)`,
      fixable: this.moreFixable,
    }];
  }
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** Two scalars are the same when their text is: `10` and `"10"`, `false` and `"false"`. */
function sameScalar(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const x = scalarText(a);
  return x !== undefined && x === scalarText(b);
}

/**
 * Walks `file` and `cluster` side by side, without recursion: objects key by key (in the file's
 * order, then the cluster's extra keys), lists of one length item by item, anything else as a
 * scalar. Only what both sides hold as objects or lists is descended into.
 */
function walk(
  file: unknown,
  cluster: unknown,
  at: Step | undefined,
  rules: Rules,
  out: Differences,
) {
  const report = (step: Step | undefined, kind: Kind, body: string) => {
    const c = step === undefined
      ? { fixable: true }
      : rules.classify?.(step, kind) ?? { fixable: true };
    out.add(step, body, c.fixable, c.note);
  };
  const stack: [unknown, unknown, Step | undefined][] = [[file, cluster, at]];
  while (stack.length > 0) {
    const [f, c, step] = stack.pop()!;
    if (isJsonObject(f) && isJsonObject(c)) {
      const next: [unknown, unknown, Step | undefined][] = [];
      for (const key of Object.keys(f)) {
        const sub: Step = child(step, key);
        if (Object.hasOwn(c, key)) next.push([f[key], c[key], sub]);
        else if (!rules.absentIsDefault?.(key, f[key], f, sub)) {
          next.push([f[key], MISSING, sub]);
        }
      }
      if (rules.extras === "report" || (rules.extras === "fields" && holdsFields(step))) {
        for (const key in c) {
          if (Object.hasOwn(c, key) && !Object.hasOwn(f, key)) {
            next.push([EXTRA, c[key], child(step, key)]);
          }
        }
      }
      for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
    } else if (c === MISSING) {
      report(step, "missing", "in the file, not in the cluster");
    } else if (f === EXTRA) {
      report(step, "extra", "in the cluster, not in the file");
    } else if (Array.isArray(f) && Array.isArray(c) && f.length === c.length) {
      for (let i = f.length - 1; i >= 0; i--) stack.push([f[i], c[i], child(step, i)]);
    } else if (
      Array.isArray(f) || Array.isArray(c) || isJsonObject(f) || isJsonObject(c) ||
      !sameScalar(f, c)
    ) {
      report(step, "changed", `file ${out.show(f)}, cluster ${out.show(c)}`);
    }
  }
}

// Markers for a key one side lacks.
const MISSING = Symbol("missing");
const EXTRA = Symbol("extra");

// ---------------------------------------------------------------------------------------------
// Templates

function aliasForm(alias: unknown): unknown {
  if (!isJsonObject(alias) || !Object.hasOwn(alias, "routing")) return alias;
  const { routing, ...rest } = alias;
  return {
    ...rest,
    index_routing: Object.hasOwn(alias, "index_routing") ? alias.index_routing : routing,
    search_routing: Object.hasOwn(alias, "search_routing") ? alias.search_routing : routing,
  };
}

function aliasesForm(aliases: unknown): unknown {
  if (!isJsonObject(aliases)) return aliases;
  return Object.fromEntries(Object.entries(aliases).map(([k, v]) => [k, aliasForm(v)]));
}

const isEmptyObject = (v: unknown) => isJsonObject(v) && Object.keys(v).length === 0;

/**
 * A composable template as the cluster returns it (`GET /_index_template/{name}`, the
 * `index_template` of the entry): see the module's rules. Taking the cluster's own answer to this
 * form changes nothing that matters, so both sides go through it.
 */
export function templateForm(body: unknown): unknown {
  if (!isJsonObject(body)) return body;
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === "index_patterns" && typeof value === "string") entries.push([key, [value]]);
    else if (key === "composed_of" && Array.isArray(value) && value.length === 0) continue;
    else if (
      key === "data_stream" && isJsonObject(value) && !Object.hasOwn(value, "timestamp_field")
    ) {
      entries.push([key, { ...value, timestamp_field: { name: "@timestamp" } }]);
    } else if (key === "template" && isJsonObject(value)) {
      const inner: [string, unknown][] = [];
      for (const [k, v] of Object.entries(value)) {
        const form = k === "settings" && isJsonObject(v)
          ? settingsObject(flattenSettings(v))
          : k === "aliases"
          ? aliasesForm(v)
          : v;
        if (!((k === "settings" || k === "mappings" || k === "aliases") && isEmptyObject(form))) {
          inner.push([k, form]);
        }
      }
      if (inner.length > 0) entries.push([key, Object.fromEntries(inner)]);
    } else entries.push([key, value]);
  }
  return Object.fromEntries(entries);
}

/**
 * How a live composable template differs from the body its file sends (`index_template` of
 * `GET /_index_template/{name}`). Compared whole: a key either side lacks is a difference.
 */
export function compareTemplate(
  file: unknown,
  cluster: unknown,
  redact: Redact = asIs,
): Difference[] {
  const out = new Differences(redact);
  walk(templateForm(file), templateForm(cluster), undefined, { extras: "report" }, out);
  return out.done();
}

// ---------------------------------------------------------------------------------------------
// Indices

/** What an index file (or a reindex file's new index) declares, amendments merged in. */
export interface IndexDefinition {
  readonly settings?: unknown;
  readonly mappings?: unknown;
  readonly aliases?: unknown;
}

/** The parts of `GET /{index}` that are compared. */
export interface LiveIndex {
  readonly settings?: unknown;
  readonly mappings?: unknown;
  readonly aliases?: unknown;
  /** Aliases the file names that the index lacks but other indices hold (after a rollover). */
  readonly movedAliases?: Readonly<Record<string, readonly string[]>>;
}

// Under a `properties` or `fields` parameter, a key is a field: `a.properties.b` is field b of a.
function isFieldStep(step: Step): boolean {
  return step.field === true;
}

/**
 * Mapping parameters at their default value, which the node leaves out of `GET /{index}` even when
 * the file sets them (seen on 2.19: `doc_values: true`, `index: true`, `store: false`,
 * `ignore_above: 2147483647` on a keyword, `norms: true` on a text, `type: object` beside
 * `properties`, `_source: {enabled: true}`...). Some depend on the field's type.
 */
const MAPPING_DEFAULTS: Readonly<Record<string, readonly unknown[]>> = {
  index: [true],
  doc_values: [true],
  store: [false],
  eager_global_ordinals: [false],
  ignore_above: [2147483647],
  fielddata: [false],
  enabled: [true],
  null_value: [null],
  ignore_malformed: [false],
  coerce: [true],
  boost: [1],
  index_phrases: [false],
  split_queries_on_whitespace: [false],
  position_increment_gap: [100],
  similarity: ["BM25"],
  term_vector: ["no"],
  dynamic: [true],
  include_in_parent: [false],
  include_in_root: [false],
  required: [false],
  type: ["object"],
  format: ["strict_date_optional_time||epoch_millis"],
};

function isMappingDefault(key: string, value: unknown, object: JsonObject): boolean {
  if (isJsonObject(value)) {
    // `_source: {enabled: true}`, `_routing: {required: false}`: an object of defaults.
    return Object.entries(value).every(([k, v]) => isMappingDefault(k, v, value));
  }
  const type = object.type;
  if (key === "norms") return sameScalar(value, type === "text" || type === "match_only_text");
  if (key === "index_options") {
    return sameScalar(value, type === "text" || type === "match_only_text" ? "positions" : "docs");
  }
  return Object.hasOwn(MAPPING_DEFAULTS, key) &&
    MAPPING_DEFAULTS[key].some((d) => d === null ? value === null : sameScalar(value, d));
}

// A parameter left out at its default; a field, never.
const absentMappingDefault = (key: string, value: unknown, object: JsonObject, step: Step) =>
  !isFieldStep(step) && isMappingDefault(key, value, object);

/**
 * The node expands a dotted field name of an index mapping into objects (`"user.name": {...}` is
 * `"user": {"properties": {"name": {...}}}`); a template keeps it as written. Only the file's side
 * needs it, and only where the file has a dot.
 */
export function expandDottedFields(mappings: unknown): unknown {
  if (!isJsonObject(mappings)) return mappings;
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(mappings)) {
    if (key === "properties" && isJsonObject(value)) entries.push([key, expandProperties(value)]);
    else if (key === "fields" && isJsonObject(value)) entries.push([key, expandProperties(value)]);
    else entries.push([key, value]);
  }
  return Object.fromEntries(entries);
}

function expandProperties(properties: JsonObject): JsonObject {
  const out = new Map<string, unknown>();
  for (const [name, definition] of Object.entries(properties)) {
    const parts = name.split(".");
    // `a.`, `.a` and `a..b` are not expanded: the node refuses them anyway.
    const [head, ...rest] = parts.some((p) => p === "") ? [name] : parts;
    const value = rest.length === 0
      ? expandDottedFields(definition)
      : { properties: expandProperties(Object.fromEntries([[rest.join("."), definition]])) };
    out.set(head, out.has(head) ? mergeObjects(out.get(head), value) : value);
  }
  return Object.fromEntries(out);
}

function mergeObjects(a: unknown, b: unknown): unknown {
  if (!isJsonObject(a) || !isJsonObject(b)) return b;
  const out = new Map<string, unknown>(Object.entries(a));
  for (const [k, v] of Object.entries(b)) out.set(k, out.has(k) ? mergeObjects(out.get(k), v) : v);
  return Object.fromEntries(out);
}

const classifyMapping = (step: Step, kind: Kind): { note?: string; fixable: boolean } => {
  if (kind === "extra" && isFieldStep(step)) return { note: EXTRA_FIELD_NOTE, fixable: false };
  if (
    kind === "changed" && step.key === "type" && step.parent !== undefined &&
    isFieldStep(step.parent)
  ) {
    return { note: TYPE_NOTE, fixable: false };
  }
  return { fixable: true };
};

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
    const out = new Differences();
    walk(value, live.get(key), undefined, { extras: "report" }, out);
    if (out.list.length > 0) keys.push(key);
  }
  return keys;
}

/**
 * How a live index differs from what its file declares: the settings the file sets (each compared
 * with the live one), the mappings (a field the file does not declare is a difference, another
 * key the cluster adds is not), and the aliases the file names. A part the file does not declare
 * is not compared.
 */
export function compareIndex(
  file: IndexDefinition,
  cluster: LiveIndex,
  redact: Redact = asIs,
): Difference[] {
  const out = new Differences(redact);
  if (file.settings !== undefined) {
    const live = flattenSettings(cluster.settings);
    for (const [key, value] of flattenSettings(file.settings)) {
      if (value === null) continue;
      const step: Step = { key, parent: { key: "settings" } };
      const staticOne = isStaticSetting(key);
      const rules: Rules = {
        extras: "report",
        classify: () => staticOne ? { note: STATIC_NOTE, fixable: false } : { fixable: true },
      };
      if (!live.has(key)) {
        out.add(
          step,
          "in the file, not in the cluster",
          !staticOne,
          staticOne ? STATIC_NOTE : undefined,
        );
      } else walk(value, live.get(key), step, rules, out);
    }
  }
  if (file.mappings !== undefined) {
    walk(expandDottedFields(file.mappings), cluster.mappings ?? {}, { key: "mappings" }, {
      extras: "fields",
      classify: classifyMapping,
      absentIsDefault: absentMappingDefault,
    }, out);
  }
  if (isJsonObject(file.aliases)) {
    const live = isJsonObject(cluster.aliases) ? cluster.aliases : {};
    for (const [name, alias] of Object.entries(file.aliases)) {
      const step: Step = { key: name, parent: { key: "aliases" } };
      const movedTo = cluster.movedAliases?.[name];
      if (!Object.hasOwn(live, name) && movedTo !== undefined && movedTo.length > 0) {
        // Added back here, it would span two indices, and writes through it would fail.
        out.add(
          step,
          `now on ${movedTo.slice(0, 5).map((n) => JSON.stringify(n)).join(", ")}` +
            `${movedTo.length > 5 ? ` and ${movedTo.length - 5} more` : ""} (moved by a ` +
            "rollover or by hand): applying the file again would make it span two indices",
          false,
        );
      } else if (!Object.hasOwn(live, name)) {
        out.add(step, "in the file, not in the cluster", true);
      } else walk(aliasForm(alias), aliasForm(live[name]), step, { extras: "report" }, out);
    }
  }
  return out.done();
}

/**
 * The top-level keys of the file's mappings whose subtree differs from the live one, each as the
 * body that sends it alone: `{"properties": {"note": {...}}}`, `{"dynamic": "strict"}`. What
 * `PUT /{index}/_mapping` is tried with, one by one, when the whole mapping is refused.
 */
export function differingMappingParts(mappings: unknown, cluster: unknown): JsonObject[] {
  const file = expandDottedFields(mappings);
  if (!isJsonObject(file)) return [];
  const live = isJsonObject(cluster) ? cluster : {};
  const parts: JsonObject[] = [];
  const differs = (f: unknown, c: unknown, at: Step) => {
    const out = new Differences();
    walk(f, c, at, {
      extras: "fields",
      classify: classifyMapping,
      absentIsDefault: absentMappingDefault,
    }, out);
    return out.list.some((d) => d.fixable);
  };
  for (const [key, value] of Object.entries(file)) {
    if (key === "properties" && isJsonObject(value)) {
      const props = isJsonObject(live.properties) ? live.properties : {};
      for (const [field, definition] of Object.entries(value)) {
        const at = child(child({ key: "mappings" }, "properties"), field);
        if (!Object.hasOwn(props, field) || differs(definition, props[field], at)) {
          parts.push({ properties: Object.fromEntries([[field, definition]]) });
        }
      }
    } else if (
      Object.hasOwn(live, key)
        ? differs(value, live[key], child({ key: "mappings" }, key))
        : !isMappingDefault(key, value, file)
    ) {
      parts.push(Object.fromEntries([[key, value]]));
    }
  }
  return parts;
}

/** The aliases the file names that the live index lacks or holds otherwise. */
export function differingAliases(file: unknown, cluster: unknown): string[] {
  if (!isJsonObject(file)) return [];
  const live = isJsonObject(cluster) ? cluster : {};
  return Object.keys(file).filter((name) => {
    if (!Object.hasOwn(live, name)) return true;
    const out = new Differences();
    walk(aliasForm(file[name]), aliasForm(live[name]), undefined, { extras: "report" }, out);
    return out.list.length > 0;
  });
}

// ---------------------------------------------------------------------------------------------
// Policies

// Kept by ISM itself, whatever the file says.
const POLICY_OWN_KEYS = new Set(["policy_id", "last_updated_time", "schema_version"]);

/**
 * How a live ISM policy differs from its file's body (`{"policy": {...}}`; the live one is the
 * answer to `GET /_plugins/_ism/policies/{id}`). What the file sets must be in the cluster as
 * set; what ISM adds (`retry` of an action, `error_notification: null`, `last_updated_time`...) is
 * not compared, nor are `policy_id`, `last_updated_time` and `schema_version`. An `ism_template`
 * object is the cluster's list of one.
 */
export function comparePolicy(
  file: unknown,
  cluster: unknown,
  redact: Redact = asIs,
): Difference[] {
  const out = new Differences(redact);
  const filePolicy = isJsonObject(file) ? file.policy : undefined;
  const livePolicy = isJsonObject(cluster) ? cluster.policy : undefined;
  if (!isJsonObject(filePolicy) || !isJsonObject(livePolicy)) {
    walk(filePolicy, livePolicy, { key: "policy" }, { extras: "ignore" }, out);
    return out.done();
  }
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(filePolicy)) {
    if (POLICY_OWN_KEYS.has(key)) continue;
    const live = Object.hasOwn(livePolicy, key) ? livePolicy[key] : undefined;
    entries.push([
      key,
      key === "ism_template" && isJsonObject(value) && Array.isArray(live) && live.length === 1
        ? [value]
        : value,
    ]);
  }
  walk(Object.fromEntries(entries), livePolicy, { key: "policy" }, { extras: "ignore" }, out);
  return out.done();
}

// ---------------------------------------------------------------------------------------------
// The alias a reindex file moves

/** The indices an alias points at, from `GET /_alias/{alias}`, and which one takes writes. */
export function aliasMembers(
  alias: string,
  cluster: unknown,
): { readonly indices: string[]; readonly write?: string } {
  const indices: string[] = [];
  let write: string | undefined;
  // An alias on one index, not marked otherwise, writes to it.
  let onlyWrites = false;
  if (isJsonObject(cluster)) {
    for (const index of Object.keys(cluster)) {
      const entry = cluster[index];
      const aliases = isJsonObject(entry) ? entry.aliases : undefined;
      if (!isJsonObject(aliases) || !Object.hasOwn(aliases, alias)) continue;
      indices.push(index);
      const definition = aliases[alias];
      const flag = isJsonObject(definition) ? definition.is_write_index : undefined;
      if (flag === true) write = index;
      onlyWrites = flag !== false;
    }
  }
  if (write === undefined && indices.length === 1 && onlyWrites) write = indices[0];
  return { indices, ...(write === undefined ? {} : { write }) };
}

/**
 * Whether `alias` points at `index` as its write index (a reindex file's end state), from
 * `GET /_alias/{alias}` (`undefined`: the cluster has no such alias).
 */
export function compareWriteAlias(
  alias: string,
  index: string,
  cluster: unknown,
  redact: Redact = asIs,
): Difference[] {
  const out = new Differences(redact);
  if (cluster === undefined) {
    out.add(undefined, "absent from the cluster", false);
    return out.done();
  }
  const { indices, write } = aliasMembers(alias, cluster);
  if (indices.length === 0) out.add(undefined, "absent from the cluster", false);
  else if (!indices.includes(index)) {
    out.add(
      undefined,
      `points at ${out.show(indices.join(", "))}, not at "${index}" (the file's new index)`,
      false,
    );
  } else if (write !== index) {
    out.add(
      undefined,
      `writes to ${write === undefined ? "no index" : out.show(write)}, not to "${index}" ` +
        `(the file's new index)`,
      false,
    );
  }
  return out.done();
}
