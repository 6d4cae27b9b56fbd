import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  earlierSqlContentHashes,
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

// Small alphabets, so that random texts often differ by line ends and BOMs alone.
const piece = fc.constantFrom("a", "\r", "\n", "\r\n", "é", ";", " ", "\ufeff");
const text = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(""));
const lineEnd = fc.constantFrom("\n", "\r\n", "\r");

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

  it("does not see a leading BOM or the final line ends, as Flyway's checksum does not", async () => {
    // Flyway's SqlMigrationResolverSmallTest.calculateChecksum: these two are the same file.
    assert.equal(
      await sqlContentHash(utf8("abc\ndef efg\nxyz")),
      await sqlContentHash(utf8("abc\r\ndef efg\nxyz\r\n")),
    );
    const base = await sqlContentHash(utf8("select 1;"));
    for (
      const same of ["\ufeffselect 1;", "select 1;\n", "\ufeffselect 1;\r\n", "select 1;\n\n\r\n"]
    ) {
      assert.equal(await sqlContentHash(utf8(same)), base, JSON.stringify(same));
    }
  });

  it("is the SHA-256 of the text without BOM and final line ends", async () => {
    assert.equal(
      await sqlContentHash(utf8("\ufeffselect 1;\r\n-- é\r\n\r\n")),
      await rawContentHash(utf8("select 1;\n-- é")),
    );
  });

  it("sees everything else: spaces, case, blank lines inside, a second BOM", async () => {
    const base = await sqlContentHash(utf8("select 1;\nselect 2;\n"));
    for (
      const other of [
        "select  1;\nselect 2;\n",
        "SELECT 1;\nselect 2;\n",
        "select 1;\n\nselect 2;\n",
        "select 1;select 2;\n",
        "select 1;\nselect 2;\n ",
        "\ufeff\ufeffselect 1;\nselect 2;\n",
        " select 1;\nselect 2;\n",
      ]
    ) {
      assert.notEqual(await sqlContentHash(utf8(other)), base, JSON.stringify(other));
    }
  });

  it("property: a BOM and final line ends added or removed never change it", async () => {
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.boolean(),
        fc.array(lineEnd, { maxLength: 3 }),
        async (t, bom, ends) => {
          const body = t.replace(/^\ufeff/, "").replace(/[\r\n]+$/, "");
          // A second BOM would become the first: one BOM is forgiven, not two.
          fc.pre(!body.startsWith("\ufeff"));
          const edited = `${bom ? "\ufeff" : ""}${body}${ends.join("")}`;
          assert.equal(await sqlContentHash(utf8(edited)), await sqlContentHash(utf8(t)));
        },
      ),
      propertyOptions(200),
    );
  });

  it("property: two texts hash alike exactly when they differ by line ends, a BOM, final line ends", async () => {
    // The rule written on strings, apart from the code's, which works on bytes.
    const normal = (t: string) =>
      t.replace(/^\ufeff/, "").replace(/\r\n?/g, "\n").replace(/\n+$/, "");
    await fc.assert(
      fc.asyncProperty(text, text, async (a, b) => {
        const same = (await sqlContentHash(utf8(a))) === (await sqlContentHash(utf8(b)));
        assert.equal(same, normal(a) === normal(b), `${JSON.stringify(a)} ${JSON.stringify(b)}`);
      }),
      propertyOptions(300),
    );
  });

  it("property: any other change is seen: a character inserted or removed", async () => {
    const other = fc.constantFrom("a", "é", ";", " ", "\t");
    await fc.assert(
      fc.asyncProperty(text, other, fc.nat(), async (t, c, at) => {
        const i = at % (t.length + 1);
        const before = await sqlContentHash(utf8(t));
        assert.notEqual(await sqlContentHash(utf8(t.slice(0, i) + c + t.slice(i))), before);
        const gone = [...t].findIndex((ch, j) => j >= i && !"\r\n\ufeff".includes(ch));
        if (gone >= 0) {
          const chars = [...t];
          chars.splice(gone, 1);
          assert.notEqual(await sqlContentHash(utf8(chars.join(""))), before);
        }
      }),
      propertyOptions(200),
    );
  });
});

describe("earlierSqlContentHashes", () => {
  // What records of earlier versions hold: the SHA-256 of the bytes, CRLF and CR read as LF.
  const earlier = (t: string) => rawContentHash(utf8(t.replace(/\r\n?/g, "\n")));

  it("holds the earlier rule's checksum of the file, and of it with a BOM or one final line end added or removed", async () => {
    const hashes = await earlierSqlContentHashes(utf8("select 1;\r\n"));
    for (
      const was of [
        "select 1;\n",
        "select 1;",
        "select 1;\n\n",
        "\ufeffselect 1;\n",
        "\ufeffselect 1;",
        "\ufeffselect 1;\n\n",
      ]
    ) {
      assert.ok(hashes.includes(await earlier(was)), JSON.stringify(was));
    }
    for (const not of ["select 1;\n\n\n", "select 2;\n", "\ufeff\ufeffselect 1;\n"]) {
      assert.ok(!hashes.includes(await earlier(not)), JSON.stringify(not));
    }
  });

  it("property: holds the earlier rule's checksum of every text the file differs from by a BOM or one final line end", async () => {
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.boolean(),
        fc.constantFrom("add", "remove", "keep"),
        async (t, bom, end) => {
          const lf = t.replace(/\r\n?/g, "\n").replace(/^\ufeff/, "");
          const body = end === "add" ? `${lf}\n` : end === "remove" ? lf.replace(/\n$/, "") : lf;
          const was = `${bom ? "\ufeff" : ""}${body}`;
          assert.ok((await earlierSqlContentHashes(utf8(t))).includes(await earlier(was)));
        },
      ),
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
