// The record a listener gives up on, as it goes to `<topic>.DLT`: Spring Kafka's
// `DeadLetterPublishingRecoverer` names and encodings, so that a Spring consumer of the DLT (or
// Thaw's) reads where it came from and why. Pure.
import { loggableText } from "../../observe/loggable.ts";
import type { OutgoingRecord } from "../outgoing_record.ts";
import type { KafkaRecord } from "./kafka_record.ts";

/** Why a record went to the DLT without reaching the method: its value was refused. */
export class RecordRefusedError extends Error {
  override name = "RecordRefusedError";
}

/** The header names, Spring Kafka's `KafkaHeaders.DLT_*`. */
export const DLT_HEADERS = {
  exceptionClass: "kafka_dlt-exception-fqcn",
  exceptionMessage: "kafka_dlt-exception-message",
  topic: "kafka_dlt-original-topic",
  partition: "kafka_dlt-original-partition",
  offset: "kafka_dlt-original-offset",
  timestamp: "kafka_dlt-original-timestamp",
  timestampType: "kafka_dlt-original-timestamp-type",
  group: "kafka_dlt-original-consumer-group",
} as const;

const encoder = new TextEncoder();
// A message longer than this is cut: a header is no place for a dump.
const MAX_MESSAGE = 2000;

/** The DLT topic of `topic`. */
export function deadLetterTopic(topic: string): string {
  return `${topic}.DLT`;
}

// The headers that say where a record first came from: a record dead-lettered again keeps them.
const ORIGINAL: readonly string[] = [
  DLT_HEADERS.topic,
  DLT_HEADERS.partition,
  DLT_HEADERS.offset,
  DLT_HEADERS.timestamp,
  DLT_HEADERS.timestampType,
  DLT_HEADERS.group,
];

/** Whether `topic` is a DLT (`<topic>.DLT`): its records are never dead-lettered again. */
export function isDeadLetterTopic(topic: string): boolean {
  return topic.endsWith(".DLT");
}

/**
 * `record` bound for its DLT: key and value as they came, its headers but for the `kafka_dlt-*`
 * ones this failure replaces, then the failure's: the error's class and message (escaped, cut),
 * the original topic (text), partition (4 bytes), offset and timestamp (8 bytes, big-endian, as
 * Java writes an int and a long), the timestamp's type and the consumer group. A record that was a
 * dead letter already keeps its first original place, as Spring Kafka's recoverer does. The
 * producer chooses the partition.
 */
export function deadLetter(record: KafkaRecord, error: unknown, groupId: string): OutgoingRecord {
  const partition = new Uint8Array(4);
  new DataView(partition.buffer).setInt32(0, record.partition);
  const offset = new Uint8Array(8);
  new DataView(offset.buffer).setBigInt64(0, record.offset);
  const timestamp = new Uint8Array(8);
  new DataView(timestamp.buffer).setBigInt64(0, BigInt(record.timestamp));
  const message = loggableText(errorMessage(error));
  const added: [string, Uint8Array][] = [
    [DLT_HEADERS.exceptionClass, encoder.encode(loggableText(errorClass(error)))],
    [
      DLT_HEADERS.exceptionMessage,
      encoder.encode(message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message),
    ],
    [DLT_HEADERS.topic, encoder.encode(record.topic)],
    [DLT_HEADERS.partition, partition],
    [DLT_HEADERS.offset, offset],
    [DLT_HEADERS.timestamp, timestamp],
    [DLT_HEADERS.timestampType, encoder.encode(record.timestampType)],
    [DLT_HEADERS.group, encoder.encode(groupId)],
  ];
  const kept = record.raw.headers.some(([name]) => name === DLT_HEADERS.topic)
    ? added.filter(([name]) => !ORIGINAL.includes(name))
    : added;
  const replaced = new Set(kept.map(([name]) => name));
  return {
    topic: deadLetterTopic(record.topic),
    key: record.raw.key,
    value: record.raw.value,
    headers: [...record.raw.headers.filter(([name]) => !replaced.has(name)), ...kept],
    partition: undefined,
  };
}

function errorClass(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || "Error";
  return typeof error;
}

function errorMessage(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return "(an error that could not be read)";
  }
}
