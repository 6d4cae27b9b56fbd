import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { definedFields } from "../src/defined_fields.ts";
import { propertyOptions } from "./property.ts";

describe("definedFields", () => {
  it("keeps every field but the undefined ones, with their values and order", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.oneof(fc.constant(undefined), fc.anything())),
        (fields) => {
          const copy = definedFields(fields);
          const expected = Object.entries(fields).filter(([, v]) => v !== undefined);
          assert.deepEqual(Object.entries(copy), expected);
        },
      ),
      propertyOptions(),
    );
  });

  it("keeps null, 0, false and the empty string, which are values", () => {
    assert.deepEqual(definedFields({ a: null, b: 0, c: false, d: "", e: undefined }), {
      a: null,
      b: 0,
      c: false,
      d: "",
    });
  });

  it("does not set the prototype from a __proto__ key", () => {
    const fields = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const copy = definedFields(fields) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
