/**
 * The keys of `@thaw/thaw/kafka` (`kafka.*`: Spring Boot's `spring.kafka.*` names), declared by
 * its own modules rather than in the core's table: an app that does not import it neither carries
 * them nor has them checked.
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The Kafka client's keys. */
export const KAFKA_KEYS = {
  "kafka.bootstrap-servers": {
    type: "list",
    default: ["localhost:9092"],
  },
  "kafka.client-id": {
    type: "string",
  },
  "kafka.consumer.group-id": {
    type: "string",
  },
  "kafka.consumer.auto-offset-reset": {
    type: "choice",
    choices: ["earliest", "latest", "none"],
    default: "latest",
  },
  // `all`, `-1`, `0` or `1`: YAML reads the last three as numbers, which a choice is not.
  "kafka.producer.acks": {
    type: "feature",
  },
  "kafka.producer.retries": {
    type: "integer",
    min: 2,
    max: 1000,
    default: 10,
  },
  // A duration, read by the feature (`120s`, `PT2M`; a number is ms): Java's delivery.timeout.ms.
  "kafka.producer.delivery-timeout": {
    type: "feature",
  },
  "kafka.listener.concurrency": {
    type: "integer",
    min: 1,
    max: 1000,
    default: 1,
  },
  "kafka.security.protocol": {
    type: "choice",
    choices: ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"],
    default: "PLAINTEXT",
  },
  "kafka.sasl.mechanism": {
    type: "choice",
    choices: ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"],
  },
  "kafka.sasl.username": {
    type: "string",
  },
  "kafka.sasl.password": {
    type: "string",
  },
  "kafka.ssl.trust-store-certificates": {
    type: "string",
  },
  "kafka.ssl.key-store-certificate-chain": {
    type: "string",
  },
  "kafka.ssl.key-store-key": {
    type: "string",
  },
  "kafka.outbox.enabled": {
    type: "boolean",
    default: true,
  },
  "kafka.outbox.table": {
    type: "string",
    default: "thaw_outbox",
  },
  "kafka.outbox.batch-size": {
    type: "integer",
    min: 1,
    max: 10_000,
    default: 100,
  },
  // Durations, read by the feature (`1s`, `PT1S`; a number is ms).
  "kafka.outbox.poll-interval": {
    type: "feature",
  },
  "kafka.outbox.lease": {
    type: "feature",
  },
  "kafka.outbox.send-timeout": {
    type: "feature",
  },
  "kafka.outbox.retention": {
    type: "feature",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(KAFKA_KEYS);
