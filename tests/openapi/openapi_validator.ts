// Checks a document the way a consumer would: the OpenAPI 3.1 schema (a real validator from npm),
// every `$ref` resolving inside the document, and every schema compiling as JSON Schema 2020-12.
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { OpenApiDocument } from "../../openapi.ts";

/** The value a local `$ref` (`#/components/schemas/User`) points at, or `undefined`. */
export function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function refsOf(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) { for (const v of value) refsOf(v, into); }
  else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string") into.push(child);
      else refsOf(child, into);
    }
  }
  return into;
}

/** A validator for the schemas of one document, its components loaded so `$ref`s resolve. */
export function schemaValidator(document: OpenApiDocument): (schema: unknown, value: unknown) => {
  valid: boolean;
  errors: unknown;
} {
  // `ownProperties`: without it ajv reads `constructor` or `toString` through the prototype and
  // refuses `{}` against `properties: {constructor: {type: "string"}}`, which JSON Schema calls
  // valid (a class may declare such a field).
  const ajv = new Ajv2020({
    strict: false,
    allErrors: true,
    validateFormats: false,
    ownProperties: true,
  });
  ajv.addSchema({ ...document, $id: "doc" } as Record<string, unknown>, "doc");
  return (schema, value) => {
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"doc#/'));
    const validate = ajv.compile(rebased);
    const valid = validate(value) as boolean;
    return { valid, errors: validate.errors };
  };
}

/** Fails unless `document` is a valid OpenAPI 3.1 document whose references all resolve. */
export async function assertValidOpenApi(document: OpenApiDocument): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(
    structuredClone(document) as unknown as Parameters<Validator["validate"]>[0],
  );
  assert.equal(validator.version, "3.1");
  assert.ok(result.valid, `not valid OpenAPI 3.1: ${JSON.stringify(result.errors, null, 1)}`);
  for (const ref of refsOf(document)) {
    assert.notEqual(resolvePointer(document, ref), undefined, `$ref ${ref} does not resolve`);
  }
  // Every schema compiles (draft 2020-12), with the document's components in reach.
  const check = schemaValidator(document);
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    assert.doesNotThrow(() => check(schema, null), `components.schemas.${name} does not compile`);
  }
}
