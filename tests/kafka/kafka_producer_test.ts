// The idempotent producer under concurrent sends, against the real broker: sends made while
// others are in flight each land at an offset of their own, in the order they were made, none
// acknowledged and lost; a send that fails fails alone.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bootstrap } from "../../mod.ts";
import { kafka, KafkaTemplate } from "../../kafka.ts";
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
