// The narrow XML reader of S3's answers: entities and references decoded, what S3 never sends
// refused, and nothing thrown on any input but its own error.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  childText,
  decodeXmlText,
  errorIn,
  escapeXml,
  readXml,
  s3ErrorOf,
  S3XmlError,
  type XmlElement,
} from "../../src/storage/s3_xml.ts";
import { propertyOptions } from "../property.ts";

// A code point XML 1.0 may hold.
const xmlCodePoint = fc.oneof(
  fc.constantFrom(0x9, 0xa, 0xd),
  fc.integer({ min: 0x20, max: 0xd7ff }),
  fc.integer({ min: 0xe000, max: 0xfffd }),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
);
const xmlText = fc.array(xmlCodePoint, { maxLength: 40 })
  .map((codes) => String.fromCodePoint(...codes));

interface Tree {
  readonly name: string;
  readonly text: string;
  readonly children: readonly Tree[];
}

const elementName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}$/);
const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.record({
    name: elementName,
    text: xmlText,
    children: fc.oneof(
      { maxDepth: 4, depthSize: "small" },
      fc.constant([]),
      fc.array(tie("node"), { maxLength: 3 }),
    ),
  }),
})).node;

// `node` written as XML: its text (escaped) first, then its elements, with an attribute to skip.
function written(node: Tree): string {
  const inner = escapeXml(node.text) + node.children.map(written).join("");
  return `<s3:${node.name} a="1" b='&lt;'>${inner}</s3:${node.name}>`;
}

// A tree as a plain object (fast-check's records have no prototype).
function plain(element: XmlElement | Tree): Tree {
  return {
    name: element.name,
    text: element.text,
    children: element.children.map(plain),
  };
}

describe("decodeXmlText", () => {
  it("decodes the five entities and decimal and hexadecimal references", () => {
    assert.equal(
      decodeXmlText("a&amp;b&lt;c&gt;d&quot;e&apos;f&#233;&#xE9;&#x1F600;&#128512;"),
      "a&b<c>d\"e'féé😀😀",
    );
    assert.equal(decodeXmlText("no reference"), "no reference");
  });

  it("refuses an & that starts no reference, an unknown entity, and characters XML forbids", () => {
    for (
      const text of [
        "a & b",
        "&amp",
        "&nbsp;",
        "&#0;",
        "&#xD800;",
        "&#x110000;",
        "&#12345678;",
        "&#x;",
        "&__proto__;",
        "&constructor;",
      ]
    ) {
      assert.throws(() => decodeXmlText(text), S3XmlError, text);
    }
  });

  it("gives back what escapeXml wrote, for any text XML can hold", () => {
    fc.assert(
      fc.property(xmlText, (text) => {
        assert.equal(decodeXmlText(escapeXml(text)), text);
      }),
      propertyOptions(),
    );
  });

  it("decodes any character reference XML can hold, decimal or hexadecimal", () => {
    fc.assert(
      fc.property(xmlCodePoint, fc.boolean(), (code, hex) => {
        const reference = hex ? `&#x${code.toString(16)};` : `&#${code};`;
        assert.equal(decodeXmlText(`<${reference}>`), `<${String.fromCodePoint(code)}>`);
      }),
      propertyOptions(),
    );
  });
});

describe("readXml", () => {
  it("reads a listing as S3 writes it, prefixes, declaration, comments and CDATA included", () => {
    const root = readXml(
      `\ufeff<?xml version="1.0" encoding="UTF-8"?>\n<!-- a comment -->\n` +
        `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\n` +
        `  <Contents><Key>a &amp; b/&#233;</Key><Size>3</Size></Contents>\n` +
        `  <Contents><Key><![CDATA[<raw> & ]]></Key><Empty/></Contents>\n` +
        `</ListBucketResult>\n`,
    );
    assert.equal(root.name, "ListBucketResult");
    const keys = root.children.map((entry) => childText(entry, "Key"));
    assert.deepEqual(keys, ["a & b/é", "<raw> & "]);
    assert.equal(childText(root.children[1], "Empty"), "");
    assert.equal(childText(root, "Missing"), undefined);
  });

  it("refuses a DOCTYPE, an unclosed or mismatched element, text outside the root, two roots", () => {
    for (
      const text of [
        "",
        "   ",
        "text",
        '<!DOCTYPE x [<!ENTITY e "boom">]><x>&e;</x>',
        "<a>",
        "<a></b>",
        "<a></a>trailing",
        "<a/><b/>",
        "<a x=1></a>",
        '<a x="1"y="2"></a>',
        "<a><!-- unclosed</a>",
        "<a><![CDATA[ unclosed</a>",
        "<>",
        "</a>",
        "<a>&bogus;</a>",
      ]
    ) {
      assert.throws(() => readXml(text), S3XmlError, JSON.stringify(text));
    }
  });

  it("refuses elements nested deeper than 64, without recursion", () => {
    const deep = (n: number) => "<a>".repeat(n) + "</a>".repeat(n);
    assert.equal(readXml(deep(64)).name, "a");
    assert.throws(() => readXml(deep(65)), /nested deeper than 64/);
    assert.throws(() => readXml("<a>".repeat(200_000)), S3XmlError);
  });

  it("reads back any tree it is written", () => {
    fc.assert(
      fc.property(tree, (node) => {
        assert.deepEqual(plain(readXml(written(node))), plain(node));
      }),
      propertyOptions(),
    );
  });

  it("throws nothing but S3XmlError, on any text", () => {
    const fragment = fc.constantFrom(
      "<",
      ">",
      "</",
      "/>",
      "<a>",
      "</a>",
      "<b x='1'>",
      "&",
      "&amp;",
      "&#",
      "&#x41;",
      ";",
      "<?",
      "?>",
      "<!--",
      "-->",
      "<![CDATA[",
      "]]>",
      "<!DOCTYPE",
      '"',
      "'",
      "=",
      " ",
      "é",
    );
    const texts = fc.oneof(
      fc.string({ maxLength: 80, unit: "binary" }),
      fc.array(fc.oneof(fragment, fc.string({ maxLength: 3 })), { maxLength: 30 })
        .map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(texts, (text) => {
        try {
          readXml(text);
        } catch (error) {
          assert.ok(error instanceof S3XmlError, String(error));
          assert.match(error.message, /^S3 answered malformed XML: /);
        }
      }),
      propertyOptions(300),
    );
  });

  it("reads in time linear in the text, whatever it holds", () => {
    const started = performance.now();
    for (
      const text of [
        `<a${" ".repeat(1_000_000)}`,
        `<a ${"b".repeat(1_000_000)}`,
        `<a>${"&amp;".repeat(200_000)}</a>`,
        `<a>${"<b/>".repeat(200_000)}</a>`,
      ]
    ) {
      try {
        readXml(text);
      } catch (error) {
        assert.ok(error instanceof S3XmlError);
      }
    }
    assert.ok(performance.now() - started < 5_000, "took over 5 s");
  });
});

describe("S3 <Error> answers", () => {
  it("reads Code and Message, and nothing from what is no <Error>", () => {
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>` +
      `<Message>Access &amp; Denied</Message><RequestId>1</RequestId></Error>`;
    assert.deepEqual(s3ErrorOf(body), { code: "AccessDenied", message: "Access & Denied" });
    assert.deepEqual(errorIn(readXml("<Error/>")), { code: "", message: "" });
    assert.equal(s3ErrorOf("<html>Bad Gateway</html>"), undefined);
    assert.equal(s3ErrorOf("Bad Gateway"), undefined);
    assert.equal(s3ErrorOf(""), undefined);
  });
});
