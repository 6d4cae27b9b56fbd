/**
 * Kafka: `kafka()` for `bootstrap({ kafka })`, and `KafkaTemplate`, the bean that sends records.
 * The client is `@platformatic/kafka` (an optional peer dependency: `npm install
 * @platformatic/kafka`), configured by the `kafka.*` keys, Spring Boot's `spring.kafka.*` names.
 *
 * Apart from the default entry point, so that an app that does not use it carries none of it.
 *
 * @example An app that sends records to the broker of `kafka.bootstrap-servers`
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { kafka, KafkaTemplate } from "@thaw/thaw/kafka";
 *
 * const app = await bootstrap({
 *   config: { kafka: { "bootstrap-servers": "127.0.0.1:9092", "client-id": "orders" } },
 *   kafka: kafka(),
 * });
 * assert.ok(app.getBean(KafkaTemplate) instanceof KafkaTemplate);
 * await app.close();
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/kafka.md
 *
 * @module
 */
import "./src/config/kafka_keys.ts";

export { kafka, type KafkaOptions } from "./src/kafka/kafka_setup.ts";
export type { KafkaFeature } from "./src/kafka/kafka_feature.ts";
export {
  type HeaderValue,
  jsonSerializer,
  KafkaTemplate,
  type OutboxPort,
  type SendOptions,
  type SendResult,
  type Serializer,
} from "./src/kafka/kafka_template.ts";
export type { OutgoingRecord, RecordMetadata, RecordSender } from "./src/kafka/outgoing_record.ts";
export { type OutboxMigration, outboxMigration } from "./src/kafka/outbox/outbox_migration.ts";
export {
  KafkaListener,
  type KafkaListenerDecorator,
  type KafkaListenerOptions,
  type KafkaListenerRetry,
} from "./src/kafka/listener/kafka_listener.ts";
export type { KafkaRecord, RawRecord, TimestampType } from "./src/kafka/listener/kafka_record.ts";
