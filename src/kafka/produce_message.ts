// A record as the client's produce request carries it: its bytes as Buffers (views, never copies)
// and its headers as a map whose names are distinct buffers, so that a name may repeat. Pure.
import { Buffer } from "node:buffer";
import type { MessageToProduce } from "@platformatic/kafka";
import type { OutgoingRecord } from "./outgoing_record.ts";

/** A message of a produce request, every part of it bytes. */
export type ProduceMessage = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;

/** `bytes` as a Buffer over the same memory. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** `record` as a message to `partition` (none: the client's partitioner chooses). */
export function produceMessage(
  record: OutgoingRecord,
  partition: number | undefined,
): ProduceMessage {
  const message: ProduceMessage = {
    topic: record.topic,
    // A map keyed by distinct buffers keeps a name that repeats, as Kafka allows.
    headers: new Map(
      record.headers.map(([name, value]) => [Buffer.from(name, "utf8"), asBuffer(value)]),
    ),
  };
  if (record.key !== undefined) message.key = asBuffer(record.key);
  if (record.value !== undefined) message.value = asBuffer(record.value);
  if (partition !== undefined) message.partition = partition;
  return message;
}
