// KafkaTemplate's own part, before the producer: the record it makes of a value, key, headers and
// partition (every byte kept, whatever it is), JSON by default or the app's serializer, and the
// refusals that name the topic. The broker's part: kafka_setup_test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { jsonSerializer, KafkaTemplate } from "../../kafka.ts";
import type { OutgoingRecord } from "../../src/kafka/outgoing_record.ts";
import { propertyOptions } from "../property.ts";

// Keeps what it was handed: the unit under test is the template, not the broker.
class Recorder {
  readonly records: OutgoingRecord[] = [];
  send(records: readonly OutgoingRecord[]) {
    this.records.push(...records);
    return Promise.resolve(
      records.map((r, i) => ({ topic: r.topic, partition: 0, offset: BigInt(i) })),
    );
  }
}

const decode = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

describe("KafkaTemplate", () => {
  it("keeps every byte of keys, header names and values", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary" }),
        fc.uint8Array({ maxLength: 64 }),
        fc.array(fc.tuple(fc.string({ unit: "binary" }), fc.uint8Array({ maxLength: 32 })), {
          maxLength: 5,
        }),
        async (key, raw, headers) => {
          const recorder = new Recorder();
          await new KafkaTemplate(recorder).send("t", raw.length, { key, headers });
          await new KafkaTemplate(recorder).send("t", 1, { key: raw });
          const [first, second] = recorder.records;
          assert.deepEqual([...(first.key ?? [])], [...new TextEncoder().encode(key)]);
          assert.deepEqual(first.headers.map(([n]) => n), headers.map(([n]) => n));
          assert.deepEqual(first.headers.map(([, v]) => [...v]), headers.map(([, v]) => [...v]));
          assert.deepEqual([...(second.key ?? [])], [...raw]);
        },
      ),
      propertyOptions(),
    );
  });

  it("writes JSON by default, null as a tombstone, and the app's serializer when given", async () => {
    const recorder = new Recorder();
    const template = new KafkaTemplate(recorder);
    assert.deepEqual(await template.send("orders", { a: [1, "é"] }), {
      outboxed: false,
      topic: "orders",
      partition: 0,
      offset: 0n,
    });
    await template.send("orders", null);
    await template.send("orders", "text");
    assert.deepEqual(recorder.records.map((r) => decode(r.value)), [
      '{"a":[1,"é"]}',
      undefined,
      '"text"',
    ]);
    const upper = new KafkaTemplate(
      recorder,
      (value) => new TextEncoder().encode(String(value).toUpperCase()),
    );
    await upper.send("orders", "shout");
    assert.equal(decode(recorder.records.at(-1)?.value), "SHOUT");
  });

  it("refuses what is not JSON, naming the topic", async () => {
    const template = new KafkaTemplate(new Recorder());
    await assert.rejects(template.send("orders", { n: 1n }), {
      name: "TypeError",
      message:
        /^send\("orders"\): the value is not JSON \(.*BigInt.*\); give kafka\(\{ serializer \}\)/,
    });
    await assert.rejects(template.send("orders", () => 1), {
      message:
        'send("orders"): a function is not JSON; send null for a tombstone, or give kafka({ serializer }) for other values',
    });
    assert.throws(() => jsonSerializer(Symbol("s"), "t"), TypeError);
  });

  it("refuses a topic Kafka would refuse, an unknown option, a bad partition or key", async () => {
    const template = new KafkaTemplate(new Recorder());
    for (const topic of ["", "a b", "x".repeat(250), "é", "a/b", "a\nb"]) {
      await assert.rejects(template.send(topic, 1), {
        name: "TypeError",
        message: /^send\(topic\): a topic name is 1 to 249/,
      });
    }
    await assert.rejects(template.send("t", 1, { keys: "x" } as never), {
      message:
        'send("t", value, options): unknown option "keys"; the options are key, headers, partition',
    });
    // An array or null is no options object: refused, never sent as if no option was given.
    await assert.rejects(template.send("t", 1, [] as never), {
      name: "TypeError",
      message: 'send("t", value, options): the options must be an object, got an array',
    });
    await assert.rejects(template.send("t", 1, null as never), {
      name: "TypeError",
      message: 'send("t", value, options): the options must be an object, got null',
    });
    for (const partition of [-1, 1.5, Number.NaN]) {
      await assert.rejects(template.send("t", 1, { partition }), { name: "RangeError" });
    }
    await assert.rejects(template.send("t", 1, { key: 5 as never }), {
      message: 'send("t"): key must be text or a Uint8Array, got number',
    });
    await assert.rejects(template.send("t", 1, { headers: { h: 5 as never } }), {
      message: 'send("t"): header "h" must be text or a Uint8Array, got number',
    });
  });

  it("hands a record sent inside a transaction to the outbox, which may decline it", async () => {
    const recorder = new Recorder();
    const kept: OutgoingRecord[] = [];
    let inTransaction = true;
    const template = new KafkaTemplate(recorder, undefined, (record) => {
      if (inTransaction) kept.push(record);
      return Promise.resolve(inTransaction);
    });
    assert.deepEqual(await template.send("t", 1), { outboxed: true, topic: "t" });
    inTransaction = false;
    assert.equal((await template.send("t", 2)).outboxed, false);
    assert.deepEqual([kept.length, recorder.records.length], [1, 1]);
  });
});
