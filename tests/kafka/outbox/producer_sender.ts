// The bare client's producer as a RecordSender, as the template hands the outbox one: acks from
// every replica, idempotent, keys, values and header values as bytes.
import { Buffer } from "node:buffer";
import { Producer, type ProduceResult } from "@platformatic/kafka";
import type {
  OutgoingRecord,
  RecordMetadata,
  RecordSender,
} from "../../../src/kafka/outgoing_record.ts";
import { KAFKA_BOOTSTRAP } from "../broker.ts";

/** A RecordSender over a producer of its own, and what closes it. */
export interface ProducerSender extends RecordSender {
  close(): Promise<void>;
}

const buffer = (bytes: Uint8Array | undefined): Buffer | undefined =>
  bytes === undefined ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A sender through a producer to `bootstrap`; `retries` as the client takes them. */
export function producerSender(
  bootstrap: readonly string[] = [KAFKA_BOOTSTRAP],
  retries: number | boolean = 3,
): ProducerSender {
  const producer = new Producer({
    clientId: "thaw-outbox-tests",
    bootstrapBrokers: [...bootstrap],
    idempotent: true,
    acks: -1,
    retries,
    retryDelay: 50,
  });
  return {
    async send(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
      const result: ProduceResult = await producer.send({
        messages: records.map((r) => ({
          topic: r.topic,
          ...(r.key === undefined ? {} : { key: buffer(r.key)! }),
          ...(r.value === undefined ? {} : { value: buffer(r.value)! }),
          // Buffer keys: a name that repeats is two entries, as Kafka allows.
          headers: new Map(r.headers.map(([name, value]) => [Buffer.from(name), buffer(value)!])),
          ...(r.partition === undefined ? {} : { partition: r.partition }),
        })),
      });
      return records.map((r) => {
        const at = result.offsets?.find((o) => o.topic === r.topic);
        return { topic: r.topic, partition: at?.partition ?? 0, offset: at?.offset ?? -1n };
      });
    },
    close: () => producer.close(),
  };
}
