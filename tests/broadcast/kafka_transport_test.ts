// The broadcast's Kafka transport when the broker its consumer reads from goes away: on the
// three-broker cluster, the leader of the test's own topic is killed (kill -9) until the consumer's
// stream fails, then started again; the transport reads again, and a message published after the
// loss reaches the replica's subscribers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Admin } from "@platformatic/kafka";
import { KafkaTransport } from "../../src/broadcast/kafka_transport.ts";
import { createTopic, uniqueName } from "../kafka/broker.ts";
import { KAFKA_CLUSTER, killBroker, restartBroker, wholeCluster } from "../kafka/three_brokers.ts";
import { until } from "../kafka/listener/listener_fixture.ts";

// The port of the broker that leads the topic's one partition.
async function leaderPort(topic: string): Promise<number> {
  const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [...KAFKA_CLUSTER] });
  try {
    const metadata = await admin.metadata({ topics: [topic] });
    const leader = metadata.topics.get(topic)?.partitions[0].leader;
    const port = leader === undefined ? undefined : metadata.brokers.get(leader)?.port;
    if (port === undefined) throw new Error(`no leader for ${topic}`);
    return port;
  } finally {
    await admin.close();
  }
}

describe("the broadcast's Kafka transport", () => {
  it("reads again after its stream failed with the leader gone, once a broker leads again", async () => {
    const topic = uniqueName("thaw-broadcast-loss");
    await wholeCluster();
    await createTopic(topic, 1, KAFKA_CLUSTER);
    const warnings: string[] = [];
    const received: string[] = [];
    const settings = { bootstrapServers: KAFKA_CLUSTER, topic };
    const reader = new KafkaTransport(
      { ...settings, clientId: uniqueName("thaw-broadcast-reader") },
      (message, error) => warnings.push(`${message} ${String(error)}`),
    );
    const writer = new KafkaTransport(
      { ...settings, clientId: uniqueName("thaw-broadcast-writer") },
      () => {},
    );
    const victim = await leaderPort(topic);
    let killed = false;
    try {
      await reader.start((text) => received.push(text));
      await writer.start(() => {});
      await writer.publish("room", "before");
      await until(() => received.includes("before"), "the message before the loss");
      await killBroker(victim);
      killed = true;
      await until(
        () => warnings.some((w) => w.includes("stopped reading from")),
        "the reader's stream to fail",
        180_000,
      );
      await restartBroker(victim);
      killed = false;
      // Published until one reaches the reader (a publish may fail while leaders move).
      for (let i = 0; !received.some((text) => text.startsWith("after ")); i++) {
        await writer.publish("room", `after ${i}`).catch(() => {});
        await until(
          () => received.some((text) => text.startsWith("after ")),
          "a message published after the loss",
          i < 120 ? 1_000 : 0,
        ).catch((error) => {
          if (i >= 120) throw error;
        });
      }
      assert.ok(warnings.some((w) => w.includes("reading again")), warnings.join("\n"));
    } finally {
      if (killed) await restartBroker(victim);
      await reader.close();
      await writer.close();
    }
  });
});
