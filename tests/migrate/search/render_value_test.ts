// A value from a cluster as a message quotes it: bounded whatever its size or depth, every string
// and key masked whole before it is cut.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { renderValue } from "../../../src/migrate/search/render_value.ts";
import { propertyOptions } from "../../property.ts";

describe("renderValue", () => {
  it("shows a small value as JSON", () => {
    assert.equal(renderValue({ a: [1, "x", null] }), '{"a": [1, "x", null]}');
  });

  it("property: at most the budget and an ellipsis, and the whole of a value that fits", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 200 }), (value, budget) => {
        const shown = renderValue(value, budget);
        assert.ok(shown.length <= budget + 1, `${shown.length} > ${budget} + 1`);
        // As JSON holds it: -0 is 0.
        if (!shown.includes("…")) {
          assert.deepEqual(JSON.parse(shown), JSON.parse(JSON.stringify(value)));
        }
      }),
      propertyOptions(300),
    );
  });

  it("property: a secret in any string or key never shows, even in part at a cut", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 4, maxLength: 12 }).filter((s) => !s.includes("*")),
        fc.string(),
        fc.string(),
        fc.integer({ min: 1, max: 60 }),
        (secret, before, after, budget) => {
          const mask = (text: string) => text.replaceAll(secret, "***");
          const value = { [`${before}${secret}`]: [`${before}${secret}${after}`] };
          const shown = renderValue(value, budget, mask);
          assert.ok(!shown.includes(secret), shown);
        },
      ),
      propertyOptions(300),
    );
  });

  it("stops at depth eight", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = [deep];
    assert.equal(renderValue(deep, 1000), `${"[".repeat(8)}[…]${"]".repeat(8)}`);
  });
});
