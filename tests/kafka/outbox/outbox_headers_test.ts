// The headers column's encoding: every list of headers (names repeated, values of any bytes, empty
// ones) reads back as it was written, and bytes it did not write are refused, naming the row.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { decodeHeaders, encodeHeaders } from "../../../src/kafka/outbox/outbox_headers.ts";
import { propertyOptions } from "../../property.ts";

const headers = fc.array(
  fc.tuple(fc.string({ unit: "grapheme", maxLength: 30 }), fc.uint8Array({ maxLength: 200 })),
  { maxLength: 8 },
);

describe("outbox headers", () => {
  it("reads back every list of headers as written, byte for byte", () => {
    fc.assert(
      fc.property(headers, (list) => {
        const decoded = decodeHeaders(encodeHeaders(list), "row 1");
        assert.deepEqual(
          decoded.map(([n, v]) => [n, [...v]]),
          list.map(([n, v]) => [n, [...v]]),
        );
      }),
      propertyOptions(),
    );
  });

  it("reads headers from a slice of a larger buffer, as drivers hand them", () => {
    fc.assert(
      fc.property(headers, fc.uint8Array({ maxLength: 20 }), (list, before) => {
        const encoded = encodeHeaders(list);
        const big = new Uint8Array(before.length + encoded.length + 7);
        big.set(before);
        big.set(encoded, before.length);
        const slice = big.subarray(before.length, before.length + encoded.length);
        assert.deepEqual(
          decodeHeaders(slice, "row 1").map(([n, v]) => [n, [...v]]),
          list.map(([n, v]) => [n, [...v]]),
        );
      }),
      propertyOptions(),
    );
  });

  it("refuses bytes it did not write, naming where they came from", () => {
    fc.assert(
      fc.property(headers, fc.integer({ min: 1, max: 40 }), (list, cut) => {
        const encoded = encodeHeaders(list);
        if (cut >= encoded.length) return;
        assert.throws(
          () => decodeHeaders(encoded.subarray(0, encoded.length - cut), "table t, row 9"),
          /^Error: table t, row 9: the headers column cannot be read/,
        );
      }),
      propertyOptions(),
    );
    assert.throws(() => decodeHeaders(new Uint8Array([2, 0, 0, 0, 0]), "row 3"), /format 2/);
  });
});
