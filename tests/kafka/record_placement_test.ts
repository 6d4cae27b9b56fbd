// Where the producer places each record, against a model: the partition asked for (checked against
// the topic's count), Java's murmur2 partitioner for a key (checked against Kafka's own vectors),
// and round robin per topic without one, its turn kept from send to send.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { OutgoingRecord } from "../../src/kafka/outgoing_record.ts";
import { RecordPlacement } from "../../src/kafka/record_placement.ts";
import { propertyOptions } from "../property.ts";

// Kafka's Utils.murmur2 (seed 0x9747b28c), as Java's DefaultPartitioner hashes a key.
function murmur2(data: Uint8Array): number {
  const m = 0x5bd1e995;
  let h = 0x9747b28c ^ data.length;
  const rest = data.length % 4;
  const whole = data.length - rest;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  if (rest >= 3) h ^= data[whole + 2] << 16;
  if (rest >= 2) h ^= data[whole + 1] << 8;
  if (rest >= 1) h = Math.imul(h ^ data[whole], m);
  h ^= h >>> 13;
  h = Math.imul(h, m);
  return h ^ (h >>> 15);
}

// What a placement answers, or the class of error it throws.
type Placed = number[] | "no topic" | "no partition";

// The model: each send placed in turn, one topic's turn shared by its records without a key; a
// send that throws has advanced the turns of the records before the one refused.
class ModelPlacement {
  readonly #turns = new Map<string, number>();

  place(counts: Record<string, number>, records: readonly OutgoingRecord[]): Placed {
    const placed: number[] = [];
    for (const record of records) {
      const count = counts[record.topic] ?? 0;
      if (count === 0) return "no topic";
      if (record.partition !== undefined) {
        if (record.partition >= count) return "no partition";
        placed.push(record.partition);
      } else if (record.key !== undefined) {
        placed.push((murmur2(record.key) & 0x7fffffff) % count);
      } else {
        const turn = this.#turns.get(record.topic) ?? 0;
        this.#turns.set(record.topic, turn + 1);
        placed.push(turn % count);
      }
    }
    return placed;
  }
}

function placed(
  placement: RecordPlacement,
  counts: Record<string, number>,
  records: OutgoingRecord[],
): Placed {
  try {
    return placement.place((topic) => counts[topic] ?? 0, records);
  } catch (error) {
    if (error instanceof RangeError) return "no partition";
    assert.match((error as Error).message, /the broker knows no such topic/);
    return "no topic";
  }
}

const record = fc.record({
  topic: fc.constantFrom("orders", "payments", "unknown"),
  // Half the records without a key, half without a partition: round robin has turns to keep.
  key: fc.option(fc.uint8Array({ maxLength: 12 }), { nil: undefined, freq: 1 }),
  value: fc.constant(undefined),
  headers: fc.constant([]),
  partition: fc.option(fc.nat(6), { nil: undefined, freq: 1 }),
});
const counts = fc.record({ orders: fc.integer({ min: 1, max: 5 }), payments: fc.nat(4) });

describe("RecordPlacement", () => {
  it("hashes a key as Kafka's murmur2 does (the model's own check)", () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    assert.equal(murmur2(encode("21")), -973932308);
    assert.equal(murmur2(encode("foobar")), -790332482);
    assert.equal(murmur2(encode("a-little-bit-long-string")), -985981536);
    assert.equal(murmur2(encode("a-little-bit-longer-string")), -1486304829);
    assert.equal(murmur2(encode("abc")), 479470107);
  });

  it("places each send as the model does, its turns kept from send to send", () => {
    fc.assert(
      fc.property(
        counts,
        fc.array(fc.array(record, { maxLength: 6 }), { maxLength: 6 }),
        (counts, sends) => {
          const placement = new RecordPlacement();
          const model = new ModelPlacement();
          for (const send of sends) {
            assert.deepEqual(placed(placement, counts, send), model.place(counts, send));
          }
        },
      ),
      propertyOptions(),
    );
  });

  it("names the topic and its partitions when the partition asked for is past them", () => {
    const placement = new RecordPlacement();
    const asked = { topic: "t", key: undefined, value: undefined, headers: [], partition: 3 };
    assert.throws(() => placement.place(() => 1, [asked]), {
      name: "RangeError",
      message: 'send("t"): partition 3 does not exist; the topic has 1 partition',
    });
    assert.throws(() => placement.place(() => 3, [asked]), {
      message: 'send("t"): partition 3 does not exist; the topic has 3 partitions',
    });
    assert.throws(() => placement.place(() => 0, [asked]), {
      message: 'send("t"): the broker knows no such topic',
    });
  });
});
