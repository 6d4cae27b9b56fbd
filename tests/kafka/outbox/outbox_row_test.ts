// A record as a row of the outbox table and back: every serialized record reads back as it was
// written, whether the driver hands bytes as a Buffer or a Uint8Array, and what is not a serialized
// record, or a column that is not bytes, is refused, naming where.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import type { OutgoingRecord } from "../../../src/kafka/outgoing_record.ts";
import { checkRecord, insertParameters, rowOf } from "../../../src/kafka/outbox/outbox_row.ts";
import { propertyOptions } from "../../property.ts";

const bytes = fc.uint8Array({ maxLength: 30 });
const record: fc.Arbitrary<OutgoingRecord> = fc.record({
  topic: fc.string({ minLength: 1, maxLength: 20 }),
  key: fc.option(bytes, { nil: undefined }),
  value: fc.option(bytes, { nil: undefined }),
  headers: fc.array(fc.tuple(fc.string({ maxLength: 10 }), bytes), { maxLength: 4 }),
  partition: fc.option(fc.nat(1000), { nil: undefined }),
});

// The row a driver reads back for the values an insert bound: bytes as the driver hands them, a
// partition as a number or (a driver of big integers) a bigint.
function readBack(id: unknown, values: unknown[], asBuffer: boolean, big: boolean) {
  const [topic, record_key, record_value, headers, record_partition] = values.map((v) =>
    v instanceof Uint8Array && asBuffer ? Buffer.from(v) : v
  );
  return {
    id,
    topic,
    record_key,
    record_value,
    headers,
    record_partition: big && typeof record_partition === "number"
      ? BigInt(record_partition)
      : record_partition,
  };
}

const plain = (r: OutgoingRecord) => ({
  ...r,
  key: r.key && [...r.key],
  value: r.value && [...r.value],
  headers: r.headers.map(([name, value]) => [name, [...value]]),
});

describe("outbox rows", () => {
  it("read every record back as it was written", () => {
    fc.assert(
      fc.property(record, fc.boolean(), fc.boolean(), (record, asBuffer, big) => {
        checkRecord(record, "Outbox");
        const row = rowOf(readBack(41, insertParameters(record), asBuffer, big), "Outbox");
        assert.equal(row.id, 41);
        assert.deepEqual(plain(row.record), plain(record));
      }),
      propertyOptions(),
    );
  });

  it("refuse what is not a serialized record, naming where", () => {
    const good: OutgoingRecord = {
      topic: "t",
      key: undefined,
      value: undefined,
      headers: [],
      partition: undefined,
    };
    const refused = (changes: Record<string, unknown>) =>
      assert.throws(() => checkRecord({ ...good, ...changes } as OutgoingRecord, "Outbox X"), {
        name: "TypeError",
        message: "Outbox X: the record is not a serialized OutgoingRecord",
      });
    refused({ topic: "" });
    refused({ key: "text" });
    refused({ value: [1, 2] });
    refused({ headers: [["name", "text"]] });
    refused({ headers: "none" });
    refused({ partition: -1 });
    refused({ partition: 1.5 });
    assert.throws(() => checkRecord(null as unknown as OutgoingRecord, "Outbox X"), TypeError);
  });

  it("refuse a bytes column read back as anything else, and headers not written by the outbox", () => {
    const row = readBack(
      7,
      insertParameters({
        topic: "t",
        key: undefined,
        value: undefined,
        headers: [],
        partition: undefined,
      }),
      false,
      false,
    );
    assert.throws(() => rowOf({ ...row, record_key: "text" }, "Outbox X"), {
      name: "TypeError",
      message: "outbox: a bytes column read back as string",
    });
    assert.throws(
      () => rowOf({ ...row, headers: new Uint8Array([0xff, 1, 2]) }, "Outbox X"),
      /Outbox X, row 7/,
    );
  });
});
