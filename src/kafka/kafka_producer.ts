// The producer every send goes through, over `@platformatic/kafka`: this module and the
// listeners' are the only ones that import the package, and only `kafka()` loads them.
import { Backoff } from "../runtime/backoff.ts";
import { Buffer } from "node:buffer";
import {
  compatibilityPartitioner,
  type MessageToProduce,
  Producer,
  TimeoutError,
} from "@platformatic/kafka";
import { loggableText } from "../observe/loggable.ts";
import { closeWithin } from "./client_connections.ts";
import type { Acks, KafkaClientOptions } from "./kafka_settings.ts";
import {
  type OutgoingRecord,
  type RecordMetadata,
  type RecordSender,
  withWritten,
} from "./outgoing_record.ts";
import { partitionKey, produceOutcomes } from "./produce_outcome.ts";
import { explainedError, securityFailure } from "./security_failure.ts";

type Bytes = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;
type ClusterMetadata = Awaited<ReturnType<Producer["metadata"]>>;

/** A send of the idempotent producer, from its call until its caller is answered. */
interface Waiting {
  readonly records: readonly OutgoingRecord[];
  readonly resolve: (sent: readonly RecordMetadata[]) => void;
  readonly reject: (error: unknown) => void;
  /** Its caller was answered (its bound passed): its records are not handed on any more. */
  readonly settled: () => boolean;
  /** Notes why a try failed: the cause its caller is given at its bound. */
  readonly failed: (error: unknown) => void;
}

/** One record of a batch, placed: the partition it goes to, and the send it is of. */
interface Entry {
  readonly record: OutgoingRecord;
  readonly partition: number;
  readonly send: Waiting;
  /** Its place among its send's records. */
  readonly at: number;
}

/** What the tries of a batch learnt, send by send. */
interface Tally {
  /** Each send's records written so far, by place. */
  readonly found: Map<Waiting, RecordMetadata[]>;
  /** The sends the broker refused, with why. */
  readonly refused: Map<Waiting, unknown>;
  /** Entries refused for their numbering: sent again under a new producer id. */
  readonly renumbered: Entry[];
  /** The sends to try again one by one. */
  readonly alone: Waiting[];
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
const RETRY_BACKOFF = /* @__PURE__ */ new Backoff({ delay: 100, multiplier: 2, maxDelay: 1000 });
const backoff = (_: unknown, __: string, attempt: number): number => RETRY_BACKOFF.delayOf(attempt);

// Whether `error` (the client's, however deep) holds a request that timed out.
function holdsTimeout(error: unknown): boolean {
  const stack: unknown[] = [error];
  try {
    for (let seen = 0; stack.length > 0 && seen < 1000; seen++) {
      const node = stack.pop();
      if (node instanceof TimeoutError) return true;
      if (typeof node !== "object" || node === null) continue;
      const { errors, cause } = node as { errors?: unknown; cause?: unknown };
      if (Array.isArray(errors)) stack.push(...errors);
      stack.push(cause);
    }
  } catch {
    // An error that cannot be read holds nothing this can act on.
  }
  return false;
}

// Waits `ms` before the next try; `_reason` is what failed, kept for a debugger's eye.
const pause = (ms: number, _reason: unknown): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

// A record's key as an error names it: text as JSON, made safe to log, or its size in bytes.
function keyText(key: Uint8Array): string {
  try {
    return loggableText(JSON.stringify(new TextDecoder("utf-8", { fatal: true }).decode(key)))
      .slice(0, 200);
  } catch {
    return `(${key.byteLength} bytes)`;
  }
}

// The entries of each partition, each partition's in the order sent.
function byPartition(entries: readonly Entry[]): Entry[][] {
  const groups = new Map<string, Entry[]>();
  for (const entry of entries) {
    const key = partitionKey(entry.record.topic, entry.partition);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [entry]);
    else group.push(entry);
  }
  return [...groups.values()];
}

