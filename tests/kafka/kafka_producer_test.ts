// The idempotent producer under concurrent sends, against the real broker: sends made while
// others are in flight each land at an offset of their own, in the order they were made, none
// acknowledged and lost; a send that fails fails alone.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bootstrap } from "../../mod.ts";
import { kafka, KafkaTemplate } from "../../kafka.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";
import { KafkaProducer } from "../../src/kafka/kafka_producer.ts";
import { writtenOf } from "../../src/kafka/outgoing_record.ts";
import { topicSize } from "./outbox/outbox_support.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "./broker.ts";

describe("KafkaTemplate's sends in flight at once", () => {
  it("each lands at its own offset, in the order sent, none lost", async () => {
    const topic = uniqueName("concurrent");
    await createTopic(topic, 2);
    const app = await bootstrap({
      config: { kafka: { "bootstrap-servers": KAFKA_BOOTSTRAP } },
      kafka: kafka(),
    });
    const count = 60;
    try {
      const template = app.getBean(KafkaTemplate);
      const sent = await Promise.all(
        Array.from({ length: count }, (_, i) => template.send(topic, i, { key: `k${i % 3}` })),
      );
      const places = new Set(
        sent.map((r) => r.outboxed ? "outboxed" : `${r.partition}/${r.offset}`),
      );
      assert.equal(places.size, count, "each acknowledged send has a place of its own");
      const read = await readTopic(topic, count);
      assert.equal(read.length, count);
      for (const [i, result] of sent.entries()) {
        assert.ok(!result.outboxed);
        const found = read.find((r) =>
          r.partition === result.partition && r.offset === result.offset
        );
        assert.equal(found?.value, String(i), `send ${i} at ${result.partition}/${result.offset}`);
      }
      // Each key's records, in the order they were sent.
      for (const key of ["k0", "k1", "k2"]) {
        const values = read.filter((r) => r.key === key).map((r) => Number(r.value));
        assert.deepEqual(values, [...values].sort((a, b) => a - b));
        assert.equal(values.length, count / 3);
      }
      // A send that cannot be placed fails alone; those made with it land.
      const mixed = await Promise.allSettled([
        template.send(topic, "before"),
        template.send(topic, "nowhere", { partition: 9 }),
        template.send(topic, "after"),
      ]);
      assert.deepEqual(mixed.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
      assert.match(String((mixed[1] as PromiseRejectedResult).reason), /partition 9 does not/);
    } finally {
      await app.close();
    }
  });

  it("a record the broker refuses fails alone; the sends that waited with it land", async () => {
    const topic = uniqueName("concurrent-refused");
    await createTopic(topic, 1);
    const app = await bootstrap({
      config: { kafka: { "bootstrap-servers": KAFKA_BOOTSTRAP } },
      kafka: kafka(),
    });
    try {
      const template = app.getBean(KafkaTemplate);
      // The first goes alone; the two others wait for it and go in one request. The second is
      // larger than the broker takes (message.max.bytes is 1 MiB).
      const mixed = await Promise.allSettled([
        template.send(topic, "first"),
        template.send(topic, "x".repeat(2 * 1024 * 1024)),
        template.send(topic, "after"),
      ]);
      assert.deepEqual(mixed.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
      const read = await readTopic(topic, 2);
      assert.deepEqual(read.map((r) => r.value), ['"first"', '"after"']);
    } finally {
      await app.close();
    }
  });
});

describe("KafkaProducer's send refused in part", () => {
  it("says which of its records went, and writes none of them twice", async () => {
    const topic = uniqueName("refused-in-part");
    await createTopic(topic, 2);
    const producer = new KafkaProducer(
      { clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] },
      -1,
      2,
    );
    const record = (value: string, partition: number) => ({
      topic,
      key: undefined,
      value: new TextEncoder().encode(value),
      headers: [],
      partition,
    });
    try {
      // One request: partition 0's record goes, partition 1's is larger than the broker takes.
      const error = await producer.send([record("fits", 0), record("x".repeat(2 << 20), 1)])
        .then(() => assert.fail("the send went through"), (e: unknown) => e);
      assert.match(String((error as Error).message), /refused the record/);
      assert.deepEqual([...writtenOf(error)], [0]);
      assert.equal(await topicSize(topic, 2), 1, "the record that went, once");
    } finally {
      await producer.close();
    }
  });
});

describe("KafkaTemplate.send against a broker that does not answer", () => {
  it("rejects after kafka.producer.delivery-timeout, and never sends a waiting record later", async () => {
    const topic = uniqueName("black-hole");
    await createTopic(topic, 1);
    const [host, port] = KAFKA_BOOTSTRAP.split(":");
    const proxy = await tcpProxy(host, Number(port));
    await proxy.up();
    // Black-holed before the client's first byte: the metadata it would learn the broker's own
    // address from never comes, so every request goes through the proxy.
    proxy.hold();
    const app = await bootstrap({
      config: {
        kafka: {
          "bootstrap-servers": `127.0.0.1:${proxy.port}`,
          producer: { "delivery-timeout": "1s" },
        },
      },
      kafka: kafka(),
    });
    try {
      const template = app.getBean(KafkaTemplate);
      // The first goes to the client; the second waits for it (one request in flight).
      const stuck = await Promise.allSettled([
        template.send(topic, "in flight"),
        template.send(topic, "waiting"),
        template.send(topic, "keyed", { key: "order-7\u2028" }),
      ]);
      // The key is named, made safe to log.
      assert.match(
        String((stuck[2] as PromiseRejectedResult).reason?.message),
        /^send\("[^"]+"\) of key "order-7\\u2028": no acknowledgement/,
      );
      for (const result of stuck) {
        assert.equal(result.status, "rejected");
        const error = (result as PromiseRejectedResult).reason as Error;
        assert.equal(error.name, "TimeoutError");
        assert.match(
          error.message,
          new RegExp(
            `send\\("${topic}"\\)( of key [^:]+)?: no acknowledgement within 1000 ms ` +
              "\\(kafka\\.producer\\.delivery-timeout\\)",
          ),
        );
      }
      proxy.release();
      // Once the broker answers, a later send lands; the one that waited was never handed on.
      let landed: number | undefined;
      for (let i = 0; landed === undefined; i++) {
        const sent = await template.send(topic, `after ${i}`).catch(() => undefined);
        if (sent !== undefined && !sent.outboxed) landed = Number(sent.offset);
      }
      const read = await readTopic(topic, landed + 1);
      assert.ok(
        !read.some((r) => r.value === '"waiting"'),
        JSON.stringify(read.map((r) => r.value)),
      );
    } finally {
      await app.close();
      await proxy.down();
    }
  });
});
