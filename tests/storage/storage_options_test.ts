// The options of ObjectStorage's operations: what reaches a header is refused unless it is safe.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkedContentType,
  checkedLimit,
  checkedMetadata,
  checkedRange,
  checkedSigning,
} from "../../src/storage/storage_options.ts";
import { propertyOptions } from "../property.ts";

describe("storage options", () => {
  it("takes media types, and refuses what could forge a header", () => {
    for (const type of ["image/png", "text/plain; charset=utf-8", 'multipart/x; boundary="a b"']) {
      assert.equal(checkedContentType(type), type);
    }
    for (const type of ["text", "text/plain\r\nx-evil: 1", "a/b; c", "", "a/b\u0000", 42]) {
      assert.throws(() => checkedContentType(type), TypeError, JSON.stringify(type));
    }
  });

  it("never lets a byte that could end a header line through, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (text) => {
        let type: string | undefined;
        try {
          type = checkedContentType(text);
        } catch (error) {
          assert.ok(error instanceof TypeError);
          return;
        }
        assert.match(type as string, /^[\x20-\x7e]+$/);
      }),
      propertyOptions(500),
    );
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 10 }),
        fc.string({ unit: "binary", maxLength: 20 }),
        (name, value) => {
          try {
            const metadata = checkedMetadata({ [name]: value });
            for (const [n, v] of Object.entries(metadata)) {
              assert.match(n, /^[a-z0-9][a-z0-9_-]*$/);
              // deno-lint-ignore no-control-regex -- the characters no message may hold
              assert.doesNotMatch(v, /[\u0000-\u001f\u007f]/);
            }
          } catch (error) {
            assert.ok(error instanceof TypeError);
          }
        },
      ),
      propertyOptions(500),
    );
  });

  it("lower-cases metadata names, and refuses two that are one", () => {
    assert.deepEqual(checkedMetadata({ Author: "Ada", "x_y-1": "é" }), {
      author: "Ada",
      "x_y-1": "é",
    });
    assert.deepEqual(
      Object.getPrototypeOf(checkedMetadata({ constructor: "c" })),
      Object.prototype,
    );
    assert.equal(checkedMetadata({ constructor: "c" }).constructor, "c");
    assert.throws(() => checkedMetadata({ A: "1", a: "2" }), /given twice/);
    assert.throws(() => checkedMetadata({ a: "x".repeat(2048) }), /at most 2048 bytes, got 2049/);
    assert.throws(() => checkedMetadata({ "a b": "1" }), /metadata names are/);
    assert.throws(() => checkedMetadata({ a: 1 }), /is a string/);
    assert.throws(() => checkedMetadata([]), /an object of strings/);
  });

  it("checks ranges, limits and signing", () => {
    assert.deepEqual(checkedRange({ offset: 0 }), { offset: 0 });
    assert.deepEqual(checkedRange({ offset: 5, length: 2 }), { offset: 5, length: 2 });
    for (
      const range of [
        { offset: -1 },
        { offset: 1.5 },
        { offset: 0, length: 0 },
        { offset: "1" },
        null,
      ]
    ) {
      assert.throws(() => checkedRange(range), TypeError, JSON.stringify(range));
    }
    assert.equal(checkedLimit(undefined), Infinity);
    assert.equal(checkedLimit(3), 3);
    assert.throws(() => checkedLimit(0), /1 or more, got 0/);
    assert.deepEqual(checkedSigning({ expires: "15m" }), { method: "GET", seconds: 900 });
    assert.deepEqual(checkedSigning({ method: "PUT", expires: 1500 }), {
      method: "PUT",
      seconds: 2,
    });
    assert.throws(() => checkedSigning({ expires: "8d" }), /expires/);
    assert.throws(() => checkedSigning({ expires: 10 }), /expires/);
    assert.throws(() => checkedSigning({ method: "DELETE", expires: "1m" }), /"GET" or "PUT"/);
  });
});
