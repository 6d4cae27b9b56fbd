import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { safeFilename } from "../../mod.ts";
import { propertyOptions } from "../property.ts";

const isControl = (c: number) => c <= 0x1f || (c >= 0x7f && c <= 0x9f);

// Every byte value, as the character a name decoded from Latin-1 would hold, and some past them.
const anyByte = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
const nameUnit = fc.oneof(
  anyByte,
  fc.constantFrom("/", "\\", ".", "..", "é", "😀", "\u2028", "\ufeff"),
);

describe("safeFilename", () => {
  it("every byte value: a control character is dropped, / and \\ cut the folders off, the rest is kept", () => {
    for (let byte = 0; byte < 256; byte++) {
      const c = String.fromCharCode(byte);
      const expected = isControl(byte) ? "ab" : c === "/" || c === "\\" ? "b" : `a${c}b`;
      assert.equal(safeFilename(`a${c}b`), expected, `byte ${byte}`);
    }
  });

  it("(property) leaves no folder, no control character and no . or ..: the last segment, cleaned", () => {
    fc.assert(
      fc.property(fc.array(nameUnit, { maxLength: 12 }).map((u) => u.join("")), (name) => {
        const safe = safeFilename(name);
        assert.ok(!/[/\\]/.test(safe), JSON.stringify(safe));
        for (const ch of safe) assert.ok(!isControl(ch.codePointAt(0)!), JSON.stringify(safe));
        assert.ok(safe !== "." && safe !== "..", JSON.stringify(safe));
        // What is kept is what the client sent after its last separator, controls dropped.
        const clean = [...name].filter((ch) => !isControl(ch.codePointAt(0)!)).join("");
        assert.ok(clean.endsWith(safe), `${JSON.stringify(clean)} / ${JSON.stringify(safe)}`);
        assert.equal(safeFilename(safe), safe, "cleaning twice changes nothing");
      }),
      propertyOptions(500),
    );
  });

  it("names a browser sends keep their text", () => {
    for (const name of ["photo.png", "a b.pdf", "naïve café.txt", "😀.gif", ".profile", "..."]) {
      assert.equal(safeFilename(name), name);
    }
    assert.equal(safeFilename("C:\\fakepath\\photo.png"), "photo.png");
    assert.equal(safeFilename("dir/"), "");
    assert.equal(safeFilename("a/."), "");
    assert.equal(safeFilename(".\u0000."), "");
  });
});
