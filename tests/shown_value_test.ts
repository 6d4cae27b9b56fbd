// How a message shows a value it was given: on one printable line, whatever the value.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { printable, shownValue } from "../src/shown_value.ts";
import { propertyOptions } from "./property.ts";

// What would break a message's line, reach a terminal as a sequence or reorder what a reader sees
// (the bidirectional controls); with the u flag, a surrogate is one that stands alone.
const BREAKING =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|\p{Surrogate}/u;

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

  it("shows the first 200 characters of a longer value, and how long it was", () => {
    const shown = shownValue("x".repeat(100_000));
    assert.equal(shown, `"${"x".repeat(199)}... (100000 characters)`);
    assert.equal(
      shownValue({ a: "x".repeat(300) }),
      `{"a":"${"x".repeat(194)}... (308 characters)`,
    );
    assert.equal(shownValue("y".repeat(198)), `"${"y".repeat(198)}"`);
    // Cut after the escaping, never inside a \uXXXX, nor between the halves of a pair.
    assert.equal(shownValue("\n".repeat(100)), `"${"\\n".repeat(99)}... (100 characters)`);
    assert.equal(shownValue("\u0000".repeat(40)), `"${"\\u0000".repeat(33)}... (40 characters)`);
    // A text of millions of characters each escaped to six costs no more than its first ones.
    assert.match(
      shownValue("\u202e".repeat(3_000_000)),
      /^"(\\u202e){33}\.\.\. \(3000000 characters\)$/,
    );
    const pairs = shownValue("\u{1F600}".repeat(150));
    assert.doesNotMatch(pairs, /\p{Surrogate}/u);
  });

  it("writes a text's bidirectional controls as \\uXXXX: a log line reads as it was written", () => {
    assert.equal(printable("a\u202eb\u2066c\u061c"), "a\\u202eb\\u2066c\\u061c");
  });

  it("never writes a control character, a line separator or a lone surrogate (property)", () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true }), (value) => {
        const shown = shownValue(value);
        assert.doesNotMatch(shown, BREAKING);
        assert.ok(shown.length <= 240, shown);
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
