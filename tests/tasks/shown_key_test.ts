// shownKey: a lock's key, of any characters and any length, as one bounded line of a message.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { shownKey } from "../../src/tasks/shown_key.ts";
import { propertyOptions } from "../property.ts";

// Line breaks of any kind, controls, and lone surrogates: what must never be written as it is.
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("shownKey", () => {
  it("is one bounded line, and gives back a prefix of the key (the key itself when short)", () => {
    const key = fc.oneof(
      fc.string({ unit: "binary", maxLength: 400 }),
      fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)) }),
    );
    fc.assert(
      fc.property(key, (key) => {
        const shown = shownKey(key);
        assert.doesNotMatch(shown, UNSAFE);
        const cut = /^(".*")…\((\d+) chars\)$/s.exec(shown);
        const quoted = cut === null ? shown : cut[1]!;
        assert.ok(quoted.length <= 202, shown);
        const back = JSON.parse(quoted) as string;
        if (cut === null) assert.equal(back, key);
        else {
          assert.equal(Number(cut[2]), key.length);
          assert.ok(key.startsWith(back) && back.length < key.length, shown);
        }
      }),
      propertyOptions(),
    );
  });

  it("every character 0-255 alone, and a key of a megabyte", () => {
    for (let c = 0; c < 256; c++) {
      const shown = shownKey(String.fromCharCode(c));
      assert.doesNotMatch(shown, UNSAFE, `character ${c}`);
      assert.equal(JSON.parse(shown), String.fromCharCode(c));
    }
    const megabyte = "\n".repeat(1 << 20);
    assert.equal(shownKey(megabyte), `"${"\\n".repeat(100)}"…(1048576 chars)`);
    assert.equal(shownKey("order-42"), '"order-42"');
  });
});
