import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import type { Placeholders } from "../../../src/config/connection_settings.ts";
import { replaceInJson, replaceInText } from "../../../src/migrate/files/placeholders.ts";
import { propertyOptions } from "../../property.ts";

const map = (entries: Record<string, string>): Placeholders => new Map(Object.entries(entries));
const AB = map({ a: "A", b: "B" });

/** Asserts that `run` throws a MigrationFileError for `file` whose message matches `pattern`. */
function throwsFileError(run: () => unknown, file: string, pattern: RegExp): void {
  assert.throws(run, (e: unknown) => {
    assert.ok(e instanceof MigrationFileError, String(e));
    assert.equal(e.file, file);
    assert.match(e.message, pattern);
    return true;
  });
}

/** A file of JSON, parsed as the runner parses it, for `replaceInJson`. */
function json(source: string, placeholders: Placeholders, file = "t.json"): unknown {
  return replaceInJson(JSON.parse(source), placeholders, file, source);
}

describe("replaceInText", () => {
  it("replaces every placeholder, several on a line, and leaves other $ alone", () => {
    assert.equal(replaceInText("x ${a} y", AB, "f.sql"), "x A y");
    assert.equal(replaceInText("${a}${b}-${a}\n${b}", AB, "f.sql"), "AB-A\nB");
    assert.equal(
      replaceInText("${dotted.name-1} ${_x}", map({ "dotted.name-1": "1", _x: "2" }), "f.sql"),
      "1 2",
    );
    assert.equal(replaceInText("cost: $5, $a, ${a}$", AB, "f.sql"), "cost: $5, $a, A$");
    assert.equal(replaceInText("$", AB, "f.sql"), "$");
    assert.equal(replaceInText("a $ {a} $", AB, "f.sql"), "a $ {a} $");
    assert.equal(replaceInText("$1 and $$ quoting $tag$", AB, "f.sql"), "$1 and $$ quoting $tag$");
  });

  it("turns $${ into a literal ${, never expanded", () => {
    assert.equal(replaceInText("$${a}", AB, "f.sql"), "${a}");
    assert.equal(replaceInText("$${ not a name", AB, "f.sql"), "${ not a name");
    assert.equal(replaceInText("$${", AB, "f.sql"), "${");
    // The last $ before { is the escape; the ones before it stay.
    assert.equal(replaceInText("$$${a}", AB, "f.sql"), "$${a}");
    assert.equal(replaceInText("$$$${a}", AB, "f.sql"), "$$${a}");
    assert.equal(replaceInText("$${a}${a}", AB, "f.sql"), "${a}A");
  });

  it("inserts a value as it is: a ${y} or $${ in it is not replaced again", () => {
    const values = map({ x: "${y}", y: "nope", e: "$${", empty: "" });
    assert.equal(replaceInText("[${x}]", values, "f.sql"), "[${y}]");
    assert.equal(replaceInText("[${e}]", values, "f.sql"), "[$${]");
    assert.equal(replaceInText("[${empty}]", values, "f.sql"), "[]");
  });

  it("refuses a ${ that does not start a well-formed ${name}, naming the line", () => {
    for (const bad of ["${}", "${ x }", "${x", "${x:default}", "${1x}", "${-x}", "${", "${x y}"]) {
      throwsFileError(
        () => replaceInText(`SELECT 1;\nSELECT '${bad}';\n`, AB, "V1__a.sql"),
        "V1__a.sql",
        /^V1__a\.sql: line 2: malformed placeholder .*; write \$\$\{ for a literal \$\{/,
      );
    }
    throwsFileError(
      () => replaceInText("${ x }", AB, "f.sql"),
      "f.sql",
      /line 1: malformed placeholder "\$\{ x \}"/,
    );
  });

  it("refuses an unknown placeholder, naming the file, the line and the name", () => {
    const text = "CREATE TABLE ${a}t (\n  id INT\n);\nCREATE INDEX ${prefix}i ON t (id);\n";
    throwsFileError(
      () => replaceInText(text, AB, "sql/V2__t.sql"),
      "sql/V2__t.sql",
      /^sql\/V2__t\.sql: line 4: unknown placeholder \$\{prefix\} \(configured: a, b\)$/,
    );
    // Windows line ends count the same.
    throwsFileError(
      () => replaceInText("a\r\nb\r\n${zz}\r\n", AB, "w.sql"),
      "w.sql",
      /line 3: unknown placeholder \$\{zz\}/,
    );
  });

  it("says where to configure placeholders when there are none", () => {
    throwsFileError(
      () => replaceInText("\n\n  ${prefix}", new Map(), "f.sql"),
      "f.sql",
      /^f\.sql: line 3: unknown placeholder \$\{prefix\}: migrations\.placeholders of the connection has none \(add it there, or write \$\$\{ for a literal \$\{\)$/,
    );
    // A file without placeholders needs none configured.
    assert.equal(replaceInText("SELECT '$${x}';", new Map(), "f.sql"), "SELECT '${x}';");
  });

  it("returns text without ${ as it is", () => {
    const text = "SELECT 1; -- $ and { and } and $$";
    assert.equal(replaceInText(text, new Map(), "f.sql"), text);
  });
});

describe("replaceInJson", () => {
  it("replaces in values and keys, in nested arrays and objects, leaving other leaves alone", () => {
    const source = JSON.stringify({
      index_patterns: ["${prefix}logs-*", ["${prefix}${a}", "$${prefix}"]],
      "${prefix}alias": { n: 1, t: true, z: null, s: "plain $" },
      template: { settings: { "index.number_of_shards": "${shards}" } },
    });
    const out = json(source, map({ prefix: "dev_", a: "A", shards: "2" }));
    assert.deepEqual(out, {
      index_patterns: ["dev_logs-*", ["dev_A", "${prefix}"]],
      dev_alias: { n: 1, t: true, z: null, s: "plain $" },
      template: { settings: { "index.number_of_shards": "2" } },
    });
  });

  it("inserts values as string content: quotes, backslashes and newlines need no escaping", () => {
    const out = json('{"q": "${v}"}', map({ v: 'say "hi"\\\n\u2028' }));
    assert.deepEqual(out, { q: 'say "hi"\\\n\u2028' });
    assert.deepEqual(JSON.parse(JSON.stringify(out)), out);
  });

  it("does not change its input, and returns a value without ${ as it is", () => {
    const source = '{"a": ["${a}", {"${b}": "${a}"}], "n": 1}';
    const input = JSON.parse(source);
    const out = replaceInJson(input, AB, "t.json", source);
    assert.deepEqual(input, JSON.parse(source));
    assert.deepEqual(out, { a: ["A", { B: "A" }], n: 1 });
    const plain = { a: ["$", { b: "x$" }], n: 1 };
    assert.equal(replaceInJson(plain, AB, "t.json", JSON.stringify(plain)), plain);
    assert.equal(replaceInJson(7, AB, "t.json", "7"), 7);
    assert.equal(replaceInJson(null, AB, "t.json", "null"), null);
  });

  it("keeps a __proto__ key an own data property, and pollutes no prototype", () => {
    const out = json('{"__proto__": {"polluted": "${a}"}, "b": "${b}"}', AB) as Record<
      string,
      unknown
    >;
    assert.ok(Object.hasOwn(out, "__proto__"));
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out), ["__proto__", "b"]);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, { polluted: "A" });
    assert.equal(JSON.stringify(out), '{"__proto__":{"polluted":"A"},"b":"B"}');

    // A placeholder whose value is __proto__, as a key.
    const made = json('{"${k}": {"polluted": true}}', map({ k: "__proto__" })) as object;
    assert.ok(Object.hasOwn(made, "__proto__"));
    assert.equal(Object.getPrototypeOf(made), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal((made as Record<string, unknown>).polluted, undefined);
  });

  it("names the line of an unknown or malformed placeholder in a value or a key", () => {
    const source =
      '{\n  "a": "${a}",\n  "${nokey}": 1,\n  "list": [\n    "x",\n    "${novalue}"\n  ]\n}\n';
    throwsFileError(
      () => json(source, map({ a: "A", nokey: "K" }), "idx/1.json"),
      "idx/1.json",
      /^idx\/1\.json: line 6: unknown placeholder \$\{novalue\} \(configured: a, nokey\)$/,
    );
    throwsFileError(
      () => json(source, map({ a: "A", novalue: "V" }), "idx/1.json"),
      "idx/1.json",
      /^idx\/1\.json: line 3: unknown placeholder \$\{nokey\} \(configured: a, novalue\)$/,
    );
    throwsFileError(
      () => json('{\n"a": 1,\n"b": "${ b }"}', AB),
      "t.json",
      /^t\.json: line 3: malformed placeholder "\$\{ b \}"/,
    );
  });

  it("finds the line of a placeholder written with \\u escapes; else names no line", () => {
    throwsFileError(
      () => json('{\n"a":\n "\\u0024{zz}"}', AB),
      "t.json",
      /^t\.json: line 3: unknown placeholder \$\{zz\}/,
    );
    // A source text that does not hold the value: a line would be a guess, so none is given.
    throwsFileError(
      () => replaceInJson({ settings: ["${zz}"] }, AB, "t.json", '{\n"other": 1}'),
      "t.json",
      /^t\.json: unknown placeholder \$\{zz\} at settings\[0\] \(configured: a, b\)$/,
    );
    throwsFileError(
      () => replaceInJson({ settings: ["${zz}"] }, AB, "t.json", '{\n"settings": ["x"]}'),
      "t.json",
      /^t\.json: unknown placeholder \$\{zz\} at settings\[0\] \(configured: a, b\)$/,
    );
    throwsFileError(() => json('\n"${zz}"', AB), "t.json", /^t\.json: line 2: unknown/);
  });

  it("refuses placeholders that make two keys of one object the same", () => {
    throwsFileError(
      () => json('{\n"A": 1,\n"${a}": 2}', AB),
      "t.json",
      /^t\.json: line 3: the key "\$\{a\}" becomes "A", which the object already has$/,
    );
  });
});

// Literal text, rich in $, { and }, to be written into a template with $${ for each ${.
const literal = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom("$", "{", "}", "$$", "${") },
    { weight: 3, arbitrary: fc.constantFrom("a", " ", "\n", "\r\n", "é", "\u{1f600}", '"', "\\") },
  ),
  maxLength: 12,
});
// A function, since "$$" in a replacement string means one "$".
const escape = (text: string): string => text.replaceAll("${", () => "$${");
const anyChar = fc.string({ minLength: 1, maxLength: 1, unit: "binary" });
const nameArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,6}$/);
const valueArb = fc.string({
  unit: fc.oneof(fc.constantFrom("$", "{", "}", "${x}", "$${", "\n"), anyChar),
  maxLength: 8,
});
type Part = { readonly text: string } | { readonly ref: number };
const partArb: fc.Arbitrary<Part> = fc.oneof(
  literal.map((text) => ({ text })),
  fc.nat(5).map((ref) => ({ ref })),
);

