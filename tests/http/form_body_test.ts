import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import { multipartBody, urlEncodedBody } from "../../src/http/form_body.ts";
import { formBodyWork, formFields, queryValues } from "../../src/http/query_string.ts";
import { countDecodes } from "../decoder_spy.ts";
import { propertyOptions } from "../property.ts";

const encoder = new TextEncoder();
// A field of any text, `&`, `=`, `+`, `%` and `#` among it.
const text = fc.string({
  unit: fc.constantFrom("a", "&", "=", "+", "%", "%2", "%41", "#", "é", " "),
});

/** What a field reads as: its value, or the status it is refused with. */
function outcome(read: () => string | undefined): string | number | undefined {
  try {
    return read();
  } catch (error) {
    assert.ok(error instanceof HttpException, String(error));
    return error.status.getValue();
  }
}

describe("formFields (property)", () => {
  it("reads a text as queryValues reads it as a query, where a # is sent as %23", () => {
    fc.assert(
      fc.property(text, fc.constantFrom("a", "a b", "é", "#"), (body, name) => {
        const query = body.replaceAll("#", "%23");
        assert.deepEqual(
          outcome(() => formFields(body)(name)),
          outcome(() => queryValues(`/p?${query}`, name, true)[0]),
        );
      }),
      propertyOptions(300),
    );
  });
});

// The reference model: the WHATWG urlencoded parser (URLSearchParams's), over the body's bytes,
// with a fatal UTF-8 decode that keeps a byte-order mark in place of its lenient one. A name that
// is not UTF-8 matches nothing; the first value of the name read, if not UTF-8, is a 400.
const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const isHexByte = (b: number | undefined) =>
  b !== undefined &&
  ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66));

function modelDecode(bytes: Uint8Array): string | undefined {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x2b) out.push(0x20);
    else if (b === 0x25 && isHexByte(bytes[i + 1]) && isHexByte(bytes[i + 2])) {
      out.push(parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16));
      i += 2;
    } else out.push(b);
  }
  try {
    return fatalUtf8.decode(Uint8Array.from(out));
  } catch {
    return undefined;
  }
}

/** The model's pairs: each name (`undefined` when not UTF-8) with its value's bytes. */
function modelPairs(body: Uint8Array): [string | undefined, Uint8Array][] {
  const pairs: [string | undefined, Uint8Array][] = [];
  for (let from = 0;;) {
    let to = body.indexOf(0x26, from);
    if (to === -1) to = body.length;
    const pair = body.subarray(from, to);
    const equals = pair.indexOf(0x3d);
    pairs.push(
      equals === -1
        ? [modelDecode(pair), new Uint8Array(0)]
        : [modelDecode(pair.subarray(0, equals)), pair.subarray(equals + 1)],
    );
    if (to === body.length) return pairs;
    from = to + 1;
  }
}

function modelParam(body: Uint8Array, name: string): string | number | undefined {
  const found = modelPairs(body).find(([key]) => key === name);
  if (found === undefined) return undefined;
  return modelDecode(found[1]) ?? 400;
}

describe("urlEncodedBody (property, against a reference model)", () => {
  // Bodies of any bytes, with the pieces that matter more often than chance would give them.
  const piece = fc.oneof(
    fc.integer({ min: 0, max: 255 }).map((b) => Uint8Array.of(b)),
    fc.constantFrom(
      "&",
      "=",
      "+",
      "%",
      "%2",
      "%zz",
      "a",
      "%41",
      "%61",
      "%C3%A9",
      "%c3",
      "%A9",
      "%FF",
      "%EF%BB%BF",
      "%ED%A0%80",
      "%F0%9F%98%80",
      "%F4%90%80%80",
      "%E0%80%80",
      "é",
      "\ufeff",
      "\u{1F600}",
    ).map((t) => encoder.encode(t)),
  );
  const body = fc.array(piece, { maxLength: 24 }).map((pieces) =>
    Uint8Array.from(pieces.flatMap((p) => [...p]))
  );

  it("reads the first value of every name as the model does: the value, absent, or a 400", () => {
    fc.assert(
      fc.property(body, (bytes) => {
        const form = urlEncodedBody(bytes);
        const names = new Set(["a", "a b", "é", "\ufeffa", "\ufeff", "A", "%", "😀"]);
        for (const [key] of modelPairs(bytes)) if (key !== undefined && key !== "") names.add(key);
        for (const name of names) {
          assert.deepEqual(outcome(() => form.param(name)), modelParam(bytes, name), name);
        }
      }),
      propertyOptions(500),
    );
  });

  it("the model is URLSearchParams's reading wherever every name and value is UTF-8", () => {
    fc.assert(
      fc.property(body, (bytes) => {
        const pairs = modelPairs(bytes);
        fc.pre(
          pairs.every(([key, value]) => key !== undefined && modelDecode(value) !== undefined),
        );
        // URLSearchParams is given text, and a body is bytes: each byte past ASCII goes as its
        // percent-encoding, which the WHATWG parser decodes to the same byte. (Given raw text,
        // Node's URLSearchParams misreads some: "é%61%2" as "\ufffda%2", on Node 20 and 26.)
        const text = [...bytes].map((b) =>
          b < 0x80 ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`
        ).join("");
        // The `&` before: the constructor would drop a leading `?`, the parser never does.
        const reference = new URLSearchParams(`&${text}`);
        for (const [key] of pairs) {
          if (key !== "") {
            assert.equal(modelParam(bytes, key as string), reference.get(key as string));
          }
        }
      }),
      propertyOptions(300),
    );
  });
});

describe("urlEncodedBody (property)", () => {
  it("reads raw bytes past ASCII as their percent-encoding", () => {
    const bytes = fc.array(
      fc.oneof(
        fc.integer({ min: 0, max: 255 }),
        fc.constantFrom(...encoder.encode("v=&+%")),
      ),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(bytes, (list) => {
        const raw = Uint8Array.from([...encoder.encode("v="), ...list]);
        const encoded = [...raw].map((b) =>
          b < 0x80 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase()}`
        ).join("");
        assert.deepEqual(
          outcome(() => urlEncodedBody(raw).param("v")),
          outcome(() => formFields(encoded)("v")),
        );
      }),
      propertyOptions(300),
    );
  });

  it("keeps a leading byte-order mark, raw or encoded: it is part of the first name", () => {
    for (
      const body of [Uint8Array.of(0xef, 0xbb, 0xbf, ...encoder.encode("a=1")), "%EF%BB%BFa=1"]
    ) {
      const form = urlEncodedBody(typeof body === "string" ? encoder.encode(body) : body);
      assert.equal(form.param("a"), undefined, String(body));
      assert.equal(form.param("\ufeffa"), "1", String(body));
    }
    assert.equal(urlEncodedBody(Uint8Array.of(0x61, 0x3d, 0xef, 0xbb, 0xbf)).param("a"), "\ufeff");
  });

  it("is no object: __proto__ and constructor are names like any other", () => {
    const body = urlEncodedBody(encoder.encode("__proto__=a&constructor=b&toString=c"));
    assert.equal(body.param("__proto__"), "a");
    assert.equal(body.param("constructor"), "b");
    assert.equal(body.param("toString"), "c");
    assert.equal(body.param("hasOwnProperty"), undefined);
    assert.equal(body.part("__proto__"), undefined);
  });
});

