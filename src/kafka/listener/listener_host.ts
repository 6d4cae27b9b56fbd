// What the listeners need from the app: the client, its options, the configuration's defaults,
// where dead letters go and the logger. `kafka()` builds it from the configuration.
import type { ContextLogger } from "../../context/class_record.ts";
import type { RecordSender } from "../outgoing_record.ts";
import type { KafkaTelemetry } from "../kafka_telemetry.ts";
import type { KafkaClientModule, KafkaClientOptions } from "./kafka_client.ts";
import type { KafkaRecord } from "./kafka_record.ts";

/** Turns a record's value bytes into what the method gets; throwing sends the record to the DLT. */
export type ValueDeserializer = (value: Uint8Array | undefined, record: KafkaRecord) => unknown;

/** What the listeners need from `kafka()`. */
export interface ListenerHost {
  /** `@platformatic/kafka`, loaded by the caller. */
  readonly client: KafkaClientModule;
  /** The client options of the configuration: brokers, client id, TLS, SASL. */
  readonly clientOptions: KafkaClientOptions;
  readonly defaults: {
    /** `kafka.consumer.group-id`: the group of a listener that names none. */
    readonly groupId?: string;
    /** `kafka.consumer.auto-offset-reset` (latest, as Kafka's). */
    readonly autoOffsetReset?: "earliest" | "latest" | "none";
    /** `kafka.listener.concurrency` (1). */
    readonly concurrency?: number;
    /** The group's session timeout (45 s, Kafka's): a member silent this long is dropped. */
    readonly sessionTimeoutMs?: number;
    /** Heartbeats this often (3 s). */
    readonly heartbeatIntervalMs?: number;
    /** How long a rebalance waits for members' records to finish (60 s). */
    readonly rebalanceTimeoutMs?: number;
  };
  /** Where dead letters go: the template's producer. */
  readonly deadLetters: RecordSender;
  readonly logger: ContextLogger;
  /** Values are JSON unless this is given (a null value stays `null`). */
  readonly deserializer?: ValueDeserializer;
  /** Each record's CONSUMER span and metrics, where the app has OpenTelemetry; none otherwise. */
  readonly telemetry?: KafkaTelemetry | undefined;
}
