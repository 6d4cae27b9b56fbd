import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import { MAX_REQUEST_BODY_DEPTH, parseJson } from "../../src/http/parse_json.ts";
import { propertyOptions } from "../property.ts";

// JSON values with `__proto__` and `constructor.prototype` keys planted at any depth, spelled
// plainly or escaped.
const hostileKey = fc.constantFrom("__proto__", "constructor", "prototype", "polluted", "a");
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(hostileKey, tie("value"), { maxKeys: 3 }),
  ),
})).value;

// The reference: JSON.parse, then every `__proto__` key and every `constructor` key whose (cleaned)
// value is an object with its own `prototype` removed, walking the result.
function withoutPrototypeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPrototypeKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === "__proto__") continue;
    const inner = withoutPrototypeKeys((value as Record<string, unknown>)[key]);
    const reachesPrototype = key === "constructor" && typeof inner === "object" &&
      inner !== null && Object.hasOwn(inner, "prototype");
    if (!reachesPrototype) out[key] = inner;
  }
  return out;
}

// The merge found in many apps (lodash.merge before 4.17.5, hand-written deep copies).
function naiveMerge(target: Record<string, unknown>, source: unknown): void {
  if (typeof source !== "object" || source === null) return;
  for (const [key, value] of Object.entries(source)) {
    if (typeof value === "object" && value !== null) {
      const next = target[key];
      if ((typeof next !== "object" || next === null) && typeof next !== "function") {
        target[key] = {};
      }
      naiveMerge(target[key] as Record<string, unknown>, value);
    } else target[key] = value;
  }
}

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
  it("equals JSON.parse less every __proto__ and constructor.prototype key, whatever the spelling", () => {
    fc.assert(
      fc.property(hostileJson, fc.boolean(), (value, escape) => {
        let text = JSON.stringify(value);
        if (escape) {
          text = text.replaceAll('"__proto__"', '"\\u005f_proto__"')
            .replaceAll('"constructor"', '"\\u0063onstructor"');
        }
        const parsed = parseJson(text);
        assert.equal(hasProtoKey(parsed), false);
        assert.deepEqual(parsed, withoutPrototypeKeys(JSON.parse(text)));
      }),
      propertyOptions(300),
    );
  });

  it("a constructor.prototype pair is what pollutes a naive merge, and it is dropped", () => {
    const text = '{"a":{"constructor":{"prototype":{"polluted":1}}},"constructor":"kept"}';
    assert.deepEqual(parseJson(text), { a: {}, constructor: "kept" });
    const merged: Record<string, unknown> = {};
    naiveMerge(merged, parseJson(text));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    // The same merge of the plain parse does reach the prototype: the check above can fail.
    try {
      naiveMerge({}, JSON.parse(text));
      assert.equal(({} as Record<string, unknown>).polluted, 1);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
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
        fc.integer({ min: 1, max: 2 * MAX_REQUEST_BODY_DEPTH }),
        fc.constantFrom("1", '"[{"', '"\\"["', '"\\u0041"'),
        fc.constantFrom("[]", "{}"),
        (depth, inner, kind) => {
          const [open, close] = kind === "[]" ? ["[", "]"] : ['{"k":', "}"];
          const text = open.repeat(depth) + inner + close.repeat(depth);
          if (depth <= MAX_REQUEST_BODY_DEPTH) assert.equal(depthOf(parseJson(text)), depth);
          else assert.throws(() => parseJson(text), HttpException);
        },
      ),
      propertyOptions(200),
    );
  });
});
