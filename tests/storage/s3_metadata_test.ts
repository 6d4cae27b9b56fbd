// Metadata as x-amz-meta-* headers: plain ASCII as it is, anything else as RFC 2047 encoded-words,
// and any value read back as it was written, whether the store decodes the words (S3) or keeps
// them (S3Proxy).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeMetadataValue,
  encodeMetadataValue,
  metadataHeaders,
  metadataOf,
} from "../../src/storage/s3_metadata.ts";
import { propertyOptions } from "../property.ts";

// What a header value may be, as fetch sends it: printable ASCII, spaces inside.
const HEADER_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

describe("encodeMetadataValue", () => {
  it("keeps plain ASCII as it is", () => {
    for (const value of ["", "plain", "a b", "x=1;y=2", "?=", "=", "a?b"]) {
      assert.equal(encodeMetadataValue(value), value);
    }
  });

  it("encodes non-ASCII, spaces at either end, control characters and what reads as a word", () => {
    assert.equal(encodeMetadataValue("é"), "=?UTF-8?B?w6k=?=");
    for (const value of [" lead", "trail ", "tab\there", "=?UTF-8?B?w6k=?=", "a=?b", "ü"]) {
      const encoded = encodeMetadataValue(value);
      assert.match(
        encoded,
        /^=\?UTF-8\?B\?[A-Za-z0-9+/=]*\?=(?: =\?UTF-8\?B\?[A-Za-z0-9+/=]*\?=)*$/,
      );
      // A control character is written encoded, and read as it was sent: the core refuses
      // it in a write, and the decoder will not put one into the app's metadata.
      assert.equal(decodeMetadataValue(encoded), value.includes("\t") ? encoded : value);
    }
  });

  it("keeps each encoded-word to 75 characters, cut between characters", () => {
    const value = "😀".repeat(40) + "é".repeat(30);
    const encoded = encodeMetadataValue(value);
    const words = encoded.split(" ");
    assert.ok(words.length > 1);
    for (const word of words) {
      assert.ok(word.length <= 75, word);
      assert.doesNotThrow(() => decodeMetadataValue(word));
      assert.doesNotMatch(decodeMetadataValue(word), /\ufffd/);
    }
    assert.equal(decodeMetadataValue(encoded), value);
  });

  it("writes a header value for any text, and reads it back as it was", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 60 });
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ maxLength: 60 })), (value) => {
        const wellFormed = value.isWellFormed();
        // What a write takes: no control character (the core refuses them before any I/O).
        // deno-lint-ignore no-control-regex -- the characters refused
        fc.pre(wellFormed && !/[\u0000-\u001f\u007f]/.test(value));
        const encoded = encodeMetadataValue(value);
        assert.match(encoded, HEADER_VALUE);
        assert.equal(decodeMetadataValue(encoded), value);
      }),
      propertyOptions(),
    );
  });
});

describe("decodeMetadataValue", () => {
  it("decodes what S3 answers: B and Q words, words in a row, other charsets", () => {
    assert.equal(decodeMetadataValue("=?utf-8?b?w6k=?="), "é");
    assert.equal(decodeMetadataValue("=?UTF-8?Q?caf=C3=A9_au_lait?="), "café au lait");
    // An encoder that cut a character between two words.
    assert.equal(decodeMetadataValue("=?UTF-8?B?ww==?= =?UTF-8?B?qQ==?="), "é");
    assert.equal(decodeMetadataValue("=?UTF-8?Q?=C3?= =?UTF-8?Q?=A9?="), "é");
    assert.equal(decodeMetadataValue("=?ISO-8859-1?Q?caf=E9?="), "café");
    assert.equal(decodeMetadataValue("a =?UTF-8?B?w6k=?= b"), "a é b");
  });

  it("leaves as it is what does not decode", () => {
    for (
      const value of [
        "plain",
        "=?UTF-8?B?!!!?=",
        "=?no-such-charset?B?w6k=?=",
        "=?UTF-8?B?/w==?=",
        "=?UTF-8?Q?=ZZ?=",
        "=?UTF-8?X?abc?=",
      ]
    ) {
      assert.equal(decodeMetadataValue(value), value);
    }
    assert.equal(decodeMetadataValue("=?UTF-8?B?!!!?= =?UTF-8?B?w6k=?="), "=?UTF-8?B?!!!?= é");
    // A line break a store (or someone before it) encoded: a write would refuse it, a read keeps
    // it out of the app's metadata, and so of its logs.
    assert.equal(decodeMetadataValue("=?UTF-8?Q?a=0D=0Ab?="), "=?UTF-8?Q?a=0D=0Ab?=");
    assert.equal(decodeMetadataValue("=?UTF-8?B?AA==?="), "=?UTF-8?B?AA==?=");
  });
});

describe("metadata headers", () => {
  it("writes x-amz-meta-<name> headers, and reads them back by lower-case name", () => {
    const written = metadataHeaders(Object.fromEntries([
      ["owner", "zoë"],
      ["plain", "yes"],
      ["__proto__", "kept"],
    ]));
    assert.deepEqual(Object.keys(written).sort(), [
      "x-amz-meta-__proto__",
      "x-amz-meta-owner",
      "x-amz-meta-plain",
    ]);
    const headers = new Headers({ ...written, "content-type": "text/plain", "X-Amz-Meta-": "" });
    const read = metadataOf(headers);
    assert.equal(read.owner, "zoë");
    assert.equal(read.plain, "yes");
    assert.ok(Object.hasOwn(read, "__proto__"));
    assert.equal(Object.getPrototypeOf(read), Object.prototype);
    assert.equal(Object.keys(read).length, 3);
  });
});
