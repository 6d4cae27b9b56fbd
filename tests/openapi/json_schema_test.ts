import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { StandardSchemaV1 } from "../../mod.ts";
import type { OpenApiDocument } from "../../openapi.ts";
import {
  classSchema,
  type JsonSchema,
  scalarSchema,
  type SharedSchemas,
  sourceSchema,
} from "../../src/openapi/json_schema.ts";
import { classBinding } from "../../src/web/json_body.ts";
import { propertyOptions } from "../property.ts";
import { schemaValidator } from "./openapi_validator.ts";

/** A Standard Schema whose JSON Schema converter returns `converted` (or throws it). */
function standard(converted: Record<string, unknown> | Error | undefined): StandardSchemaV1 {
  const props: Record<string, unknown> = {
    version: 1,
    vendor: "test",
    validate: (value: unknown) => ({ value }),
  };
  if (converted !== undefined) {
    const convert = () => {
      if (converted instanceof Error) throw converted;
      return structuredClone(converted);
    };
    props.jsonSchema = { input: convert, output: convert };
  }
  return { "~standard": props } as unknown as StandardSchemaV1;
}

function documentOf(schema: JsonSchema, shared: SharedSchemas): OpenApiDocument {
  return {
    openapi: "3.1.0",
    info: { title: "t", version: "1" },
    paths: {},
    components: { schemas: { ...Object.fromEntries(shared), Root: schema }, responses: {} },
  };
}

