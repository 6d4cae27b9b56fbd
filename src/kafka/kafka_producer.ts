// The producer every send goes through, over `@platformatic/kafka`: this module (with the parts
// beside it that it alone loads) and the listeners' are the only ones that import the package, and
// only `kafka()` loads them.
import { Backoff } from "../runtime/backoff.ts";
import { deadline } from "../runtime/deadline.ts";
import type { Buffer } from "node:buffer";
import { compatibilityPartitioner, Producer } from "@platformatic/kafka";
import { closeWithin } from "./client_connections.ts";
import { deliveryTimeout } from "./delivery_timeout.ts";
import type { Acks, KafkaClientOptions } from "./kafka_settings.ts";
import type { OutgoingRecord, RecordMetadata, RecordSender } from "./outgoing_record.ts";
import { PendingSend } from "./pending_send.ts";
import {
  answerSends,
  type Entry,
  recordsAt,
  sortOutcomes,
  type Tally,
  unwritten,
} from "./produce_batch.ts";
import { produceMessage } from "./produce_message.ts";
import { partitionKey, produceOutcomes } from "./produce_outcome.ts";
import { ProducerBrokers } from "./producer_brokers.ts";
import { RecordPlacement } from "./record_placement.ts";
import { explainedError, securityFailure } from "./security_failure.ts";

export { DELIVERY_TIMEOUT_KEY, DeliveryTimeoutError } from "./delivery_timeout.ts";

type ClusterMetadata = Awaited<ReturnType<Producer["metadata"]>>;

// Java's retry.backoff.ms and retry.backoff.max.ms: 100 ms, doubling, up to 1 s.
const RETRY_BACKOFF = /* @__PURE__ */ new Backoff({ delay: 100, multiplier: 2, maxDelay: 1000 });
const backoff = (_: unknown, __: string, attempt: number): number => RETRY_BACKOFF.delayOf(attempt);

// Waits `ms` before the next try; `_reason` is what failed, kept for a debugger's eye.
const pause = (ms: number, _reason: unknown): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/** What the broker said of the cluster, for the health check. */
export interface ClusterView {
  readonly clusterId: string;
  readonly brokers: number;
}

