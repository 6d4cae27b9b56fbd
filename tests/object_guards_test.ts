import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isMapping, isPlainObject } from "../src/object_guards.ts";
import { propertyOptions } from "./property.ts";

class Point {
  constructor(readonly x = 0) {}
}

// Each kind of value with what both guards say of it: the table is the two guards' meaning.
const KINDS: fc.Arbitrary<{ value: unknown; mapping: boolean; plain: boolean }> = fc.oneof(
  fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.bigInt(), fc.constant(undefined))
    .map((value) => ({ value, mapping: false, plain: false })),
  fc.constantFrom(null, Symbol("s"), () => 1)
    .map((value) => ({ value, mapping: false, plain: false })),
  fc.array(fc.anything()).map((value) => ({ value, mapping: false, plain: false })),
  fc.dictionary(fc.string(), fc.anything())
    .map((value) => ({ value, mapping: true, plain: true })),
  fc.dictionary(fc.string(), fc.anything())
    .map((entries) => ({
      value: Object.assign(Object.create(null), entries),
      mapping: true,
      plain: true,
    })),
  fc.oneof(
    fc.integer().map((x) => new Point(x)),
    fc.date({ noInvalidDate: true }),
    fc.constant(new Map()),
    fc.constant(/x/g),
    fc.constant(Object.create({ inherited: 1 })),
  ).map((value) => ({ value, mapping: true, plain: false })),
);

describe("isMapping and isPlainObject", () => {
  it("say what the table of kinds says of every value", () => {
    fc.assert(
      fc.property(KINDS, ({ value, mapping, plain }) => {
        assert.equal(isMapping(value), mapping);
        assert.equal(isPlainObject(value), plain);
      }),
      propertyOptions(),
    );
  });

  it("a plain object is always a mapping", () => {
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true }), (value) => {
        if (isPlainObject(value)) assert.equal(isMapping(value), true);
      }),
      propertyOptions(),
    );
  });
});
