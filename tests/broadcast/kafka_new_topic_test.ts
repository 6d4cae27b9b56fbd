// The broadcast's Kafka transport on a topic nobody made yet: as the docs say, the broker makes it
// (its auto.create.topics.enable is on here), and the replicas' messages go through.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaTransport } from "../../src/broadcast/kafka_transport.ts";
import { KAFKA_BOOTSTRAP, uniqueName } from "../kafka/broker.ts";
import { until } from "../kafka/listener/listener_fixture.ts";

describe("the broadcast's Kafka transport on a topic not made yet", () => {
  it("starts, the broker making the topic, and carries a message", async () => {
    const settings = {
      bootstrapServers: [KAFKA_BOOTSTRAP],
      topic: uniqueName("thaw-broadcast-new"),
    };
    const warnings: string[] = [];
    const received: string[] = [];
    const reader = new KafkaTransport(
      { ...settings, clientId: uniqueName("thaw-broadcast-reader") },
      (message, error) => warnings.push(`${message} ${String(error)}`),
    );
    const writer = new KafkaTransport(
      { ...settings, clientId: uniqueName("thaw-broadcast-writer") },
      () => {},
    );
    try {
      await reader.start((text) => received.push(text));
      await writer.start(() => {});
      await writer.publish("room", "hello");
      await until(() => received.includes("hello"), "the message on the new topic");
      assert.deepEqual(warnings, []);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});
