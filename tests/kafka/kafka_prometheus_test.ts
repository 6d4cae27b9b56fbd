// The Kafka client's series at /actuator/prometheus, as the actuator serves them: the records the
// template sent by topic and partition, and a group's consumer lag by partition read from the
// broker when Prometheus scrapes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as api from "@opentelemetry/api";
import { Admin } from "@platformatic/kafka";
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { kafka, KafkaTemplate } from "../../kafka.ts";
import { observeConsumerLag } from "../../src/kafka/consumer_lag.ts";
import { KafkaTelemetry } from "../../src/kafka/kafka_telemetry.ts";
import { PROMETHEUS, samples, sampleValue, scrape } from "../actuator/prometheus_samples.ts";
import { createTopic, KAFKA_BOOTSTRAP, uniqueName } from "./broker.ts";

describe("Kafka at /actuator/prometheus", () => {
  it("serves the sent records and a group's lag by partition", async () => {
    const topic = uniqueName("prometheus");
    const group = uniqueName("prometheus-group");
    await createTopic(topic, 2);
    const app = await bootstrap({
      config: { ...PROMETHEUS, kafka: { "bootstrap-servers": KAFKA_BOOTSTRAP } },
      actuator: actuator(),
      kafka: kafka(),
    });
    let stop = () => Promise.resolve();
    try {
      const template = app.getBean(KafkaTemplate);
      for (let i = 0; i < 4; i++) await template.send(topic, i, { partition: 1 });
      await template.send(topic, "x", { partition: 0 });
      const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] });
      try {
        await admin.alterConsumerGroupOffsets({
          groupId: group,
          topics: [{ name: topic, partitionOffsets: [{ partition: 1, offset: 1n }] }],
        });
      } finally {
        await admin.close();
      }
      // What kafka() registers for its listeners' groups.
      stop = observeConsumerLag(
        new KafkaTelemetry(api, "thaw"),
        { clientId: "thaw", bootstrapBrokers: [KAFKA_BOOTSTRAP] },
        () => [group],
        60_000,
      );
      const all = samples(await scrape(app));
      const sent = (partition: string) =>
        sampleValue(all, "messaging_client_sent_messages_total", {
          messaging_system: "kafka",
          messaging_destination_name: topic,
          messaging_destination_partition_id: partition,
        });
      assert.deepEqual([sent("0"), sent("1")], [1, 4]);
      assert.equal(
        sampleValue(all, "messaging_kafka_consumer_lag", {
          messaging_consumer_group_name: group,
          messaging_destination_name: topic,
          messaging_destination_partition_id: "1",
        }),
        3,
      );
    } finally {
      await stop();
      await app.close();
    }
  });
});
