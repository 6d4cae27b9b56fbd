// What a key and a prefix may be, and the order listings give: against small reference models.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  compareKeys,
  keyProblem,
  MAX_KEY_BYTES,
  MAX_SEGMENT_BYTES,
  prefixProblem,
  utf8Length,
} from "../../src/storage/storage_key.ts";
import { propertyOptions } from "../property.ts";

const encoder = new TextEncoder();

// The reference: a key's segments, its bytes and its characters, each rule written plainly.
function referenceAccepts(key: string): boolean {
  if (key === "" || key.startsWith("/") || key.endsWith("/")) return false;
  // A folder separator on Windows: a key would name another file there than everywhere else.
  if (key.includes("\\")) return false;
  if (key.split("/").some((s) => s === "" || s === "." || s === "..")) return false;
  if (key.split("/").some((s) => encoder.encode(s).length > MAX_SEGMENT_BYTES)) return false;
  for (const char of key) {
    const code = char.codePointAt(0) as number;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return false;
    if (code >= 0xd800 && code <= 0xdfff) return false; // a lone surrogate, iterated alone
  }
  return encoder.encode(key).length <= MAX_KEY_BYTES;
}

// Keys from a grammar that reaches every rule: segments of ".", "..", "", control characters,
// lone surrogates, astral characters and plain text.
const segment = fc.oneof(
  fc.constantFrom(
    "",
    ".",
    "..",
    "...",
    "a",
    "é",
    "\u{1F600}",
    "\ud800",
    "\udc00",
    "\u0000",
    "\u001f",
    "\u007f",
    "\u0085",
    "a b",
    "\\",
    ":",
  ),
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.string({ unit: "binary", maxLength: 6 }),
);
const key = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join("/")),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: "grapheme-ascii", minLength: 1000, maxLength: 1030 }),
  fc.array(fc.string({ unit: "grapheme-ascii", minLength: 250, maxLength: 260 }), { maxLength: 4 })
    .map((parts) => parts.join("/")),
);

describe("keyProblem", () => {
  it("accepts exactly what the reference accepts", () => {
    fc.assert(
      fc.property(key, (k) => {
        assert.equal(keyProblem(k) === undefined, referenceAccepts(k), JSON.stringify(k));
      }),
      propertyOptions(500),
    );
  });

  it("says what is wrong, in words", () => {
    assert.equal(keyProblem(""), "a key is not empty");
    assert.equal(keyProblem("a/../b"), 'a key has no ".." segment');
    assert.equal(keyProblem("/etc/passwd"), 'a key does not start with "/"');
    assert.equal(keyProblem("a\nb"), "a key holds no control character");
    assert.equal(keyProblem("a/".repeat(512) + "a"), "a key is at most 1024 bytes, got 1025");
    assert.equal(keyProblem("é/".repeat(341) + "éé"), "a key is at most 1024 bytes, got 1027");
    assert.equal(
      keyProblem(`a/${"é".repeat(128)}`),
      "a key's segments are at most 255 bytes (a file name's limit), got 256",
    );
    assert.equal(keyProblem(42), "a key is a string");
    assert.equal(keyProblem("a/..\\..\\b"), 'a key holds no "\\" (a folder separator on Windows)');
    assert.equal(prefixProblem("..\\x/"), 'a prefix holds no "\\" (a folder separator on Windows)');
    assert.equal(keyProblem(undefined), "a key is a string");
  });

  it("takes every printable ASCII character but the separators, and non-ASCII text", () => {
    let printable = "";
    for (let code = 0x20; code < 0x7f; code++) {
      if (code !== 0x2f && code !== 0x5c) printable += String.fromCharCode(code);
    }
    assert.equal(keyProblem(printable), undefined);
    assert.equal(keyProblem("dossier/naïve \u{1F600}.txt"), undefined);
    assert.equal(keyProblem(`${"a".repeat(255)}/`.repeat(3) + "a".repeat(255)), undefined);
    assert.equal(keyProblem("a/".repeat(511) + "aa"), undefined);
  });
});

describe("prefixProblem", () => {
  it("takes the empty prefix, and any start of an accepted key", () => {
    assert.equal(prefixProblem(""), undefined);
    fc.assert(
      fc.property(key, fc.nat(), (k, cut) => {
        fc.pre(referenceAccepts(k));
        const prefix = k.slice(0, cut % (k.length + 1));
        // Cut within a surrogate pair, a prefix has a lone surrogate: that one is refused.
        fc.pre(!/[\ud800-\udbff]$/.test(prefix));
        assert.equal(prefixProblem(prefix), undefined, JSON.stringify(prefix));
      }),
      propertyOptions(300),
    );
  });

  it("refuses what no key starts with", () => {
    assert.match(prefixProblem("../") as string, /"\.\." segment/);
    assert.match(prefixProblem("a//") as string, /empty segment/);
    assert.match(prefixProblem("/a") as string, /start with "\/"/);
    assert.match(prefixProblem("a\r") as string, /control/);
    assert.match(prefixProblem(null) as string, /a prefix is a string/);
  });
});

describe("compareKeys", () => {
  it("orders as the keys' UTF-8 bytes do", () => {
    const compareBytes = (a: string, b: string): number => {
      const x = encoder.encode(a);
      const y = encoder.encode(b);
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
      }
      return x.length - y.length;
    };
    const text = fc.string({ unit: "grapheme", maxLength: 8 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        assert.equal(Math.sign(compareKeys(a, b)), Math.sign(compareBytes(a, b)));
      }),
      propertyOptions(1000),
    );
    assert.ok(compareKeys("\uE000", "\u{10000}") < 0, "U+E000 before U+10000, as UTF-8 orders");
    assert.ok("\uE000" > "\u{10000}", "where UTF-16 units order the other way");
  });

  it("counts UTF-8 bytes", () => {
    assert.equal(utf8Length("aé\u{1F600}"), 1 + 2 + 4);
  });
});