// Notes where `entry` went among its send's records.
function place(found: Map<Waiting, RecordMetadata[]>, entry: Entry, offset: bigint): void {
  let sent = found.get(entry.send);
  if (sent === undefined) found.set(entry.send, sent = []);
  sent[entry.at] = { topic: entry.record.topic, partition: entry.partition, offset };
}

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
  // Given with each send: the client takes its constructor's `acks` for none (it sends acks 1).
  readonly #acks: Acks;
  readonly #client: KafkaClientOptions;
  // The sends waiting for the one in flight, with the idempotent producer.
  readonly #waiting: Waiting[] = [];
  #draining: Promise<void> | undefined;
  readonly #deliveryTimeoutMs: number;
  // The sends whose callers wait: each is answered by its bound at the latest.
  readonly #unanswered = new Set<Promise<unknown>>();
  // A request's outcome is not known, or the broker refused the numbering: the next request goes
  // under a new producer id.
  #renumber = false;
  // The brokers (host:port) whose last connection attempt failed: what the health check names.
  readonly #unreachable = new Set<string>();
  // Every broker the producer knows of, by host:port: the bootstrap ones and the cluster's.
  readonly #brokers = new Map<string, { host: string; port: number }>();

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
    const at = ({ broker }: { broker: { host: string; port: number } }) =>
      `${broker.host}:${broker.port}`;
    // Connected or not: a connection of each is closed after a request timed out.
    this.#producer.on(
      "client:broker:connect",
      ({ broker }) => this.#brokers.set(at({ broker }), broker),
    );
    this.#producer.on("client:broker:failed", (event) => this.#unreachable.add(at(event)));
    this.#producer.on("client:broker:connect", (event) => this.#unreachable.delete(at(event)));
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
      let lastFailure: unknown;
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
        failed: (error) => lastFailure = error,
      };
      // The client can neither be told to drop a request it was handed nor bound its tries in
      // time: past the bound the caller is answered, a send still waiting its turn is dropped
      // (never handed on), and one the client holds may still be written by its tries.
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(send);
        if (at >= 0) this.#waiting.splice(at, 1);
        send.reject(this.#timedOut(records, lastFailure));
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

  // The rejection of a send past its bound: the topics and keys named, the last try's failure
  // (if one failed) as its cause.
  #timedOut(records: readonly OutgoingRecord[], cause: unknown): DeliveryTimeoutError {
    const topics = [...new Set(records.map((r) => JSON.stringify(r.topic)))].join(", ");
    const keys = [...new Set(records.flatMap((r) => r.key === undefined ? [] : [keyText(r.key)]))];
    const shown = keys.length > 3 ? [...keys.slice(0, 3), `${keys.length - 3} more`] : keys;
    const of = shown.length === 0 ? "" : ` of key ${shown.join(", ")}`;
    return new DeliveryTimeoutError(
      `send(${topics})${of}: no acknowledgement within ${this.#deliveryTimeoutMs} ms ` +
        `(${DELIVERY_TIMEOUT_KEY}); the broker is out of reach or the partition has no leader`,
      cause === undefined ? undefined : { cause },
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
  async #deliver(sends: readonly Waiting[]): Promise<void> {
    const entries = await this.#placeAll(sends);
    const found = new Map<Waiting, RecordMetadata[]>();
    const refused = new Map<Waiting, unknown>();
    const alone = await this.#untilKnown(entries, found, refused);
    // Sends that shared a partition the broker refused go again one by one, each with only its
    // records not written yet: only the send of the refused record fails.
    for (const send of alone) {
      if (send.settled()) continue;
      const rest = entries.filter((e) => e.send === send && found.get(send)?.[e.at] === undefined);
      await this.#untilKnown(rest, found, refused);
    }
    for (const send of sends) {
      const sent = found.get(send) ?? [];
      // A send refused in part says which of its records went, for a caller that sends again.
      if (refused.has(send)) send.reject(withWritten(refused.get(send), sent));
      // Sparse until each record's partition was written: `filter` skips the holes.
      else if (sent.filter(Boolean).length === send.records.length) send.resolve(sent);
    }
  }

  // Tries `entries` until the broker wrote or refused each partition of them, or every caller was
  // answered; answers the sends to try again alone. What went with an unknown outcome is sent
  // again under the same producer id first: only once none is left does a new id start, for the
  // partitions that need one.
  async #untilKnown(
    entries: readonly Entry[],
    found: Map<Waiting, RecordMetadata[]>,
    refused: Map<Waiting, unknown>,
  ): Promise<Waiting[]> {
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
        this.#dropConnectionsAfterTimeout(error);
        // Refused credentials or certificates: no try mends them.
        if (securityFailure(error, this.#client) !== undefined) {
          for (const entry of [...open, ...renumbered]) refused.set(entry.send, error);
          break;
        }
      }
      open = this.#sorted(open, outcomes, failure, tally);
      // A try that failed before its request went leaves the doubt as it was.
      if (handedOn) doubt = open.length > 0;
      const left = [...open, ...renumbered];
      if (left.length === 0) break;
      for (const entry of left) entry.send.failed(failure);
      if (left.every((entry) => entry.send.settled())) {
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

  // Sorts the outcome of each partition of `open` into `tally`: written (each record's offset in
  // `found`), refused (a send alone fails; several go again one by one), refused for its
  // numbering; answers the entries whose outcome is not known, to try again.
  #sorted(
    open: readonly Entry[],
    outcomes: ReturnType<typeof produceOutcomes>,
    failure: unknown,
    { found, refused, renumbered, alone }: Tally,
  ): Entry[] {
    const next: Entry[] = [];
    for (const group of byPartition(open)) {
      const [first] = group;
      const outcome = outcomes.get(partitionKey(first.record.topic, first.partition)) ??
        { kind: "unknown" };
      if (outcome.kind === "written") {
        // The client numbers this partition's next records as if these were not written.
        if (!outcome.counted) this.#renumber = true;
        group.forEach((entry, i) =>
          place(found, entry, outcome.offset < 0n ? -1n : outcome.offset + BigInt(i))
        );
      } else if (outcome.kind === "refused") {
        const owners = [...new Set(group.map((entry) => entry.send))];
        if (owners.length === 1) {
          const topic = JSON.stringify(first.record.topic);
          refused.set(
            first.send,
            new Error(`send(${topic}): the broker refused the record: ${outcome.reason}`, {
              cause: failure,
            }),
          );
        } else alone.push(...owners.filter((send) => !alone.includes(send)));
      } else if (outcome.kind === "renumber") {
        renumbered.push(...group);
      } else {
        next.push(...group);
      }
    }
    return next;
  }

  // The partition of each record of `sends`, asking the cluster (again, while it does not answer,
  // until every caller was answered); a send whose records cannot be placed fails alone.
  async #placeAll(sends: readonly Waiting[]): Promise<Entry[]> {
    for (let attempt = 1;; attempt++) {
      try {
        const metadata = await this.#metadata(sends.flatMap((s) => s.records));
        const entries: Entry[] = [];
        for (const send of sends) {
          if (send.settled()) continue;
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
        if (sends.every((send) => send.settled())) return [];
        for (const send of sends) send.failed(error);
        await pause(backoff(undefined, "metadata", attempt), error);
      }
    }
  }

  // The client reads a late answer to a request it timed out without consuming its bytes, and
  // misreads every answer after it on that connection (a request whose answer is never matched
  // waits out its whole timeout: 30 s after a broker woke up). As Java's client does, the
  // connections are closed after a request timed out: the next try goes on new ones.
  #dropConnectionsAfterTimeout(error: unknown): void {
    if (!holdsTimeout(error)) return;
    const pool = this.#producer.connections;
    for (const broker of this.#brokers.values()) {
      pool.getEstablishedConnection(broker)?.close(() => {});
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
      messages: entries.map((entry) => this.#message(entry.record, entry.partition)),
    });
    return new Map(offsets.map((o) => [partitionKey(o.topic, o.partition), o.offset]));
  }

  // A send of the producer that is not idempotent (acks 0 or 1): handed to the client at once.
  async #sendNow(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
    // One record alone is left to the package's partitioner, which answers its offset.
    if (records.length === 1 && records[0].partition === undefined) {
      const { offsets = [] } = await this.#producer.send({
        acks: this.#acks,
        messages: [this.#message(records[0], undefined)],
      });
      // With acks 0 the broker answers nothing: no place is known (Java's -1).
      return [offsets[0] ?? { topic: records[0].topic, partition: -1, offset: -1n }];
    }
    const partitions = this.#place(await this.#metadata(records), records);
    const { offsets = [] } = await this.#producer.send({
      acks: this.#acks,
      messages: records.map((record, i) => this.#message(record, partitions[i])),
    });
    // The broker answers each partition's first offset; its records follow in the order sent.
    const next = new Map(offsets.map((o) => [partitionKey(o.topic, o.partition), o.offset]));
    return records.map((record, i) => {
      const key = partitionKey(record.topic, partitions[i]);
      const offset = next.get(key);
      if (offset === undefined) {
        return { topic: record.topic, partition: partitions[i], offset: -1n };
      }
      next.set(key, offset + 1n);
      return { topic: record.topic, partition: partitions[i], offset };
    });
  }

  #message(record: OutgoingRecord, partition: number | undefined): Bytes {
    const message: Bytes = {
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

  /**
   * The cluster as the broker describes it now: a round trip, for the health check, answered
   * within `withinMs`: past it, an error naming the brokers and those it could not connect to
   * (the client's tries may outlast the health check's bound).
   */
  async cluster(withinMs: number): Promise<ClusterView> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.#noAnswer(withinMs)), withinMs);
    });
    const asked = this.#producer.metadata({ topics: [], forceUpdate: true }).then(
      (metadata) => ({ clusterId: metadata.id, brokers: metadata.brokers.size }),
      (error) => {
        throw explainedError(error, this.#client);
      },
    );
    // Its failure past the bound is nobody's to hear.
    asked.catch(() => {});
    try {
      return await Promise.race([asked, bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  #noAnswer(ms: number): Error {
    const failed = [...this.#unreachable];
    return new Error(
      `no broker answered within ${ms} ms (kafka.bootstrap-servers: ` +
        `${this.#client.bootstrapBrokers.join(", ")}); ` +
        (failed.length > 0
          ? `connecting to ${failed.join(", ")} failed`
          : "connected, but no answer came"),
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