// A body's cost is counted in work, not time: a body of n pairs is split once (n pairs) and each
// name decoded once, whatever the number of parameters read; nothing is done once a byte.
describe("urlEncodedBody (work)", () => {
  it("splits a body into its pairs once and decodes each name once, for any number of parameters", () => {
    const pairs = 5000;
    const body = Array.from({ length: pairs }, (_, i) => `k%5F${i}=v${i}`).join("&");
    const names = ["user", "password", "a", "b", "c", "d", "e", "f", "k_4999", "k_0"];
    const before = { ...formBodyWork };
    const form = urlEncodedBody(encoder.encode(body));
    const read = names.map((name) => form.param(name));
    assert.deepEqual(read.slice(-2), ["v4999", "v0"]);
    assert.equal(formBodyWork.pairs - before.pairs, pairs);
    const decodes = formBodyWork.decodes - before.decodes;
    assert.ok(decodes <= pairs + names.length, `${decodes} decodes`);
  });

  it("writes a body's raw bytes past ASCII as their encoding in one decode, not one a byte", async () => {
    const raw = new Uint8Array(20_000).map((_, i) => i % 2 === 0 ? 0x26 : 0xff); // &\xff...
    const counts = await countDecodes(() => {
      assert.equal(urlEncodedBody(raw).param("password"), undefined);
    });
    assert.ok(counts.calls <= 2, `${counts.calls} decodes`);
  });

  it("tells bytes that are not UTF-8 without an exception, the 400 of the parameter read aside", async () => {
    const body = Uint8Array.from([
      ...encoder.encode("&%FF".repeat(2000) + "&%C3(=1&%ED%A0%80=2&%F4%90%80%80=3"),
      ...new Uint8Array(4000).map((_, i) => i % 2 === 0 ? 0x26 : 0xff),
      ...encoder.encode("&bad=%E2%82&ok=%E2%82%AC"),
    ]);
    const form = urlEncodedBody(body);
    const counts = await countDecodes(() => {
      assert.equal(form.param("password"), undefined);
      assert.equal(form.param("ok"), "\u20ac");
      assert.throws(
        () => form.param("bad"),
        /Request parameter 'bad' is not valid UTF-8 \(its percent-encoded bytes\)/,
      );
    });
    assert.equal(counts.throws, 0);
  });
});

describe("multipartBody", () => {
  it("reads text parts as parameters, never a file part, and refuses bytes that are not UTF-8", () => {
    const part = (name: string, body: number[], filename?: string) => ({
      name,
      filename,
      contentType: undefined,
      body: Uint8Array.from(body),
    });
    const body = multipartBody([
      part("f", [0x61], "f.txt"),
      part("f", [0x62]),
      part("bad", [0xff]),
      part("__proto__", [0x63]),
    ]);
    assert.equal(body.param("f"), "b");
    assert.equal(body.part("f")?.filename, "f.txt");
    assert.equal(body.param("__proto__"), "c");
    assert.equal(body.param("constructor"), undefined);
    assert.throws(() => body.param("bad"), /Request parameter 'bad' is not valid UTF-8/);
    // A leading byte-order mark is text the client sent.
    assert.equal(multipartBody([part("b", [0xef, 0xbb, 0xbf, 0x78])]).param("b"), "\ufeffx");
  });
});
