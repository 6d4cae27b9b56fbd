// `KafkaTemplate`: what a bean sends records with. It serializes (JSON unless the app gave a
// serializer) and hands the record to the producer, or, inside a transaction of a datasource
// that keeps an outbox, to the outbox, which sends it once the transaction committed.
import { Buffer } from "node:buffer";
import { shownValue } from "../shown_value.ts";
import { checkOptionsObject } from "../options_object.ts";
import type { OutgoingRecord, RecordSender } from "./outgoing_record.ts";

/** Turns a value into the bytes of a record. */
export type Serializer = (value: unknown, topic: string) => Uint8Array;

/** A header's value: text is sent as UTF-8. */
export type HeaderValue = string | Uint8Array;

/** What `send` takes beside the topic and the value. */
export interface SendOptions {
  /** Records of one key go to one partition, in order (Java's partitioner: as Spring sends). */
  readonly key?: string | Uint8Array | undefined;
  /** Headers by name, or as pairs (a name may repeat). */
  readonly headers?:
    | Readonly<Record<string, HeaderValue>>
    | Iterable<readonly [string, HeaderValue]>
    | undefined;
  /** The partition to write to; the key's (or the next in turn without a key) when left out. */
  readonly partition?: number | undefined;
}

/** Where a sent record went. */
export type SendResult =
  /** The broker acknowledged the record (`acks`: every in-sync replica, by default). */
  | {
    readonly outboxed: false;
    readonly topic: string;
    readonly partition: number;
    readonly offset: bigint;
  }
  /**
   * Sent inside a transaction: the record waits in the datasource's outbox, and goes to the
   * broker once the transaction committed (never, if it rolls back).
   */
  | { readonly outboxed: true; readonly topic: string };

/**
 * Takes a record inside a transaction: the outbox of the transaction's datasource, which answers
 * `false` when no transaction is open (the record then goes to the broker at once).
 */
export type OutboxPort = (record: OutgoingRecord) => Promise<boolean>;

const utf8 = (text: string): Uint8Array => Buffer.from(text, "utf8");

/**
 * JSON, as Spring Kafka's `JsonSerializer` writes it: the serializer of values when
 * `kafka({ serializer })` names none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonSerializer } from "@thaw/thaw/kafka";
 *
 * assert.equal(new TextDecoder().decode(jsonSerializer({ id: 1 }, "orders")), '{"id":1}');
 * assert.throws(() => jsonSerializer(1n, "orders"), /send\("orders"\): the value is not JSON/);
 * ```
 */
export function jsonSerializer(value: unknown, topic: string): Uint8Array {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(
      `send(${JSON.stringify(topic)}): the value is not JSON (${(error as Error).message}); ` +
        "give kafka({ serializer }) for other values",
      { cause: error },
    );
  }
  if (text === undefined) {
    throw new TypeError(
      `send(${JSON.stringify(topic)}): a ${typeof value} is not JSON; send null for a ` +
        "tombstone, or give kafka({ serializer }) for other values",
    );
  }
  return utf8(text);
}

/**
 * Sends records to Kafka: a bean that `kafka()` of `@thaw/thaw/kafka` makes, for
 * `@Autowired(KafkaTemplate)`. Values are JSON unless `kafka({ serializer })` says otherwise;
 * `null` is a tombstone (a record with no value).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KafkaTemplate } from "@thaw/thaw/kafka";
 *
 * const sent: string[] = [];
 * const template = new KafkaTemplate({
 *   send: (records) => {
 *     sent.push(...records.map((r) => new TextDecoder().decode(r.value)));
 *     return Promise.resolve(records.map((r) => ({ topic: r.topic, partition: 0, offset: 7n })));
 *   },
 * });
 * const result = await template.send("orders", { id: 1 }, { key: "customer-4" });
 * assert.deepEqual(result, { outboxed: false, topic: "orders", partition: 0, offset: 7n });
 * assert.deepEqual(sent, ['{"id":1}']);
 * ```
 */
export class KafkaTemplate {
  readonly #sender: RecordSender;
  readonly #serializer: Serializer;
  readonly #outbox: OutboxPort | undefined;

  /**
   * `sender` sends the records (the app's producer); `serializer` makes a value's bytes
   * (JSON by default); `outbox` takes the records sent inside a transaction.
   */
  constructor(
    sender: RecordSender,
    serializer: Serializer = jsonSerializer,
    outbox?: OutboxPort,
  ) {
    this.#sender = sender;
    this.#serializer = serializer;
    this.#outbox = outbox;
  }

  /**
   * Sends `value` to `topic`. Resolves once the broker acknowledged it, with its partition and
   * offset; inside a transaction with an outbox, once the record is in the outbox (`outboxed`).
   * Rejects with what the broker or the serializer said, naming the topic.
   */
  async send(topic: string, value: unknown, options: SendOptions = {}): Promise<SendResult> {
    const record = this.#record(topic, value, options);
    if (this.#outbox !== undefined && await this.#outbox(record)) return { outboxed: true, topic };
    const [metadata] = await this.#sender.send([record]);
    return {
      outboxed: false,
      topic: metadata.topic,
      partition: metadata.partition,
      offset: metadata.offset,
    };
  }

  #record(topic: string, value: unknown, options: SendOptions): OutgoingRecord {
    if (typeof topic !== "string" || !/^[A-Za-z0-9._-]{1,249}$/.test(topic)) {
      throw new TypeError(
        `send(topic): a topic name is 1 to 249 of A-Z, a-z, 0-9, ".", "_" and "-", got ${
          shownValue(topic).slice(0, 120)
        }`,
      );
    }
    checkOptionsObject(options as unknown, `send(${JSON.stringify(topic)}, value, options)`, [
      "key",
      "headers",
      "partition",
    ]);
    const { key, headers, partition } = options;
    if (partition !== undefined && (!Number.isInteger(partition) || partition < 0)) {
      throw new RangeError(
        `send(${JSON.stringify(topic)}): partition must be a whole number from 0, got ${
          shownValue(partition)
        }`,
      );
    }
    return {
      topic,
      key: key === undefined ? undefined : bytesOf(key, topic, "key"),
      value: value === null || value === undefined ? undefined : this.#serializer(value, topic),
      headers: headersOf(headers, topic),
      partition,
    };
  }
}

function bytesOf(value: unknown, topic: string, what: string): Uint8Array {
  if (typeof value === "string") return utf8(value);
  if (value instanceof Uint8Array) return value;
  throw new TypeError(
    `send(${JSON.stringify(topic)}): ${what} must be text or a Uint8Array, got ${typeof value}`,
  );
}

function headersOf(
  headers: SendOptions["headers"],
  topic: string,
): (readonly [string, Uint8Array])[] {
  if (headers === undefined) return [];
  const pairs = Symbol.iterator in headers
    ? [...(headers as Iterable<readonly [string, HeaderValue]>)]
    : Object.entries(headers as Record<string, HeaderValue>);
  return pairs.map((pair) => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string") {
      throw new TypeError(
        `send(${JSON.stringify(topic)}): headers are { name: value } or [name, value] pairs`,
      );
    }
    return [pair[0], bytesOf(pair[1], topic, `header ${JSON.stringify(pair[0])}`)] as const;
  });
}
