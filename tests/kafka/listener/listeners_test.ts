// @KafkaListener against the test broker: records in and out, a schema's refusal to the DLT,
// retries in order, and a close that finishes the record running.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import type { StandardSchemaV1 } from "../../../src/config/standard_schema.ts";
import { createTopic, readTopic, uniqueName } from "../broker.ts";
import { deferred } from "../../deferred.ts";
import {
  KeptLog,
  listenerTopic,
  producerSender,
  sendJson,
  testHost,
  until,
  withListeners,
} from "./listener_fixture.ts";

// A hand-written Standard Schema: an order has a numeric amount.
const orderSchema: StandardSchemaV1<unknown, { amount: number }> = {
  "~standard": {
    version: 1,
    vendor: "tests",
    validate: (value) =>
      typeof value === "object" && value !== null &&
        typeof (value as { amount?: unknown }).amount === "number"
        ? { value: value as { amount: number } }
        : { issues: [{ message: "amount must be a number", path: ["amount"] }] },
  },
};

describe("@KafkaListener", () => {
  it("takes JSON records with their keys and headers, from every partition", async () => {
    const topic = uniqueName("listen-basic");
    await createTopic(topic, 2);
    const seen: { value: unknown; record: KafkaRecord }[] = [];
    class Orders {
      @KafkaListener({ topics: topic, groupId: uniqueName("g") })
      onOrder(value: unknown, record: KafkaRecord): void {
        seen.push({ value, record });
      }
    }
    await withListeners(new Orders(), async ({ sender, listeners }) => {
      await listeners.start();
      await sendJson(sender, topic, [
        { value: { id: 1 }, key: "k1", headers: { trace: "a" }, partition: 0 },
        { value: { id: 2 }, key: "k2", headers: { trace: "b" }, partition: 1 },
        { value: { id: 3 }, partition: 0 },
      ]);
      await until(() => seen.length >= 3, "three records");
      const byId = new Map(seen.map((s) => [(s.value as { id: number }).id, s.record]));
      assert.equal(byId.get(1)?.key, "k1");
      assert.equal(byId.get(1)?.headers.get("trace"), "a");
      assert.equal(byId.get(1)?.partition, 0);
      assert.equal(byId.get(1)?.offset, 0n);
      assert.equal(byId.get(2)?.partition, 1);
      assert.equal(byId.get(2)?.headers.get("trace"), "b");
      assert.equal(byId.get(3)?.key, undefined);
      assert.equal(byId.get(3)?.offset, 1n);
      assert.equal(byId.get(1)?.topic, topic);
      assert.ok(Math.abs(byId.get(1)!.timestamp - Date.now()) < 3_600_000);
      assert.deepEqual([...byId.get(1)!.raw.value!], [...Buffer.from('{"id":1}')]);
    });
  });

  it("sends a value its schema refuses to <topic>.DLT with Spring's headers, untried", async () => {
    const topic = await listenerTopic("listen-schema", 1, { dlt: true });
    const group = uniqueName("g");
    const seen: unknown[] = [];
    class Orders {
      @KafkaListener({ topics: [topic], groupId: group, schema: orderSchema })
      onOrder(value: { amount: number }): void {
        seen.push(value);
      }
    }
    await withListeners(new Orders(), async ({ sender, log, listeners }) => {
      await listeners.start();
      await sendJson(sender, topic, [
        { value: { amount: "lots" }, key: "bad", headers: { trace: "t1" } },
        { value: { amount: 5 }, key: "good" },
      ]);
      await until(() => seen.length >= 1, "the good record");
      assert.deepEqual(seen, [{ amount: 5 }]);
      const [dead] = await readTopic(`${topic}.DLT`, 1);
      assert.equal(dead.key, "bad");
      assert.equal(dead.value, '{"amount":"lots"}');
      assert.equal(dead.headers.get("trace"), "t1");
      assert.equal(dead.headers.get("kafka_dlt-exception-fqcn"), "RecordRefusedError");
      assert.match(
        dead.headers.get("kafka_dlt-exception-message")!,
        /amount: amount must be a number/,
      );
      assert.equal(dead.headers.get("kafka_dlt-original-topic"), topic);
      assert.equal(dead.headers.get("kafka_dlt-original-consumer-group"), group);
      // Java's int and long, big-endian, as Spring writes them.
      assert.equal(Buffer.from(dead.headers.get("kafka_dlt-original-partition")!).length, 4);
      const offset = Buffer.from(dead.headers.get("kafka_dlt-original-offset")!, "utf8");
      assert.equal(offset.length, 8);
      assert.equal(offset.readBigInt64BE(0), 0n);
      // The log names the method and the place, never the value.
      const said = log.lines.join("\n");
      assert.match(
        said,
        new RegExp(`Orders\\.onOrder: the value of ${topic} partition 0 offset 0 was refused`),
      );
      assert.doesNotMatch(said, /lots/);
    });
  });

  it("sends a value whose schema throws, or rejects, to <topic>.DLT; the partition goes on", async () => {
    const topic = await listenerTopic("listen-schema-throws", 1, { dlt: true });
    // A schema written by hand that reads before it checks: a hostile value makes it throw.
    const careless: StandardSchemaV1<unknown, { amount: number }> = {
      "~standard": {
        version: 1,
        vendor: "tests",
        validate: (value) => {
          const { amount, later } = value as { amount: { toFixed(): string }; later?: boolean };
          amount.toFixed();
          return later === true
            ? Promise.reject(new RangeError("the async check failed"))
            : { value: value as { amount: number } };
        },
      },
    };
    const seen: unknown[] = [];
    class Orders {
      @KafkaListener({ topics: [topic], groupId: uniqueName("g"), schema: careless })
      onOrder(value: { amount: number }): void {
        seen.push(value);
      }
    }
    await withListeners(new Orders(), async ({ sender, log, listeners }) => {
      await listeners.start();
      await sendJson(sender, topic, [
        { value: {}, key: "throws" },
        { value: { amount: 1, later: true }, key: "rejects" },
        { value: { amount: 5 }, key: "good" },
      ]);
      await until(() => seen.length >= 1, "the good record");
      assert.deepEqual(seen, [{ amount: 5 }]);
      const dead = await readTopic(`${topic}.DLT`, 2);
      assert.deepEqual(dead.map((r) => r.key), ["throws", "rejects"]);
      for (const record of dead) {
        assert.equal(record.headers.get("kafka_dlt-exception-fqcn"), "RecordRefusedError");
        assert.match(record.headers.get("kafka_dlt-exception-message")!, /schema failed/);
      }
      assert.match(log.lines.join("\n"), /offset 0 was refused \(schema\)/);
    });
  });

  it("sends a value that is not JSON, or not UTF-8, to <topic>.DLT untried", async () => {
    const topic = await listenerTopic("listen-not-json", 1, { dlt: true });
    const seen: unknown[] = [];
    class Orders {
      @KafkaListener({ topics: [topic], groupId: uniqueName("g") })
      onOrder(value: unknown): void {
        seen.push(value);
      }
    }
    await withListeners(new Orders(), async ({ sender, listeners }) => {
      const raw = (key: string, value: Uint8Array) => ({
        topic,
        key: new TextEncoder().encode(key),
        value,
        headers: [],
        partition: undefined,
      });
      await listeners.start();
      // JSON has to be UTF-8: a string with a byte no UTF-8 text holds is no JSON, not a
      // replacement character the method cannot tell from one that was sent.
      const notUtf8 = Uint8Array.from([0x22, 0x61, 0xff, 0x62, 0x22]); // "a\xffb"
      await sender.send([raw("text", new TextEncoder().encode("not json"))]);
      await sender.send([raw("bytes", notUtf8)]);
      await sendJson(sender, topic, [{ value: "fine", key: "good" }]);
      await until(() => seen.length >= 1, "the good record");
      assert.deepEqual(seen, ["fine"]);
      const dead = await readTopic(`${topic}.DLT`, 2);
      assert.deepEqual(dead.map((r) => r.key), ["text", "bytes"]);
      for (const record of dead) {
        assert.equal(record.headers.get("kafka_dlt-exception-message"), "the value is not JSON");
      }
    });
  });

  it("retries a failing record in order, the partition's later records waiting, then dead-letters", async () => {
    const topic = await listenerTopic("listen-retry", 1, { dlt: true });
    const events: string[] = [];
    class Declined extends Error {
      override name = "Declined";
    }
    const failures = new Map([[1n, 2], [3n, Infinity]]);
    class Orders {
      @KafkaListener({ topics: topic, groupId: uniqueName("g"), retry: { attempts: 3, delay: 10 } })
      async onOrder(_value: unknown, record: KafkaRecord): Promise<void> {
        events.push(`begin ${record.offset}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
        const left = failures.get(record.offset) ?? 0;
        events.push(`end ${record.offset}`);
        if (left > 0) {
          failures.set(record.offset, left - 1);
          throw new Declined(`declined offset ${record.offset}`);
        }
      }
    }
    await withListeners(new Orders(), async ({ sender, log, listeners }) => {
      await listeners.start();
      await sendJson(sender, topic, [0, 1, 2, 3, 4].map((n) => ({ value: { n }, key: `k${n}` })));
      await until(() => events.includes("end 4"), "the last record");
      assert.deepEqual(
        events.filter((e) => e.startsWith("begin")),
        [
          "begin 0",
          "begin 1",
          "begin 1",
          "begin 1",
          "begin 2",
          "begin 3",
          "begin 3",
          "begin 3",
          "begin 4",
        ],
      );
      // One at a time: each begin follows the end before it.
      for (let i = 1; i < events.length; i += 2) {
        assert.equal(events[i].replace("end", "begin"), events[i - 1]);
      }
      const [dead] = await readTopic(`${topic}.DLT`, 1);
      assert.equal(dead.key, "k3");
      assert.equal(dead.headers.get("kafka_dlt-exception-fqcn"), "Declined");
      assert.equal(dead.headers.get("kafka_dlt-exception-message"), "declined offset 3");
      const said = log.lines.join("\n");
      assert.match(
        said,
        new RegExp(
          `Orders\\.onOrder failed on ${topic} partition 0 offset 1 \\(attempt 1 of 3\\); trying again in 10 ms`,
        ),
      );
      assert.match(
        said,
        new RegExp(
          `Orders\\.onOrder failed on ${topic} partition 0 offset 3 \\(attempt 3 of 3\\); it goes to ${topic}\\.DLT`,
        ),
      );
    });
  });

  it("sends an error its retry excludes, matched on the cause chain, to <topic>.DLT at once", async () => {
    const topic = await listenerTopic("listen-excludes", 1, { dlt: true });
    class Invalid extends Error {
      override name = "Invalid";
    }
    const calls: bigint[] = [];
    class Orders {
      @KafkaListener({
        topics: topic,
        groupId: uniqueName("g"),
        retry: { attempts: 5, delay: 10, excludes: [Invalid] },
      })
      onOrder(_value: unknown, record: KafkaRecord): void {
        calls.push(record.offset);
        // Offset 0: wrapped, its cause excluded; offset 1: tried again, then taken.
        if (record.offset === 0n) throw new Error("wrapped", { cause: new Invalid("bad order") });
        if (calls.filter((offset) => offset === 1n).length < 2) throw new Error("passing");
      }
    }
    await withListeners(new Orders(), async ({ sender, log, listeners }) => {
      await listeners.start();
      await sendJson(sender, topic, [0, 1].map((n) => ({ value: { n }, key: `k${n}` })));
      const [dead] = await readTopic(`${topic}.DLT`, 1);
      assert.equal(dead.key, "k0");
      await until(() => calls.length === 3, "offset 1 taken on its second try");
      assert.deepEqual(calls, [0n, 1n, 1n]);
      assert.match(
        log.lines.join("\n"),
        new RegExp(
          `offset 0 \\(attempt 1 of 5, not retried: its retry's rules exclude it\\); it goes to ` +
            `${topic}\\.DLT`,
        ),
      );
    });
  });

  it("closes once the record running finished, and commits it: the next member starts after", async () => {
    const topic = uniqueName("listen-close");
    await createTopic(topic, 1);
    const sender = producerSender();
    const group = uniqueName("g");
    const started = deferred();
    const release = deferred();
    const first: bigint[] = [];
    class Slow {
      @KafkaListener({ topics: topic, groupId: group })
      async onRecord(_value: unknown, record: KafkaRecord): Promise<void> {
        first.push(record.offset);
        started.resolve();
        await release.promise;
      }
    }
    const log = new KeptLog();
    const host = testHost(sender, log);
    const listeners = kafkaListeners([{ instance: new Slow() }], host);
    await listeners.start();
    await sendJson(sender, topic, [{ value: 0 }, { value: 1 }]);
    await started.promise;
    let closed = false;
    const closing = listeners.close(60_000).then((result) => {
      closed = true;
      return result;
    });
    // The record runs: the close waits for it.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, false);
    release.resolve();
    assert.deepEqual(await closing, { abandoned: 0 });
    assert.deepEqual(first, [0n]);

    const next: bigint[] = [];
    class Next {
      @KafkaListener({ topics: topic, groupId: group })
      onRecord(_value: unknown, record: KafkaRecord): void {
        next.push(record.offset);
      }
    }
    const after = kafkaListeners([{ instance: new Next() }], host);
    try {
      await after.start();
      await until(() => next.length >= 1, "the next member's first record");
      assert.deepEqual(next, [1n]);
    } finally {
      await after.close(10_000);
      await sender.close();
    }
  });

  it("gives a batch listener arrays of one partition's records, committed once it resolved", async () => {
    const topic = uniqueName("listen-batch");
    await createTopic(topic, 2);
    const sender = producerSender();
    const group = uniqueName("g");
    const batches: { values: unknown[]; records: KafkaRecord[] }[] = [];
    class Bulk {
      @KafkaListener({ topics: topic, groupId: group, batch: true })
      onRecords(values: unknown[], records: KafkaRecord[]): void {
        batches.push({ values, records });
      }
    }
    const log = new KeptLog();
    const host = testHost(sender, log);
    const listeners = kafkaListeners([{ instance: new Bulk() }], host);
    await listeners.start();
    const sent = Array.from({ length: 30 }, (_, n) => ({ value: n, partition: n % 2 }));
    await sendJson(sender, topic, sent);
    const count = () => batches.reduce((n, b) => n + b.records.length, 0);
    await until(() => count() >= 30, "thirty records");
    await listeners.close(10_000);
    assert.equal(count(), 30);
    for (const { values, records } of batches) {
      assert.equal(values.length, records.length);
      assert.equal(new Set(records.map((r) => r.partition)).size, 1);
      records.forEach((r, i) => i > 0 && assert.equal(r.offset, records[i - 1].offset + 1n));
      records.forEach((r, i) => assert.equal(values[i] as number % 2, r.partition));
    }
    const later: bigint[] = [];
    class Next {
      @KafkaListener({ topics: topic, groupId: group })
      onRecord(_value: unknown, record: KafkaRecord): void {
        later.push(record.offset);
      }
    }
    const after = kafkaListeners([{ instance: new Next() }], host);
    try {
      await after.start();
      await sendJson(sender, topic, [{ value: 30, partition: 0 }]);
      await until(() => later.length >= 1, "the new record");
      assert.deepEqual(later, [15n]);
    } finally {
      await after.close(10_000);
      await sender.close();
    }
  });

  it("refuses a listener with no group, naming the method", () => {
    class Orphan {
      @KafkaListener({ topics: "orphans" })
      onRecord(): void {}
    }
    const log = new KeptLog();
    assert.throws(
      () =>
        kafkaListeners(
          [{ instance: new Orphan() }],
          testHost({ send: () => Promise.resolve([]) }, log),
        ),
      /Orphan\.onRecord: @KafkaListener names no groupId and kafka\.consumer\.group-id is not set/,
    );
  });

  it("retries a failing batch whole, then sends each of its records to the DLT", async () => {
    const topic = await listenerTopic("listen-batch-dlt", 1, { dlt: true });
    let calls = 0;
    const firstOfEach: bigint[] = [];
    class Failing {
      @KafkaListener({
        topics: topic,
        groupId: uniqueName("g"),
        batch: true,
        retry: { attempts: 2, delay: 5 },
      })
      onRecords(_values: unknown[], records: KafkaRecord[]): void {
        calls += 1;
        firstOfEach.push(records[0].offset);
        throw new TypeError("cannot take these");
      }
    }
    await withListeners(new Failing(), async ({ sender, listeners }) => {
      await sendJson(sender, topic, [0, 1, 2].map((n) => ({ value: n, key: `k${n}` })));
      await listeners.start();
      const dead = await readTopic(`${topic}.DLT`, 3);
      assert.deepEqual(dead.map((d) => d.key).sort(), ["k0", "k1", "k2"]);
      for (const d of dead) assert.equal(d.headers.get("kafka_dlt-exception-fqcn"), "TypeError");
      // Each batch was tried twice, in a row, from its first record.
      assert.equal(calls % 2, 0);
      for (let i = 1; i < firstOfEach.length; i += 2) {
        assert.equal(firstOfEach[i], firstOfEach[i - 1]);
      }
    });
  });

  it("runs `concurrency` consumers of the group, which share the partitions", async () => {
    const topic = uniqueName("listen-concurrency");
    await createTopic(topic, 4);
    const partitions = new Set<number>();
    let count = 0;
    class Wide {
      @KafkaListener({ topics: topic, groupId: uniqueName("g"), concurrency: 2 })
      onRecord(_value: unknown, record: KafkaRecord): void {
        partitions.add(record.partition);
        count += 1;
      }
    }
    await withListeners(new Wide(), async ({ sender, listeners }) => {
      await listeners.start();
      assert.deepEqual(listeners.info.map((i) => i.concurrency), [2]);
      const [members] = listeners.memberIds;
      assert.equal(members.length, 2);
      assert.equal(new Set(members).size, 2);
      await sendJson(
        sender,
        topic,
        [0, 1, 2, 3, 4, 5, 6, 7].map((n) => ({ value: n, partition: n % 4 })),
      );
      await until(() => count >= 8, "eight records");
      assert.deepEqual([...partitions].sort(), [0, 1, 2, 3]);
    });
  });
});
