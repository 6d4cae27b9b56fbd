import type { Class } from "../context/class.ts";
import type { ScalarType } from "../web/scalar_type.ts";
import { fieldKind, prototypeMembers } from "../web/json_body.ts";
import { isStandardSchema, type StandardSchemaV1 } from "../config/standard_schema.ts";

/** A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) as a plain JSON object. */
export type JsonSchema = { readonly [key: string]: unknown };

/** Where a schema may come from: a class, a Standard Schema, or a JSON Schema as it is. */
export type SchemaSource = Class | StandardSchemaV1 | JsonSchema;

/** The schemas a document shares, by name: `components.schemas`. */
export type SharedSchemas = Map<string, JsonSchema>;

/** The schema of a path variable, parameter or header: what its conversion accepts. */
export function scalarSchema(type: ScalarType): JsonSchema {
  // The conversion takes only what `Number.isSafeInteger` does: beyond, a number is not exact.
  if (type === Number) {
    return {
      type: "integer",
      minimum: -Number.MAX_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
    };
  }
  if (type === Boolean) return { type: "boolean" };
  // A converter function takes the text as sent; what it accepts only it knows.
  return { type: "string" };
}

/**
 * The JSON Schema of a class's declared fields, as the body binding sees them: each own field of
 * a new instance (typed by its initial value) and each setter. No field is required (a body may
 * leave any out) and other keys are allowed (the binding ignores them), except the names the
 * binding refuses with a 400 (a method, a getter without a setter, a function-valued or read-only
 * field), which `propertyNames` forbids. A class whose constructor needs arguments, or throws,
 * gives only `{type: "object"}`.
 */
export function classSchema(cls: Class): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const forbidden: string[] = [];
  let instance: Record<string, unknown>;
  try {
    instance = new (cls as new () => Record<string, unknown>)();
  } catch {
    return { type: "object" };
  }
  // What the body binding decides (json_body.ts): an own property of the instance by its kind,
  // any other name by the nearest prototype that declares it. All own names, not only the
  // enumerable ones: the binding reads each key's descriptor. `__proto__` never reaches it (the
  // body parser drops that key), so the schema says nothing of it.
  for (const key of Object.getOwnPropertyNames(instance)) {
    if (key === "__proto__") continue;
    const settable = fieldKind(instance, key);
    if (settable === false) forbidden.push(key);
    else if (Object.prototype.propertyIsEnumerable.call(instance, key)) {
      properties[key] = valueSchema(instance[key]);
    }
  }
  for (const [key, settable] of prototypeMembers(cls)) {
    if (Object.hasOwn(instance, key)) continue;
    if (settable) properties[key] = {};
    else forbidden.push(key);
  }
  const schema: Record<string, unknown> = { type: "object", title: cls.name, properties };
  // `propertyNames`, not `false` under `properties`: tools that write sample bodies (Swagger UI's
  // "Try it out") fill in every listed property, forbidden or not.
  if (forbidden.length > 0) schema.propertyNames = { not: { enum: forbidden } };
  return schema;
}

function valueSchema(value: unknown): JsonSchema {
  switch (typeof value) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: "number" };
    case "boolean":
      return { type: "boolean" };
    case "bigint":
      return { type: "integer" };
    case "object":
      if (Array.isArray(value)) return { type: "array" };
      // `null` or an object: the initial value does not tell what a client may send.
      return {};
    default:
      return {};
  }
}

/** The Standard JSON Schema converter zod 4, arktype and valibot's adapter put beside `validate`. */
interface JsonSchemaConverter {
  readonly input: (options: { readonly target: string }) => Record<string, unknown>;
  readonly output: (options: { readonly target: string }) => Record<string, unknown>;
}

function converterOf(schema: StandardSchemaV1): JsonSchemaConverter | undefined {
  const converter = (schema["~standard"] as { jsonSchema?: unknown }).jsonSchema;
  if (typeof converter !== "object" || converter === null) return undefined;
  const { input, output } = converter as Record<string, unknown>;
  return typeof input === "function" && typeof output === "function"
    ? converter as JsonSchemaConverter
    : undefined;
}

