// The `kafka` health component: UP while a broker describes the cluster (a metadata round trip),
// with the cluster's id and its brokers as details; DOWN with what the client said.
import { type HealthCheck, HealthIndicator } from "../actuator/health_indicator.ts";
import type { Class } from "../context/class.ts";
import type { ClusterView } from "./kafka_producer.ts";

/** The indicator class of an app's Kafka client, which `kafka()` registers. */
export function kafkaHealth(cluster: () => Promise<ClusterView>): Class {
  @HealthIndicator("kafka")
  class KafkaHealthIndicator implements HealthCheck {
    async check(): Promise<Record<string, unknown>> {
      const { clusterId, brokers } = await cluster();
      return { clusterId, brokers };
    }
  }
  return KafkaHealthIndicator;
}
