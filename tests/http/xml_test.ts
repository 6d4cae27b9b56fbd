import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { toXml } from "../../src/http/xml.ts";
import { propertyOptions } from "../property.ts";

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

// XML 1.0's Char production (section 2.2), as a reference model apart from the writer's own check.
function isXmlChar(cp: number): boolean {
  return cp === 0x9 || cp === 0xA || cp === 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
    (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

/**
 * A well-formedness check for what the writer can produce (elements and escaped text, no
 * attributes): tags balance, there is exactly one root, and text holds no markup characters.
 * Returns the text of every leaf element, unescaped, in document order.
 */
function parseWritten(xml: string): { root: string; leaves: string[] } {
  assert.ok(xml.startsWith(DECLARATION), xml);
  const body = xml.slice(DECLARATION.length);
  const stack: string[] = [];
  const leaves: string[] = [];
  let roots = 0;
  let root = "";
  let last = 0;
  let openedLast: string | undefined;
  for (const m of body.matchAll(/<(\/?)([^<>/\s]+)(\/?)>/g)) {
    const between = body.slice(last, m.index);
    assert.doesNotMatch(between, /[<>]/, `markup outside a tag in ${xml}`);
    assert.doesNotMatch(between.replace(/&(amp|lt|gt|quot|apos|#13);/g, ""), /&/, xml);
    // A raw CR would read back as LF.
    assert.doesNotMatch(between, /\r/, xml);
    if (between !== "") assert.ok(stack.length > 0, `text outside the root in ${xml}`);
    last = m.index + m[0].length;
    const [, close, name, empty] = m;
    if (close) {
      assert.equal(stack.pop(), name, `unbalanced </${name}> in ${xml}`);
      if (openedLast === name) {
        leaves.push(
          between.replace(
            /&(amp|lt|gt|quot|apos|#13);/g,
            (_, e: string) =>
              ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#13": "\r" })[e]!,
          ),
        );
      } else {
        assert.equal(between, "", `text beside elements in ${xml}`);
      }
      openedLast = undefined;
    } else {
      assert.equal(between, "", `text beside elements in ${xml}`);
      openedLast = empty ? undefined : name;
      if (stack.length === 0) {
        roots++;
        root = name;
      }
      if (!empty) stack.push(name);
    }
  }
  assert.equal(body.slice(last), "", `text after the root in ${xml}`);
  assert.deepEqual(stack, [], `unclosed elements in ${xml}`);
  assert.equal(roots, 1, `${roots} root elements in ${xml}`);
  return { root, leaves };
}

describe("toXml", () => {
  it("gives one root element for every shape of value", () => {
    const cases: [unknown, string][] = [
      [{ user: { id: 1, name: "Ada" } }, "<user><id>1</id><name>Ada</name></user>"],
      [{ a: 1, b: 2 }, "<response><a>1</a><b>2</b></response>"],
      // A property holding a list repeats its element; at the root that needs a wrapper.
      [{ a: [1, 2] }, "<response><a>1</a><a>2</a></response>"],
      [[1, 2], "<response><item>1</item><item>2</item></response>"],
      [{ a: [[1, 2], 3] }, "<response><a><item>1</item><item>2</item></a><a>3</a></response>"],
      [{}, "<response></response>"],
      [{ a: [] }, "<response></response>"],
      [5, "<response>5</response>"],
      [null, "<response/>"],
      [{ a: null }, "<a/>"],
      [{ a: true }, "<a>true</a>"],
    ];
    for (const [value, want] of cases) {
      assert.equal(toXml(value), DECLARATION + want, JSON.stringify(value));
      parseWritten(toXml(value));
    }
  });

  it("reads values as JSON.stringify does: toJSON, undefined left out, null items", () => {
    assert.equal(
      toXml({ at: new Date(0) }),
      `${DECLARATION}<at>1970-01-01T00:00:00.000Z</at>`,
    );
    assert.equal(toXml({ a: 1, b: undefined }), `${DECLARATION}<a>1</a>`);
    assert.equal(toXml({ a: [undefined, 1] }), `${DECLARATION}<response><a/><a>1</a></response>`);
  });

  it("gives one root even when nothing is written: a skipped root or only skipped properties", () => {
    assert.equal(toXml({ a: { toJSON: () => undefined } }), `${DECLARATION}<response></response>`);
    assert.equal(toXml(() => 1), `${DECLARATION}<response/>`);
    assert.equal(toXml(Symbol("s")), `${DECLARATION}<response/>`);
    assert.equal(toXml({ toJSON: () => undefined }), `${DECLARATION}<response/>`);
  });

  it("follows JSON further: non-finite numbers are null, boxed values unboxed, skipped items null", () => {
    assert.equal(toXml({ r: { a: NaN, b: -Infinity } }), `${DECLARATION}<r><a/><b/></r>`);
    assert.equal(
      toXml({ r: { n: new Number(5), s: new String("x"), b: new Boolean(false) } }),
      `${DECLARATION}<r><n>5</n><s>x</s><b>false</b></r>`,
    );
    assert.equal(toXml({ a: [() => 1, 2] }), `${DECLARATION}<response><a/><a>2</a></response>`);
    // toJSON giving a list under a key: the key's element repeats, as for a list given directly.
    assert.equal(
      toXml({ r: { a: { toJSON: () => [1, 2] } } }),
      `${DECLARATION}<r><a>1</a><a>2</a></r>`,
    );
    // Where JSON throws, XML writes the digits.
    assert.equal(toXml({ n: 12345678901234567890n }), `${DECLARATION}<n>12345678901234567890</n>`);
  });

  it("writes a CR as a reference, so that it reads back as a CR", () => {
    assert.equal(toXml({ s: "a\rb\r\n" }), `${DECLARATION}<s>a&#13;b&#13;\n</s>`);
  });

  it("escapes markup and quotes in text", () => {
    assert.equal(
      toXml({ n: `<a href="x">Tom & 'Jerry'</a>` }),
      `${DECLARATION}<n>&lt;a href=&quot;x&quot;&gt;Tom &amp; &apos;Jerry&apos;&lt;/a&gt;</n>`,
    );
  });

  it("refuses what would not parse: bad names, forbidden characters, cycles", () => {
    // A colon would name an undeclared namespace prefix.
    for (const name of ["bad name", "1a", "", "a<b", "@_id", "#text", "a:b", "xmlns:a"]) {
      assert.throws(() => toXml({ a: { [name]: 1 } }), /XML element name/, name);
    }
    // A refused name is quoted escaped: it may be a client's, on its way to a log.
    assert.throws(
      () => toXml({ a: { "a\nb\u2028": 1 } }),
      (error: unknown) => error instanceof TypeError && error.message.includes('"a\\nb\\u2028"'),
    );
    for (const s of ["\0", "a\x01b", "\x1B[31m", "\uFFFE", "\uD800", "x\uDC00"]) {
      assert.throws(() => toXml({ s }), /XML 1\.0 forbids/, JSON.stringify(s));
    }
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    assert.throws(() => toXml({ loop }), /circular/);
    const list: unknown[] = [];
    list.push({ list });
    assert.throws(() => toXml({ list }), /circular/);
  });

  it("keeps a value that appears twice without being a cycle", () => {
    const shared = { id: 1 };
    assert.equal(
      toXml({ r: { a: shared, b: shared } }),
      `${DECLARATION}<r><a><id>1</id></a><b><id>1</id></b></r>`,
    );
  });

  it("property: any string is written back exactly, or refused when XML cannot hold it", () => {
    // Halves of a surrogate pair on their own, or meeting by chance, and the edges of the ranges.
    const unit = fc.oneof(
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
      fc.constantFrom("\uD83D", "\uDE00", "\uFFFE", "\uFFFD", "\x0B", "\t", "\x7F", "&"),
    );
    fc.assert(
      fc.property(fc.string({ unit }), (s) => {
        const allowed = [...s].every((c) => isXmlChar(c.codePointAt(0)!));
        if (!allowed) {
          assert.throws(() => toXml({ s }), /XML 1\.0 forbids/);
          return;
        }
        assert.deepEqual(parseWritten(toXml({ s })).leaves, [s]);
      }),
      propertyOptions(300),
    );
  });

  it("property: any JSON value gives a well-formed document with one root, or is refused for a character", () => {
    const key = fc.stringMatching(/^[A-Za-z_\u00C0-\u00D6\u4E00-\u4E20][\w.\u00B7-]{0,8}$/);
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom(null, true, false),
        fc.integer(),
        fc.double(),
        fc.string({ unit: "binary" }),
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(key, tie("value"), { maxKeys: 4 }),
      ),
    })).value;
    const strings = (v: unknown): string[] =>
      typeof v === "string"
        ? [v]
        : v !== null && typeof v === "object"
        ? Object.values(v).flatMap(strings)
        : [];
    fc.assert(
      fc.property(json.filter((v) => typeof v !== "string"), (value) => {
        const bad = strings(value).some((t) => [...t].some((c) => !isXmlChar(c.codePointAt(0)!)));
        if (bad) {
          assert.throws(() => toXml(value), /XML 1\.0 forbids/);
          return;
        }
        const { root } = parseWritten(toXml(value));
        const single = value !== null && typeof value === "object" && !Array.isArray(value) &&
          Object.keys(value).length === 1 && !Array.isArray(Object.values(value)[0]);
        assert.equal(root, single ? Object.keys(value)[0] : "response");
      }),
      propertyOptions(300),
    );
  });
});
