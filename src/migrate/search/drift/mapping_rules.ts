import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { Differences, type Kind, type Rules, sameScalar, type Step, walk } from "./json_diff.ts";

/**
 * Drift rules for the mappings of a live index (checked on an OpenSearch 2.19 node;
 * docs/migrations-reference.md, "Drift"): a key the cluster adds is no difference, but a field (a
 * key under any `properties` or `fields`) that the file does not declare is, and cannot be removed
 * by applying the file again, nor can a field's type change. The cluster leaves a parameter out at
 * its default value, answers `10` to `"10"` and `false` to `"false"`, and expands a dotted field
 * name into objects. A template's mappings are compared whole (template_rules.ts).
 */

/** A step of a mapping, knowing whether its key names a field. */
export interface MappingStep extends Step {
  readonly parent?: MappingStep | undefined;
  /**
   * Whether the key names a field: it is under a `properties` or `fields` that is itself a
   * parameter, not a field of that name.
   */
  readonly field?: boolean;
}

/** The step of `key` under `parent`, knowing whether it names a field of a mapping. */
export function mappingStep(parent: MappingStep | undefined, key: string | number): MappingStep {
  const field = typeof key === "string" && holdsFields(parent);
  return field ? { key, parent, field } : { key, parent };
}

// `properties` and `fields` parameters hold fields; a field named so holds parameters.
function holdsFields(step: MappingStep | undefined): boolean {
  return step !== undefined && step.field !== true &&
    (step.key === "properties" || step.key === "fields");
}

// Under a `properties` or `fields` parameter, a key is a field: `a.properties.b` is field b of a.
function isFieldStep(step: MappingStep): boolean {
  return step.field === true;
}

const EXTRA_FIELD_NOTE = "needs a reindex migration: a field cannot be removed from a live index";
const TYPE_NOTE = "needs a reindex migration: a field's type cannot change on a live index";

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

/**
 * How a live index's mappings are compared: a key the cluster has that the file does not is a
 * difference only under `properties` or `fields` (a field, which a re-apply cannot remove); a
 * parameter the cluster left out at its default is none; a field's type cannot change.
 */
export const MAPPING_RULES: Rules<MappingStep> = {
  extras: holdsFields,
  step: mappingStep,
  classify: (step: MappingStep, kind: Kind): { note?: string; fixable: boolean } => {
    if (kind === "extra" && isFieldStep(step)) return { note: EXTRA_FIELD_NOTE, fixable: false };
    if (
      kind === "changed" && step.key === "type" && step.parent !== undefined &&
      isFieldStep(step.parent)
    ) {
      return { note: TYPE_NOTE, fixable: false };
    }
    return { fixable: true };
  },
  // A parameter left out at its default; a field, never.
  absentIsDefault: (key, value, object, step) =>
    !isFieldStep(step) && isMappingDefault(key, value, object),
};

/**
 * Adds to `out` how a live index's mappings (`undefined`: none) differ from its file's, under
 * `mappings.`, by {@linkcode MAPPING_RULES}.
 */
export function diffMappings(file: unknown, cluster: unknown, out: Differences): void {
  walk(expandDottedFields(file), cluster ?? {}, { key: "mappings" }, MAPPING_RULES, out);
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
  // Only the listed differences count, not those counted beyond MAX_DIFFERENCES.
  const differs = (f: unknown, c: unknown, at: MappingStep) => {
    const out = new Differences();
    walk(f, c, at, MAPPING_RULES, out);
    return out.list.some((d) => d.fixable);
  };
  const root: MappingStep = { key: "mappings" };
  for (const [key, value] of Object.entries(file)) {
    if (key === "properties" && isJsonObject(value)) {
      const props = isJsonObject(live.properties) ? live.properties : {};
      for (const [field, definition] of Object.entries(value)) {
        const at = mappingStep(mappingStep(root, "properties"), field);
        if (!Object.hasOwn(props, field) || differs(definition, props[field], at)) {
          parts.push({ properties: Object.fromEntries([[field, definition]]) });
        }
      }
    } else if (
      Object.hasOwn(live, key)
        ? differs(value, live[key], mappingStep(root, key))
        : !isMappingDefault(key, value, file)
    ) {
      parts.push(Object.fromEntries([[key, value]]));
    }
  }
  return parts;
}