/** Sends serialized records, each resolved once the broker acknowledged it. */
export class KafkaProducer implements RecordSender {
  readonly #producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  readonly #placement = new RecordPlacement();
  readonly #idempotent: boolean;
  // Given with each send: the client takes its constructor's `acks` for none (it sends acks 1).
  readonly #acks: Acks;
  readonly #client: KafkaClientOptions;
  // The sends waiting for the one in flight, with the idempotent producer.
  readonly #waiting: PendingSend[] = [];
  #draining: Promise<void> | undefined;
  readonly #deliveryTimeoutMs: number;
  // The sends whose callers wait: each is answered by its bound at the latest.
  readonly #unanswered = new Set<Promise<unknown>>();
  // A request's outcome is not known, or the broker refused the numbering: the next request goes
  // under a new producer id.
  #renumber = false;
  readonly #brokers: ProducerBrokers;

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
    this.#acks = acks;
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
    this.#brokers = new ProducerBrokers(this.#producer);
  }

  /**
   * Sends `records`, in order. With the idempotent producer, sends made while one is in flight
   * wait, and go together as the next request: the package numbers an idempotent producer's
   * records per partition only once a request is answered, so that two requests in flight carry
   * the same numbers, and the broker keeps the first and acknowledges the others as its
   * duplicates (or refuses them as out of order, and every send after).
   */
  send(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
    const send = new PendingSend(records, (error) => this.#explained(records, error));
    // Past the bound the caller is answered, a send still waiting its turn is dropped (never
    // handed on), and one the client holds may still be written by its tries.
    send.bound(this.#deliveryTimeoutMs, () => {
      const at = this.#waiting.indexOf(send);
      if (at >= 0) this.#waiting.splice(at, 1);
      send.reject(deliveryTimeout(records, this.#deliveryTimeoutMs, send.lastFailure));
    });
    if (this.#idempotent) {
      this.#waiting.push(send);
      this.#draining ??= this.#drain();
    } else {
      this.#sendNow(records).then((sent) => send.resolve(sent), (error) => send.reject(error));
    }
    const { answer } = send;
    this.#unanswered.add(answer);
    const done = () => this.#unanswered.delete(answer);
    answer.then(done, done);
    return answer;
  }

  // The client's error, or one that says why when the brokers refused the connection's security
  // (the client's error as its cause).
  #explained(records: readonly OutgoingRecord[], error: unknown): unknown {
    const topics = [...new Set(records.map((r) => JSON.stringify(r.topic)))].join(", ");
    return explainedError(error, this.#client, `send(${topics}): `);
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length > 0) await this.#deliver(this.#waiting.splice(0));
    } finally {
      this.#draining = undefined;
    }
  }

  // The sends that waited, as one request, tried until the broker wrote or refused each partition
  // of it, or every caller was answered. A partition whose answer was lost is sent again exactly
  // as it was (the same records, under the same numbers), so that the broker, which keeps a
  // producer's last numbers per partition, acknowledges the copy instead of writing it twice
  // (Java's producer does the same). Nothing after goes until this request's outcome is known:
  // each key's records are written in the order sent.
  async #deliver(sends: readonly PendingSend[]): Promise<void> {
    const entries = await this.#placeAll(sends);
    const found = new Map<PendingSend, RecordMetadata[]>();
    const refused = new Map<PendingSend, unknown>();
    const alone = await this.#untilKnown(entries, found, refused);
    // Sends that shared a partition the broker refused go again one by one, each with only its
    // records not written yet: only the send of the refused record fails.
    for (const send of alone) {
      if (send.settled) continue;
      await this.#untilKnown(unwritten(entries, send, found), found, refused);
    }
    answerSends(sends, found, refused);
  }

  // Tries `entries` until the broker wrote or refused each partition of them, or every caller was
  // answered; answers the sends to try again alone. What went with an unknown outcome is sent
  // again under the same producer id first: only once none is left does a new id start, for the
  // partitions that need one.
  async #untilKnown(
    entries: readonly Entry[],
    found: Map<PendingSend, RecordMetadata[]>,
    refused: Map<PendingSend, unknown>,
  ): Promise<PendingSend[]> {
    // Partitions the broker refused for their numbering (sent under a new producer id, later),
    // and the sends to try again alone.
    const tally: Tally = { found, refused, renumbered: [], alone: [] };
    const { renumbered } = tally;
    let open = entries;
    // Some of `open` went with an outcome not known: no new producer id until it is.
    let doubt = false;
    for (let attempt = 1;; attempt++) {
      if (!doubt && renumbered.length > 0) {
        open = [...open, ...renumbered.splice(0)];
        this.#renumber = true;
      }
      if (open.length === 0) break;
      let outcomes: ReturnType<typeof produceOutcomes>;
      let failure: unknown;
      let handedOn = false;
      try {
        if (this.#renumber && !doubt) await this.#newProducerId();
        handedOn = true;
        const offsets = await this.#produce(open);
        outcomes = new Map([...offsets].map(([key, offset]) => [
          key,
          { kind: "written", offset, counted: true } as const,
        ]));
      } catch (error) {
        failure = error;
        outcomes = produceOutcomes(error);
        this.#brokers.dropConnectionsAfterTimeout(error);
        // Refused credentials or certificates: no try mends them.
        if (securityFailure(error, this.#client) !== undefined) {
          for (const entry of [...open, ...renumbered]) refused.set(entry.send, error);
          break;
        }
      }
      const sorted = sortOutcomes(open, outcomes, failure, tally);
      // A partition written that the client did not count: its numbering starts again.
      if (sorted.uncounted) this.#renumber = true;
      open = sorted.unknown;
      // A try that failed before its request went leaves the doubt as it was.
      if (handedOn) doubt = open.length > 0;
      const left = [...open, ...renumbered];
      if (left.length === 0) break;
      for (const entry of left) entry.send.failed(failure);
      if (left.every((entry) => entry.send.settled)) {
        // Every caller was told at its bound; the records may still be written by the request in
        // flight, so the sends after go under a new producer id, whatever the broker last counted.
        this.#renumber = true;
        break;
      }
      // The next try asks the cluster again where each partition's leader is.
      this.#producer.clearMetadata();
      await pause(backoff(undefined, "produce", attempt), failure);
    }
    return tally.alone;
  }

  // The partition of each record of `sends`, asking the cluster (again, while it does not answer,
  // until every caller was answered); a send whose records cannot be placed fails alone.
  async #placeAll(sends: readonly PendingSend[]): Promise<Entry[]> {
    for (let attempt = 1;; attempt++) {
      try {
        const metadata = await this.#metadata(sends.flatMap((s) => s.records));
        const entries: Entry[] = [];
        for (const send of sends) {
          if (send.settled) continue;
          try {
            const partitions = this.#place(metadata, send.records);
            send.records.forEach((record, at) =>
              entries.push({ record, partition: partitions[at], send, at })
            );
          } catch (error) {
            send.reject(error);
          }
        }
        return entries;
      } catch (error) {
        if (securityFailure(error, this.#client) !== undefined) {
          for (const send of sends) send.reject(error);
          return [];
        }
        if (sends.every((send) => send.settled)) return [];
        for (const send of sends) send.failed(error);
        await pause(backoff(undefined, "metadata", attempt), error);
      }
    }
  }

  // A producer id of its own for the sends after, the client's numbering started again: Java's
  // answer (KIP-360) to a request whose outcome is not known, or a numbering the broker refused.
  async #newProducerId(): Promise<void> {
    await this.#producer.initIdempotentProducer({});
    this.#renumber = false;
  }

  // Sends `entries` as one request; resolves with the first offset of each partition.
  async #produce(entries: readonly Entry[]): Promise<Map<string, bigint>> {
    const { offsets = [] } = await this.#producer.send({
      acks: this.#acks,
      messages: entries.map((entry) => produceMessage(entry.record, entry.partition)),
    });
    return new Map(offsets.map((o) => [partitionKey(o.topic, o.partition), o.offset]));
  }

  // A send of the producer that is not idempotent (acks 0 or 1): handed to the client at once.
  async #sendNow(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
    // One record alone is left to the package's partitioner, which answers its offset.
    if (records.length === 1 && records[0].partition === undefined) {
      const { offsets = [] } = await this.#producer.send({
        acks: this.#acks,
        messages: [produceMessage(records[0], undefined)],
      });
      // With acks 0 the broker answers nothing: no place is known (Java's -1).
      return [offsets[0] ?? { topic: records[0].topic, partition: -1, offset: -1n }];
    }
    const partitions = this.#place(await this.#metadata(records), records);
    const { offsets = [] } = await this.#producer.send({
      acks: this.#acks,
      messages: records.map((record, i) => produceMessage(record, partitions[i])),
    });
    // The broker answers each partition's first offset; its records follow in the order sent.
    const first = new Map(offsets.map((o) => [partitionKey(o.topic, o.partition), o.offset]));
    return recordsAt(records, partitions, first);
  }

  /**
   * The cluster as the broker describes it now: a round trip, for the health check, answered
   * within `withinMs`: past it, an error naming the brokers and those it could not connect to
   * (the client's tries may outlast the health check's bound).
   */
  async cluster(withinMs: number): Promise<ClusterView> {
    const asked = this.#producer.metadata({ topics: [], forceUpdate: true }).then(
      (metadata) => ({ clusterId: metadata.id, brokers: metadata.brokers.size }),
      (error) => {
        throw explainedError(error, this.#client);
      },
    );
    return await deadline(
      asked,
      withinMs,
      () => this.#brokers.noAnswer(withinMs, this.#client.bootstrapBrokers),
    );
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

  // The partition of each record, by the partitions the cluster says each topic has.
  #place(metadata: ClusterMetadata, records: readonly OutgoingRecord[]): number[] {
    return this.#placement.place(
      (topic) => metadata.topics.get(topic)?.partitionsCount ?? 0,
      records,
    );
  }
}
