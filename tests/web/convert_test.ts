import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import { compileConverter } from "../../src/web/convert.ts";
import { propertyOptions } from "../property.ts";

const text = fc.oneof(
  fc.string(),
  fc.integer().map(String),
  fc.bigInt().map(String),
  fc.double().map(String),
  fc.constantFrom("true", "FALSE", "1", "0", "+5", "-0", " 1", "1 ", "0x10", "1e3", ""),
);

function refused(convert: (t: string) => unknown, t: string): boolean {
  try {
    convert(t);
    return false;
  } catch (error) {
    assert.ok(error instanceof HttpException && error.status.getValue() === 400, String(error));
    return true;
  }
}

describe("path, parameter and header conversion (property)", () => {
  it("Number accepts exactly the safe decimal integers", () => {
    const convert = compileConverter(Number, "x");
    fc.assert(
      fc.property(text, (t) => {
        const model = /^[+-]?\d+$/.test(t) && Number.isSafeInteger(Number(t));
        assert.equal(refused(convert, t), !model, JSON.stringify(t));
        // -0 is given as 0: `Object.is` (assert.equal) tells them apart.
        if (model) assert.equal(convert(t), Number(t) === 0 ? 0 : Number(t));
      }),
      propertyOptions(1000),
    );
  });

  it("Boolean accepts true/false/1/0 in any case and nothing else", () => {
    const convert = compileConverter(Boolean, "x");
    fc.assert(
      fc.property(text, (t) => {
        const lower = t.toLowerCase();
        const model = ["true", "1"].includes(lower)
          ? true
          : ["false", "0"].includes(lower)
          ? false
          : undefined;
        assert.equal(refused(convert, t), model === undefined, JSON.stringify(t));
        if (model !== undefined) assert.equal(convert(t), model);
      }),
      propertyOptions(1000),
    );
  });

  it("String is the identity; a converter's throw is a 400 that quotes at most 64 characters", () => {
    const asString = compileConverter(String, "x");
    const failing = compileConverter((t: string) => {
      throw new Error(`bad ${t.length}`);
    }, "Header 'h'");
    fc.assert(
      fc.property(text, (t) => {
        assert.equal(asString(t), t);
        try {
          failing(t);
          assert.fail("a throwing converter must refuse");
        } catch (error) {
          assert.ok(error instanceof HttpException);
          assert.ok(error.message.length < 64 * 6 + 80, error.message);
        }
      }),
      propertyOptions(500),
    );
  });
});