/**
 * The schema of a body or response: a Standard Schema through its Standard JSON Schema converter
 * (`input` for what a client sends, `output` for what a handler answers), a class through
 * {@linkcode classSchema}, a plain object as the JSON Schema it is. A Standard Schema without a
 * converter, or one that cannot convert itself (a transform, a custom check), gives `{}` with a
 * description saying so: the document stays valid and says what it does not know.
 *
 * Definitions the schema shares (`$defs`, draft-07 `definitions`) move to `shared` under their
 * own names (a different schema of a taken name gets a numbered one), and every `$ref` is
 * rewritten to `#/components/schemas/...`, since the schema is embedded in a document where
 * `#/$defs` would not resolve.
 */
export function sourceSchema(
  source: SchemaSource | undefined,
  side: "input" | "output",
  shared: SharedSchemas,
  hint: string,
): JsonSchema {
  if (source === undefined) return {};
  if (isStandardSchema(source)) {
    const vendor = source["~standard"].vendor;
    const converter = converterOf(source);
    if (converter === undefined) {
      return { description: `A ${vendor} schema without a JSON Schema converter` };
    }
    let converted: Record<string, unknown>;
    try {
      converted = converter[side]({ target: "draft-2020-12" });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return { description: `The ${vendor} schema has no JSON Schema form: ${why}` };
    }
    return embed(converted, shared, hint);
  }
  if (typeof source === "function") return classSchema(source as Class);
  return embed(source as JsonSchema, shared, hint);
}

const DEFINITION_KEYS = ["$defs", "definitions"] as const;

/**
 * Moves a standalone schema's definitions into `shared` and rewrites its local references. A
 * reference into the schema itself (`#`, `#/properties/...`, as recursive schemas have) makes the
 * schema a shared one of its own, named by `hint`.
 */
function embed(schema: JsonSchema, shared: SharedSchemas, hint: string): JsonSchema {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  const renamed = new Map<string, string>();
  const definitions: [string, string, JsonSchema][] = [];
  for (const key of DEFINITION_KEYS) {
    const defs = rest[key];
    delete rest[key];
    if (typeof defs !== "object" || defs === null) continue;
    for (const [name, def] of Object.entries(defs)) {
      const target = uniqueName(shared, name, def as JsonSchema, renamed);
      renamed.set(`#/${key}/${escapePointer(name)}`, target);
      definitions.push([key, target, def as JsonSchema]);
    }
  }
  let self: string | undefined;
  const selfName = (): string => self ??= uniqueName(shared, hint, rest, renamed);
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (typeof value !== "object" || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      // An `$id` would make the rewritten references resolve against it, not the document.
      if (key === "$id") continue;
      out[key] = key === "$ref" && typeof child === "string" ? reference(child) : rewrite(child);
    }
    return out;
  };
  const reference = (raw: string): string => {
    if (!raw.startsWith("#")) return raw;
    // A fragment is a URI fragment: `#/$defs/a%20b` names the definition `a b`.
    let ref: string;
    try {
      ref = decodeURIComponent(raw);
    } catch {
      ref = raw;
    }
    // Into the document already (a raw JSON Schema written for it): as it is.
    if (ref.startsWith("#/components/")) return raw;
    for (const [from, to] of renamed) {
      if (ref === from || ref.startsWith(`${from}/`)) {
        return `#/components/schemas/${escapePointer(to)}${ref.slice(from.length)}`;
      }
    }
    return `#/components/schemas/${escapePointer(selfName())}${ref.slice(1)}`;
  };
  for (const [, target, def] of definitions) shared.set(target, rewrite(def) as JsonSchema);
  const body = rewrite(rest) as JsonSchema;
  if (self === undefined) return body;
  shared.set(self, body);
  return { $ref: `#/components/schemas/${escapePointer(self)}` };
}

/** `name`, or `name2`, `name3`... when `shared` holds another schema under it. */
function uniqueName(
  shared: SharedSchemas,
  wanted: string,
  schema: JsonSchema,
  taken: Map<string, string>,
): string {
  // Component names are limited to `^[a-zA-Z0-9._-]+$`.
  const base = wanted.replace(/[^a-zA-Z0-9._-]/g, "_") || "Schema";
  const reserved = new Set(taken.values());
  for (let n = 1;; n++) {
    const name = n === 1 ? base : `${base}${n}`;
    if (reserved.has(name)) continue;
    const existing = shared.get(name);
    if (existing === undefined || sameJson(existing, schema)) return name;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function escapePointer(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}
