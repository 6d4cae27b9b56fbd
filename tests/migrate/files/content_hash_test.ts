import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  jsonContentHash,
  rawContentHash,
  sqlContentHash,
} from "../../../src/migrate/files/content_hash.ts";
import { propertyOptions } from "../../property.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

// A JSON value as a migration file holds it: no -0 (JSON has none that survives a parse the same
// way), finite numbers only.
const jsonValue = fc.jsonValue({ maxDepth: 4, noUnicodeString: false }).map((v) =>
  JSON.parse(JSON.stringify(v))
);

/** The same value written another way: indented, CRLF, a BOM, keys in another order. */
function reformat(value: unknown, seed: number): string {
  const shuffle = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(shuffle);
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v).map(([k, x]) => [k, shuffle(x)] as const);
      if (seed % 2 === 1) entries.reverse();
      const out = {};
      for (const [k, x] of entries) {
        Object.defineProperty(out, k, { value: x, enumerable: true, writable: true });
      }
      return out;
    }
    return v;
  };
  let text = JSON.stringify(shuffle(value), null, seed % 3 === 0 ? 2 : seed % 3 === 1 ? "\t" : 0);
  if (seed % 5 === 0) text = text.replaceAll("\n", "\r\n");
  if (seed % 7 === 0) text = `\ufeff${text}`;
  return `${text}${seed % 4 === 0 ? "\n" : ""}`;
}

describe("jsonContentHash", () => {
  it("does not see whitespace, line endings, a BOM or key order", async () => {
    const a = await jsonContentHash(
      JSON.parse(`{"b": [1, 2.50, "x"], "a": {"y": null, "x": true}}`),
    );
    const b = await jsonContentHash(
      JSON.parse(`{\r\n  "a": {"x": true, "y": null},\r\n  "b": [1, 2.5, "x"]\r\n}\r\n`),
    );
    assert.equal(a, b);
  });

  it("is the SHA-256 of the RFC 8785 form", async () => {
    // RFC 8785 3.2.3: keys sorted by UTF-16 code units, numbers in ECMAScript form.
    const canonical = `{"a":1,"b":[1e+30,"\\u0001"]}`;
    assert.equal(
      await jsonContentHash(JSON.parse(`{"b": [1E30, "\\u0001"], "a": 1.0}`)),
      await rawContentHash(utf8(canonical)),
    );
  });

  it("sees every change of value", async () => {
    const base = { index_patterns: ["logs-*"], template: { settings: { number_of_shards: 1 } } };
    const variants = [
      { ...base, index_patterns: ["logs*"] },
      { ...base, template: { settings: { number_of_shards: 2 } } },
      { ...base, template: { settings: { number_of_shards: "1" } } },
      { ...base, priority: 0 },
      { ...base, index_patterns: ["logs-*", "logs-*"] },
    ];
    const hashes = new Set(await Promise.all([base, ...variants].map(jsonContentHash)));
    assert.equal(hashes.size, variants.length + 1);
  });

  it("keeps a __proto__ key as data", async () => {
    assert.notEqual(
      await jsonContentHash(JSON.parse(`{"__proto__": {"a": 1}}`)),
      await jsonContentHash(JSON.parse(`{}`)),
    );
  });

  it("property: formatting never changes it", async () => {
    await fc.assert(
      fc.asyncProperty(jsonValue, fc.nat(1000), async (value, seed) => {
        const text = reformat(value, seed);
        const parsed = JSON.parse(text.replace(/^\ufeff/, ""));
        assert.equal(await jsonContentHash(parsed), await jsonContentHash(value));
      }),
      propertyOptions(200),
    );
  });

  it("property: two values hash alike only when they are the same value", async () => {
    await fc.assert(
      fc.asyncProperty(jsonValue, jsonValue, async (a, b) => {
        const same = (await jsonContentHash(a)) === (await jsonContentHash(b));
        assert.equal(same, isDeepStrictEqual(a, b));
      }),
      propertyOptions(200),
    );
  });
});

describe("sqlContentHash", () => {
  it("does not see CRLF or CR line endings", async () => {
    const lf = await sqlContentHash(utf8("create table a (id int);\ninsert into a values (1);\n"));
    assert.equal(
      await sqlContentHash(utf8("create table a (id int);\r\ninsert into a values (1);\r\n")),
      lf,
    );
    assert.equal(
      await sqlContentHash(utf8("create table a (id int);\rinsert into a values (1);\r")),
      lf,
    );
  });

  it("is the raw hash of a file with LF endings: records of earlier versions still match", async () => {
    const bytes = utf8("select 1;\n-- é\n");
    assert.equal(await sqlContentHash(bytes), await rawContentHash(bytes));
  });

  it("sees everything else: spaces, case, a BOM", async () => {
    const base = await sqlContentHash(utf8("select 1;\n"));
    for (const other of ["select  1;\n", "SELECT 1;\n", "\ufeffselect 1;\n", "select 1;\n\n"]) {
      assert.notEqual(await sqlContentHash(utf8(other)), base, other);
    }
  });

  it("property: equals the raw hash of the text with LF endings", async () => {
    const piece = fc.constantFrom("a", "\r", "\n", "\r\n", "é", ";", " ");
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 40 }), async (pieces) => {
        const text = pieces.join("");
        assert.equal(
          await sqlContentHash(utf8(text)),
          await rawContentHash(utf8(text.replace(/\r\n?/g, "\n"))),
        );
      }),
      propertyOptions(200),
    );
  });
});

function isDeepStrictEqual(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
