import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import { MAX_JSON_DEPTH, parseJson } from "../../src/http/parse_json.ts";
import { propertyOptions } from "../property.ts";

// JSON values with `__proto__` keys planted at any depth, spelled plainly or escaped.
const hostileKey = fc.constantFrom("__proto__", "constructor", "prototype", "a", "b");
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(hostileKey, tie("value"), { maxKeys: 3 }),
  ),
})).value;

function hasProtoKey(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Object.hasOwn(value, "__proto__")) return true;
  return Object.values(value).some(hasProtoKey);
}

function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

describe("parseJson (property)", () => {
  it("equals JSON.parse less every __proto__ key, whatever the spelling", () => {
    fc.assert(
      fc.property(hostileJson, fc.boolean(), (value, escape) => {
        let text = JSON.stringify(value);
        if (escape) text = text.replaceAll('"__proto__"', '"\\u005f_proto__"');
        const parsed = parseJson(text);
        assert.equal(hasProtoKey(parsed), false);
        const expected = JSON.parse(text, (k, v) => (k === "__proto__" ? undefined : v));
        assert.deepEqual(parsed, expected);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      }),
      propertyOptions(300),
    );
  });

  it("never throws anything but a 400 HttpException, for any text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.string({ unit: "binary" })), (text) => {
        try {
          parseJson(text);
        } catch (error) {
          assert.ok(error instanceof HttpException, String(error));
          assert.equal(error.status.getValue(), 400);
        }
      }),
      propertyOptions(500),
    );
  });

  it("accepts nesting up to the limit and refuses deeper, strings with brackets aside", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 * MAX_JSON_DEPTH }),
        fc.constantFrom("1", '"[{"', '"\\"["', '"\\u0041"'),
        fc.constantFrom("[]", "{}"),
        (depth, inner, kind) => {
          const [open, close] = kind === "[]" ? ["[", "]"] : ['{"k":', "}"];
          const text = open.repeat(depth) + inner + close.repeat(depth);
          if (depth <= MAX_JSON_DEPTH) assert.equal(depthOf(parseJson(text)), depth);
          else assert.throws(() => parseJson(text), HttpException);
        },
      ),
      propertyOptions(200),
    );
  });
});
