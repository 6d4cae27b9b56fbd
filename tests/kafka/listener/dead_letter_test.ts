// The record a listener gives up on, bound for its DLT: Spring Kafka's headers and encodings.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { deadLetter, DLT_HEADERS } from "../../../src/kafka/listener/dead_letter.ts";
import { kafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { propertyOptions } from "../../property.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("dead letters", () => {
  it("keep key, value and headers, and carry where the record came from as Java writes it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        fc.integer({ min: 0, max: 2 ** 48 }),
        fc.string(),
        (partition, offset, timestamp, message) => {
          const record = kafkaRecord("orders", partition, offset, timestamp, {
            key: bytes("k"),
            value: bytes('{"id":1}'),
            headers: [["trace", bytes("t")], [DLT_HEADERS.exceptionMessage, bytes("old")]],
          });
          const dead = deadLetter(record, new RangeError(message), "billing");
          assert.equal(dead.topic, "orders.DLT");
          assert.equal(dead.partition, undefined);
          assert.deepEqual(dead.key, bytes("k"));
          assert.deepEqual(dead.value, bytes('{"id":1}'));
          const headers = new Map(dead.headers);
          assert.equal(dead.headers.length, headers.size, "no header name twice");
          assert.deepEqual(headers.get("trace"), bytes("t"));
          const view = (name: string) => {
            const b = headers.get(name)!;
            return new DataView(b.buffer, b.byteOffset, b.byteLength);
          };
          assert.equal(view(DLT_HEADERS.partition).getInt32(0), partition);
          assert.equal(view(DLT_HEADERS.offset).getBigInt64(0), offset);
          assert.equal(view(DLT_HEADERS.timestamp).getBigInt64(0), BigInt(timestamp));
          const text = (name: string) => new TextDecoder().decode(headers.get(name));
          assert.equal(text(DLT_HEADERS.exceptionClass), "RangeError");
          assert.equal(text(DLT_HEADERS.topic), "orders");
          assert.equal(text(DLT_HEADERS.group), "billing");
          // A message from the wire cannot break a line of whoever logs the header.
          const said = text(DLT_HEADERS.exceptionMessage);
          assert.ok([...said].every((c) => c.charCodeAt(0) >= 0x20), "no control character");
        },
      ),
      propertyOptions(),
    );
  });
});

describe("dead letters of a record that was one already", () => {
  it("keep the first original place and say the record's own timestamp type", () => {
    const text = (headers: readonly (readonly [string, Uint8Array])[], name: string) =>
      headers.filter(([n]) => n === name).map(([, v]) => new TextDecoder().decode(v));
    const first = deadLetter(
      kafkaRecord(
        "orders",
        2,
        41n,
        1_000,
        { key: undefined, value: bytes("x"), headers: [] },
        "LogAppendTime",
      ),
      new Error("first"),
      "billing",
    );
    assert.deepEqual(text(first.headers, DLT_HEADERS.timestampType), ["LogAppendTime"]);
    // The dead letter read back from orders.DLT, and sent on from there (a replay topic's listener).
    const again = deadLetter(
      kafkaRecord("orders.DLT", 0, 7n, 2_000, {
        key: undefined,
        value: first.value,
        headers: first.headers,
      }),
      new Error("second"),
      "replay",
    );
    assert.deepEqual(text(again.headers, DLT_HEADERS.topic), ["orders"]);
    assert.deepEqual(text(again.headers, DLT_HEADERS.group), ["billing"]);
    assert.deepEqual(text(again.headers, DLT_HEADERS.timestampType), ["LogAppendTime"]);
    const offset = again.headers.find(([n]) => n === DLT_HEADERS.offset)![1];
    assert.equal(new DataView(offset.buffer, offset.byteOffset).getBigInt64(0), 41n);
    // The failure is the latest one's.
    assert.deepEqual(text(again.headers, DLT_HEADERS.exceptionMessage), ["second"]);
  });
});
