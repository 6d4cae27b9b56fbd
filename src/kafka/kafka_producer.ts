// The producer every send goes through, over `@platformatic/kafka`: this module and the
// listeners' are the only ones that import the package, and only `kafka()` loads them.
import { Buffer } from "node:buffer";
import { compatibilityPartitioner, type MessageToProduce, Producer } from "@platformatic/kafka";
import { closeWithin } from "./client_connections.ts";
import type { Acks, KafkaClientOptions } from "./kafka_settings.ts";
import type { OutgoingRecord, RecordMetadata, RecordSender } from "./outgoing_record.ts";
import { explainedError } from "./security_failure.ts";

type Bytes = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;
type ClusterMetadata = Awaited<ReturnType<Producer["metadata"]>>;

/** A send waiting for the one in flight. */
interface Waiting {
  readonly records: readonly OutgoingRecord[];
  readonly resolve: (sent: readonly RecordMetadata[]) => void;
  readonly reject: (error: unknown) => void;
  /** Its caller was answered (its bound passed): its records are not handed on any more. */
  readonly settled: () => boolean;
}

/** The key that bounds a send, named by the error a send past it rejects with. */
export const DELIVERY_TIMEOUT_KEY = "kafka.producer.delivery-timeout";

/**
 * A send the broker did not acknowledge within `kafka.producer.delivery-timeout`: Java's
 * `TimeoutException`, named as the platform's timeouts are.
 */
export class DeliveryTimeoutError extends Error {
  override name = "TimeoutError";
}

// Java's retry.backoff.ms and retry.backoff.max.ms: 100 ms, doubling, up to 1 s.
const backoff = (_: unknown, __: string, attempt: number): number =>
  Math.min(100 * 2 ** (attempt - 1), 1000);

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** What the broker said of the cluster, for the health check. */
export interface ClusterView {
  readonly clusterId: string;
  readonly brokers: number;
}

/** Sends serialized records, each resolved once the broker acknowledged it. */
export class KafkaProducer implements RecordSender {
  readonly #producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  // The next partition of each topic for a batch's records without a key.
  readonly #turns = new Map<string, number>();
  readonly #idempotent: boolean;
  readonly #client: KafkaClientOptions;
  // The sends waiting for the one in flight, with the idempotent producer.
  readonly #waiting: Waiting[] = [];
  #draining: Promise<void> | undefined;
  readonly #deliveryTimeoutMs: number;
  // The sends whose callers wait: each is answered by its bound at the latest.
  readonly #unanswered = new Set<Promise<unknown>>();