/**
 * The template for literal parts and references to `entries`, and the text it stands for.
 * Adjacent literals are one literal, escaped as a whole; a literal ending in $ cannot precede a
 * placeholder ($${name} is the escape), so such a literal gets a character more.
 */
function templateOf(
  parts: readonly Part[],
  entries: readonly (readonly [string, string])[],
): { template: string; expected: string } {
  const merged: Part[] = [];
  for (const p of parts) {
    const last = merged.at(-1);
    if ("text" in p && last !== undefined && "text" in last) {
      merged[merged.length - 1] = { text: last.text + p.text };
    } else merged.push(p);
  }
  let template = "";
  let expected = "";
  merged.forEach((p, i) => {
    if ("text" in p) {
      const text = i + 1 < merged.length && p.text.endsWith("$") ? `${p.text}_` : p.text;
      template += escape(text);
      expected += text;
    } else {
      const [name, value] = entries[p.ref % entries.length];
      template += `\${${name}}`;
      expected += value;
    }
  });
  return { template, expected };
}

describe("placeholders, property", () => {
  it("property: text without ${ comes back unchanged, whatever is configured", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.oneof(fc.constantFrom("$", "{", "}", "$ {", "$$"), anyChar) })
          .filter((t) => !t.includes("${")),
        fc.dictionary(nameArb, valueArb, { maxKeys: 3 }),
        (text, entries) => {
          assert.equal(replaceInText(text, map(entries), "f.sql"), text);
        },
      ),
      propertyOptions(500),
    );
  });

  it("property: a template of escaped literals and placeholders gives their concatenation", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(nameArb, valueArb), {
          minLength: 1,
          maxLength: 5,
          selector: ([n]) => n,
        }),
        fc.array(partArb, { maxLength: 8 }),
        (entries, parts) => {
          const { template, expected } = templateOf(parts, entries);
          assert.equal(replaceInText(template, new Map(entries), "f.sql"), expected);
        },
      ),
      propertyOptions(1000),
    );
  });

  it("property: replaceInJson keeps the shape (keys, lengths, non-string leaves)", () => {
    const entries: [string, string][] = [
      ["a", "A"],
      ["b.c", "${a}"],
      ["p", "$${"],
      ["e", ""],
      ["q", '"\\'],
    ];
    const placeholders: Placeholders = new Map(entries);
    const text = fc.array(partArb, { maxLength: 4 }).map((parts) =>
      templateOf(parts, entries).template
    );
    const leaf = fc.oneof(
      text,
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    const { node } = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(text, tie("node"), { maxKeys: 4 }),
      ),
    }));
    fc.assert(
      fc.property(node, (value) => {
        const source = JSON.stringify(value, null, 2);
        const input = JSON.parse(source);
        let out: unknown;
        try {
          out = replaceInJson(input, placeholders, "t.json", source);
        } catch (error) {
          // Two keys of an object that become one: refused, not merged.
          assert.ok(error instanceof MigrationFileError, String(error));
          assert.match(error.message, /which the object already has$/);
          return;
        }
        assert.deepEqual(input, JSON.parse(source), "the input is unchanged");
        sameShape(input, out, "$");
      }),
      propertyOptions(300),
    );
  });

  it("property: an unknown name always throws a MigrationFileError naming it and its line", () => {
    const known = map({ a: "A", prefix: "p_" });
    fc.assert(
      fc.property(
        literal.filter((t) => !t.endsWith("$")),
        nameArb.filter((n) => !known.has(n)),
        literal,
        fc.boolean(),
        (before, name, after, asJson) => {
          const template = `${escape(before)}\${${name}}${escape(after)}`;
          const line = asJson ? 3 : before.split("\n").length;
          const pattern = new RegExp(
            `^f: line ${line}: unknown placeholder \\$\\{${
              name.replaceAll(".", "\\.")
            }\\} \\(configured: a, prefix\\)$`,
          );
          if (asJson) {
            // Indented: the string sits on line 3.
            const source = JSON.stringify({ k: [template] }, null, 2);
            throwsFileError(
              () => replaceInJson(JSON.parse(source), known, "f", source),
              "f",
              pattern,
            );
          } else {
            throwsFileError(() => replaceInText(template, known, "f"), "f", pattern);
          }
        },
      ),
      propertyOptions(500),
    );
  });
});

/** Asserts that `b` has the shape of `a`: same kinds, key counts, lengths and non-string leaves. */
function sameShape(a: unknown, b: unknown, at: string): void {
  if (Array.isArray(a)) {
    assert.ok(Array.isArray(b), `${at} is an array`);
    assert.equal(b.length, a.length, `${at}.length`);
    a.forEach((item, i) => sameShape(item, b[i], `${at}[${i}]`));
  } else if (a !== null && typeof a === "object") {
    assert.ok(b !== null && typeof b === "object" && !Array.isArray(b), `${at} is an object`);
    assert.equal(Object.getPrototypeOf(b), Object.prototype, `${at} is a plain object`);
    const av = Object.values(a);
    const bv = Object.values(b);
    assert.equal(bv.length, av.length, `${at}: key count`);
    // Keys change with their placeholders, but their order does not.
    av.forEach((v, i) => sameShape(v, bv[i], `${at}.${Object.keys(a)[i]}`));
  } else if (typeof a === "string") {
    assert.equal(typeof b, "string", `${at} is a string`);
  } else {
    assert.ok(Object.is(a, b), `${at}: ${String(a)} unchanged`);
  }
}
