// A record as the produce request carries it: every part of it read back as it was, a header name
// that repeats kept, and its bytes handed over as views of the record's, never copies.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import { asBuffer, produceMessage } from "../../src/kafka/produce_message.ts";
import { propertyOptions } from "../property.ts";

const bytes = fc.uint8Array({ maxLength: 40 });
const record = fc.record({
  topic: fc.string({ minLength: 1, maxLength: 20 }),
  key: fc.option(bytes, { nil: undefined }),
  value: fc.option(bytes, { nil: undefined }),
  headers: fc.array(fc.tuple(fc.constantFrom("a", "b", "ü", ""), bytes), { maxLength: 6 }),
  partition: fc.option(fc.nat(100), { nil: undefined }),
});

describe("produceMessage", () => {
  it("carries every part of the record, each header in order, names repeated", () => {
    fc.assert(
      fc.property(record, fc.option(fc.nat(50), { nil: undefined }), (record, partition) => {
        const message = produceMessage(record, partition);
        assert.equal(message.topic, record.topic);
        assert.deepEqual(message.key && [...message.key], record.key && [...record.key]);
        assert.deepEqual(message.value && [...message.value], record.value && [...record.value]);
        assert.equal("key" in message, record.key !== undefined);
        assert.equal("value" in message, record.value !== undefined);
        assert.equal(message.partition, partition);
        assert.equal("partition" in message, partition !== undefined);
        const headers = [...(message.headers as Map<Buffer, Buffer>)];
        assert.deepEqual(
          headers.map(([name, value]) => [name.toString("utf8"), [...value]]),
          record.headers.map(([name, value]) => [name, [...value]]),
        );
      }),
      propertyOptions(),
    );
  });
});

describe("asBuffer", () => {
  it("hands a Buffer as it is, and other bytes as a view of the same memory", () => {
    const buffer = Buffer.from([1, 2, 3]);
    assert.equal(asBuffer(buffer), buffer);
    const whole = new Uint8Array([9, 8, 7, 6, 5]);
    const view = asBuffer(whole.subarray(1, 4));
    assert.deepEqual([...view], [8, 7, 6]);
    whole[2] = 0;
    assert.deepEqual([...view], [8, 0, 6]);
  });
});