describe("JSON Schemas for the document", () => {
  it("types path variables, parameters and headers by their conversion", () => {
    // What `Number.isSafeInteger` lets through, and no more.
    assert.deepEqual(scalarSchema(Number), {
      type: "integer",
      minimum: -9007199254740991,
      maximum: 9007199254740991,
    });
    assert.deepEqual(scalarSchema(Boolean), { type: "boolean" });
    assert.deepEqual(scalarSchema(String), { type: "string" });
    assert.deepEqual(scalarSchema((t: string) => t.length), { type: "string" });
  });

  it("reads a class's fields and setters, not its methods, getters or private fields", () => {
    class Base {
      inherited = "";
      set viaSetter(_v: number) {}
    }
    class Thing extends Base {
      count = 1;
      readonly frozen = "x";
      handler = () => 1;
      #hidden = 1;
      get computed(): number {
        return this.#hidden;
      }
      method(): void {}
    }
    Object.defineProperty(Thing.prototype, "frozen", { value: "x", writable: false });
    assert.deepEqual(classSchema(Thing), {
      type: "object",
      title: "Thing",
      properties: {
        inherited: { type: "string" },
        count: { type: "number" },
        frozen: {
          type: "string",
        },
        viaSetter: {},
      },
      // What the binding refuses with a 400: an arrow-function field, a getter alone, a method.
      propertyNames: { not: { enum: ["handler", "computed", "method"] } },
    });
    class NeedsArgs {
      constructor(readonly id: { value: number }) {
        if (id === undefined) throw new TypeError("id needed");
      }
    }
    assert.deepEqual(classSchema(NeedsArgs), { type: "object" });
  });

  it("documents exactly the keys the body binding sets: the nearest prototype decides", () => {
    class Parent {
      #nick = "";
      get nick(): string {
        return this.#nick;
      }
      set nick(value: string) {
        this.#nick = value;
      }
    }
    class Child extends Parent {
      // A getter alone here hides the parent's setter: the binding refuses "nick".
      override get nick(): string {
        return "fixed";
      }
      name = "";
    }
    const schema = classSchema(Child);
    assert.deepEqual(Object.keys(schema.properties as object), ["name"]);
    assert.deepEqual(schema.propertyNames, { not: { enum: ["nick"] } });
    const bind = classBinding(Child);
    assert.throws(() => bind({ nick: "x" }), /"nick" is not a settable property of Child/);
  });

  it("forbids the names the binding refuses, and only those: Object.prototype's are ignored", () => {
    class User {
      id = 0;
      email = "";
      // A field of the constructor's own counts, even under a name every object has.
      toString = () => "user";
      setId(id: number): void {
        this.id = id;
      }
      getEmail(): string {
        return this.email;
      }
      // Declared by the class, yet one of the names every object has: the binding ignores it.
      valueOf(): number {
        return this.id;
      }
    }
    const schema = classSchema(User);
    assert.deepEqual(schema.propertyNames, { not: { enum: ["toString", "setId", "getEmail"] } });
    const bind = classBinding(User);
    for (const name of ["toString", "setId", "getEmail"]) {
      assert.throws(() => bind({ [name]: 1 }), /is not a settable property of User/);
    }
    // Ignored, not refused: no name of these is forbidden.
    bind(JSON.parse('{"constructor":1,"valueOf":1,"hasOwnProperty":1,"__proto__":1}'));
    const validate = new Ajv2020({ strict: false }).compile(structuredClone(schema));
    assert.equal(validate({ id: 1, email: "a@b.c", constructor: 1, valueOf: 1 }), true);
    assert.equal(validate({ getEmail: "x" }), false);
    assert.equal(validate({ toString: "x" }), false);
    // A class with nothing to refuse says nothing more than before.
    class Plain {
      name = "";
    }
    assert.equal(classSchema(Plain).propertyNames, undefined);
  });

  it("says what it does not know instead of failing: no converter, or one that throws", () => {
    const shared: SharedSchemas = new Map();
    assert.deepEqual(sourceSchema(standard(undefined), "input", shared, "x"), {
      description: "A test schema without a JSON Schema converter",
    });
    assert.deepEqual(
      sourceSchema(standard(new Error("transforms have no form")), "input", shared, "x"),
      {
        description: "The test schema has no JSON Schema form: transforms have no form",
      },
    );
    assert.equal(shared.size, 0);
  });

  it("moves $defs and definitions to shared schemas, renaming a different one of a taken name", () => {
    const shared: SharedSchemas = new Map([["Name", { type: "integer" }]]);
    const schema = sourceSchema(
      standard({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: {
          a: { $ref: "#/$defs/Name" },
          b: { $ref: "#/definitions/Old" },
          c: { $ref: "https://example.com/remote.json" },
          d: { $ref: "#/$defs/we~1ird name" },
        },
        $defs: { Name: { type: "string" }, "we/ird name": { type: "boolean" } },
        definitions: { Old: { type: "null" } },
      }),
      "input",
      shared,
      "Op.body",
    );
    assert.deepEqual(schema, {
      type: "object",
      properties: {
        a: { $ref: "#/components/schemas/Name2" },
        b: { $ref: "#/components/schemas/Old" },
        c: { $ref: "https://example.com/remote.json" },
        d: { $ref: "#/components/schemas/we_ird_name" },
      },
    });
    assert.deepEqual(Object.fromEntries(shared), {
      Name: { type: "integer" },
      Name2: { type: "string" },
      we_ird_name: { type: "boolean" },
      Old: { type: "null" },
    });
  });

  it("leaves references into the document alone, decodes encoded ones, and drops $id", () => {
    const shared: SharedSchemas = new Map();
    const schema = sourceSchema(
      {
        $id: "https://example.com/outer.json",
        type: "array",
        items: { $ref: "#/components/schemas/Error" },
        contains: { $ref: "#/$defs/a%20b" },
        $defs: { "a b": { $id: "https://example.com/inner.json", type: "string" } },
      },
      "output",
      shared,
      "Op.200",
    );
    assert.deepEqual(schema, {
      type: "array",
      items: { $ref: "#/components/schemas/Error" },
      contains: { $ref: "#/components/schemas/a_b" },
    });
    assert.deepEqual(shared.get("a_b"), { type: "string" });
  });

  it("shares a schema that refers to itself under the operation's name", () => {
    const shared: SharedSchemas = new Map();
    const schema = sourceSchema(
      standard({
        type: "object",
        properties: { next: { $ref: "#" }, value: { $ref: "#/properties/next" } },
      }),
      "output",
      shared,
      "List.get.200",
    );
    assert.deepEqual(schema, { $ref: "#/components/schemas/List.get.200" });
    assert.deepEqual(shared.get("List.get.200"), {
      type: "object",
      properties: {
        next: { $ref: "#/components/schemas/List.get.200" },
        value: { $ref: "#/components/schemas/List.get.200/properties/next" },
      },
    });
  });

  it("accepts and rejects what the standalone schema does (property)", () => {
    const names = ["A", "B", "C"];
    const leaf = fc.constantFrom<JsonSchema>(
      { type: "string" },
      { type: "integer", minimum: 0 },
      { type: "boolean" },
      { enum: [1, "x", null] },
    );
    // Definitions refer only to earlier ones (A to none, B to A, C to A and B), the root to any:
    // references without a loop, which no validator can run.
    const node = (depth: number, refs: readonly string[]): fc.Arbitrary<JsonSchema> => {
      const ref = refs.length === 0
        ? leaf
        : fc.constantFrom(...refs).map((n): JsonSchema => ({ $ref: `#/$defs/${n}` }));
      if (depth === 0) return fc.oneof(leaf, ref);
      const inner = node(depth - 1, refs);
      return fc.oneof(
        leaf,
        ref,
        fc.dictionary(fc.constantFrom("p", "q", "__proto__"), inner, { maxKeys: 2 })
          .map((properties): JsonSchema => ({ type: "object", properties })),
        inner.map((items): JsonSchema => ({ type: "array", items, maxItems: 3 })),
        fc.array(inner, { minLength: 1, maxLength: 2 }).map((anyOf): JsonSchema => ({ anyOf })),
      );
    };
    const standalone = fc.record({
      root: node(2, names),
      defs: fc.tuple(node(1, []), node(1, ["A"]), node(1, ["A", "B"])),
      taken: fc.constantFrom<[string, JsonSchema][]>([], [["A", { type: "null" }]]),
    });
    fc.assert(
      fc.property(
        standalone,
        fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 8 }),
        (s, values) => {
          const original = {
            ...s.root,
            $defs: Object.fromEntries(names.map((n, i) => [n, s.defs[i]])),
          };
          const validate = new Ajv2020({ strict: false }).compile(structuredClone(original));
          const shared: SharedSchemas = new Map(s.taken);
          const embedded = sourceSchema(original, "input", shared, "Root");
          // What other operations shared before stays as it was.
          for (const [name, schema] of s.taken) assert.deepEqual(shared.get(name), schema);
          const check = schemaValidator(documentOf(embedded, shared));
          for (const value of [...values, { p: "x" }, [], "a", 1]) {
            assert.equal(check(embedded, value).valid, validate(value), JSON.stringify(value));
          }
        },
      ),
      propertyOptions(150),
    );
  });
});
