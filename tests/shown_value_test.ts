// How a message shows a value it was given: on one printable line, whatever the value.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { printable, shownValue } from "../src/shown_value.ts";
import { propertyOptions } from "./property.ts";

// What would break a message's line or reach a terminal as a sequence; with the u flag, a
// surrogate is one that stands alone.
// deno-lint-ignore no-control-regex
const BREAKING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|\p{Surrogate}/u;

describe("shownValue", () => {
  it("shows numbers as JavaScript writes them, a BigInt with its n", () => {
    assert.equal(shownValue(NaN), "NaN");
    assert.equal(shownValue(-Infinity), "-Infinity");
    assert.equal(shownValue(2.5), "2.5");
    assert.equal(shownValue(5n), "5n");
  });

  it("shows text quoted, objects as JSON, and the type of what JSON cannot write", () => {
    assert.equal(shownValue("a\nb"), '"a\\nb"');
    assert.equal(shownValue({ a: [1, null] }), '{"a":[1,null]}');
    assert.equal(shownValue(Object.create(null)), "{}");
    assert.equal(shownValue(undefined), "undefined");
    assert.equal(shownValue(() => 1), "function");
    assert.equal(shownValue(Symbol("s")), "symbol");
    assert.equal(shownValue({ big: 1n }), "object");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.equal(shownValue(cycle), "object");
    assert.equal(shownValue({ toJSON: () => "\u2028" }), '"\\u2028"');
  });

  it("never writes a control character, a line separator or a lone surrogate (property)", () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true }), (value) => {
        assert.doesNotMatch(shownValue(value), BREAKING);
      }),
      propertyOptions(300),
    );
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const shown = printable(text);
        assert.doesNotMatch(shown, BREAKING);
        // Each code point that would break the line becomes one \uXXXX; the rest stays as it was.
        const breaking = [...text].filter((c) => BREAKING.test(c));
        assert.equal(shown.length, text.length + 5 * breaking.length);
        if (breaking.length === 0) assert.equal(shown, text);
      }),
      propertyOptions(300),
    );
  });
});