  /**
   * `deliveryTimeoutMs` bounds each send, tries included (`kafka.producer.delivery-timeout`,
   * Java's `delivery.timeout.ms`, 120 s by default).
   */
  constructor(
    client: KafkaClientOptions,
    acks: Acks,
    retries: number,
    deliveryTimeoutMs = 120_000,
  ) {
    this.#idempotent = acks === -1;
    this.#client = client;
    this.#deliveryTimeoutMs = deliveryTimeoutMs;
    this.#producer = new Producer({
      ...client,
      bootstrapBrokers: [...client.bootstrapBrokers],
      acks,
      // The package retries an idempotent producer's sends without end when not told otherwise
      // (Java bounds them by delivery.timeout.ms, which it lacks): a broker that is gone would
      // leave every send pending, and the errors it keeps, growing.
      retries,
      retryDelay: backoff,
      // Kafka's idempotence needs every in-sync replica's acknowledgement.
      idempotent: this.#idempotent,
      // Java's partitioner: a key lands on the partition a Spring or Java service puts it on.
      partitioner: compatibilityPartitioner,
      // As Java's producer: a topic the broker does not know is made when its settings allow.
      autocreateTopics: true,
    });
  }

  /**
   * Sends `records`, in order. With the idempotent producer, sends made while one is in flight
   * wait, and go together as the next request: the package numbers an idempotent producer's
   * records per partition only once a request is answered, so that two requests in flight carry
   * the same numbers, and the broker keeps the first and acknowledges the others as its
   * duplicates (or refuses them as out of order, and every send after).
   */
  send(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
    const answer = new Promise<readonly RecordMetadata[]>((resolve, reject) => {
      let settled = false;
      const send: Waiting = {
        records,
        resolve: (sent) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(sent);
        },
        reject: (error) => {
          if (settled) return;
          const explained = this.#explained(records, error);
          settled = true;
          clearTimeout(timer);
          reject(explained);
        },
        settled: () => settled,
      };
      // The client can neither be told to drop a request it was handed nor bound its tries in
      // time: past the bound the caller is answered, a send still waiting its turn is dropped
      // (never handed on), and one the client holds may still be written by its tries.
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(send);
        if (at >= 0) this.#waiting.splice(at, 1);
        send.reject(this.#timedOut(records));
        // A timer takes at most 2^31 - 1 ms (about 24 days); a longer one would fire at once.
      }, Math.min(this.#deliveryTimeoutMs, 2 ** 31 - 1));
      if (!this.#idempotent) {
        this.#sendNow(records).then(send.resolve, send.reject);
        return;
      }
      this.#waiting.push(send);
      this.#draining ??= this.#drain();
    });
    this.#unanswered.add(answer);
    const done = () => this.#unanswered.delete(answer);
    answer.then(done, done);
    return answer;
  }

  #timedOut(records: readonly OutgoingRecord[]): DeliveryTimeoutError {
    const topics = [...new Set(records.map((r) => JSON.stringify(r.topic)))].join(", ");
    return new DeliveryTimeoutError(
      `send(${topics}): no acknowledgement within ${this.#deliveryTimeoutMs} ms ` +
        `(${DELIVERY_TIMEOUT_KEY}); the broker is out of reach or the partition has no leader`,
    );
  }

  // The client's error, or one that says why when the brokers refused the connection's security
  // (the client's error as its cause).
  #explained(records: readonly OutgoingRecord[], error: unknown): unknown {
    const topics = [...new Set(records.map((r) => JSON.stringify(r.topic)))].join(", ");
    return explainedError(error, this.#client, `send(${topics}): `);
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length > 0) await this.#sendTogether(this.#waiting.splice(0));
    } finally {
      this.#draining = undefined;
    }
  }

  // One request for the sends that waited; a send whose records cannot be placed (a partition
  // the topic lacks) fails alone.
  async #sendTogether(sends: readonly Waiting[]): Promise<void> {
    if (sends.length === 1) {
      const [only] = sends;
      await this.#sendNow(only.records).then(only.resolve, only.reject);
      return;
    }
    const placed: { send: Waiting; partitions: number[] }[] = [];
    try {
      const metadata = await this.#metadata(sends.flatMap((s) => s.records));
      for (const send of sends) {
        try {
          placed.push({ send, partitions: this.#place(metadata, send.records) });
        } catch (error) {
          send.reject(error);
        }
      }
    } catch (error) {
      for (const send of sends) send.reject(error);
      return;
    }
    // A send whose bound passed while the metadata came is not handed on: its caller was told.
    placed.splice(0, placed.length, ...placed.filter((p) => !p.send.settled()));
    if (placed.length === 0) return;
    try {
      const sent = await this.#produce(
        placed.flatMap((p) => p.send.records),
        placed.flatMap((p) => p.partitions),
      );
      let at = 0;
      for (const { send } of placed) send.resolve(sent.slice(at, at += send.records.length));
    } catch (error) {
      if (placed.length === 1) {
        placed[0].send.reject(error);
        return;
      }
      // A record the broker refuses (too large) fails the request of every send with it: each
      // goes again alone, in order, so that only its own send fails. A record of the request the
      // broker had taken may then be written twice: at least once.
      for (const { send, partitions } of placed) {
        if (send.settled()) continue;
        await this.#produce(send.records, partitions).then(send.resolve, send.reject);
      }
    }
  }

  async #sendNow(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
    // One record alone is left to the package's partitioner, which answers its offset.
    if (records.length === 1 && records[0].partition === undefined) {
      return await this.#produce(records, [undefined]);
    }
    return await this.#produce(records, this.#place(await this.#metadata(records), records));
  }

  async #produce(
    records: readonly OutgoingRecord[],
    partitions: readonly (number | undefined)[],
  ): Promise<readonly RecordMetadata[]> {
    const messages = records.map((record, i) => {
      const message: Bytes = {
        topic: record.topic,
        // A map keyed by distinct buffers keeps a name that repeats, as Kafka allows.
        headers: new Map(
          record.headers.map(([name, value]) => [Buffer.from(name, "utf8"), asBuffer(value)]),
        ),
      };
      if (record.key !== undefined) message.key = asBuffer(record.key);
      if (record.value !== undefined) message.value = asBuffer(record.value);
      const partition = partitions[i];
      if (partition !== undefined) message.partition = partition;
      return message;
    });
    const { offsets = [] } = await this.#producer.send({ messages });
    if (records.length === 1 && offsets.length === 1) return [offsets[0]];
    // The broker answers each partition's first offset; its records follow in the order sent.
    const next = new Map(offsets.map((o) => [`${o.partition}\u0000${o.topic}`, o.offset]));
    return records.map((record, i) => {
      const partition = partitions[i] as number;
      const key = `${partition}\u0000${record.topic}`;
      const offset = next.get(key) as bigint;
      next.set(key, offset + 1n);
      return { topic: record.topic, partition, offset };
    });
  }

  /** The cluster as the broker describes it now: a round trip, for the health check. */
  async cluster(): Promise<ClusterView> {
    try {
      const metadata = await this.#producer.metadata({ topics: [], forceUpdate: true });
      return { clusterId: metadata.id, brokers: metadata.brokers.size };
    } catch (error) {
      throw explainedError(error, this.#client);
    }
  }

  /**
   * Waits for the sends in flight and those waiting (each answered by its bound at the latest),
   * then closes the connections: within 5 s, or they are cut.
   */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#unanswered]);
    await closeWithin(this.#producer, () => this.#producer.close(), 5000);
  }

  // What the broker says of the records' topics (made where its settings allow).
  #metadata(records: readonly OutgoingRecord[]): Promise<ClusterMetadata> {
    const topics = [...new Set(records.map((r) => r.topic))];
    return this.#producer.metadata({ topics, autocreateTopics: true });
  }

  // The partition of each record: the one asked for, checked (the package folds a partition past
  // the topic's count into it: 7 of 3 partitions is 1), or the one Java's partitioner gives its
  // key (round robin without one), so that each record's offset is known.
  #place(metadata: ClusterMetadata, records: readonly OutgoingRecord[]): number[] {
    return records.map((record) => {
      const count = metadata.topics.get(record.topic)?.partitionsCount ?? 0;
      if (count === 0) {
        throw new Error(`send(${JSON.stringify(record.topic)}): the broker knows no such topic`);
      }
      if (record.partition !== undefined) {
        if (record.partition >= count) {
          throw new RangeError(
            `send(${JSON.stringify(record.topic)}): partition ${record.partition} does not ` +
              `exist; the topic has ${count} partition${count === 1 ? "" : "s"}`,
          );
        }
        return record.partition;
      }
      if (record.key !== undefined) {
        return compatibilityPartitioner({ topic: record.topic }, asBuffer(record.key)) % count;
      }
      const turn = this.#turns.get(record.topic) ?? 0;
      this.#turns.set(record.topic, turn + 1);
      return turn % count;
    });
  }
}
