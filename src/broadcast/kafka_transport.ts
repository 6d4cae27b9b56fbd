// Broadcast through a Kafka topic (`@platformatic/kafka`): each message is one record, keyed by its
// channel so that a channel's messages keep their order on one partition. Every replica consumes
// the whole topic in a consumer group of its own (so that each one sees every record) from the
// topic's end as it starts, committing nothing: a live feed has no past to catch up on. Apart in
// its own file so that it can take the client settings of the app's `kafka:` section later.
import { Backoff } from "../runtime/backoff.ts";
import { Buffer } from "node:buffer";
import { closeWithin } from "../kafka/client_connections.ts";
import { deadline } from "../runtime/deadline.ts";
import { importOptional } from "../runtime/optional_module.ts";
import type { BroadcastTransport } from "./broadcast_transport.ts";
import { transportFailure } from "./transport_failure.ts";

/** Where the Kafka transport connects, and the topic its records go to. */
export interface KafkaTransportSettings {
  readonly bootstrapServers: readonly string[];
  readonly topic: string;
  readonly clientId: string;
  /** How long a publish waits for the broker's answer, in ms; 40 s when absent. */
  readonly publishWithinMs?: number;
}

const STRICT_UTF8 = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true });

type Producer = import("@platformatic/kafka").Producer<Buffer, Buffer, Buffer, Buffer>;
type Consumer = import("@platformatic/kafka").Consumer<Buffer, Buffer, Buffer, Buffer>;
type MessagesStream = import("@platformatic/kafka").MessagesStream<Buffer, Buffer, Buffer, Buffer>;

type KafkaModule = typeof import("@platformatic/kafka");

/** The wait before reading again after failures in a row: 1 s, doubling, at most 30 s. */
const READ_AGAIN = /* @__PURE__ */ new Backoff({ delay: 1000, multiplier: 2, maxDelay: 30_000 });

// How long a publish waits for its answer: past the client's own request timeout (30 s), so that
// the client's retries have their turn, but bounded: a send whose answer the client lost (a broker
// gone mid-request) must fail, not hold its caller for ever.
const PUBLISH_WITHIN_MS = 40_000;

// How long a client's close may wait on the broker (a consumer's leave of its group) before its
// connections are cut: a broker that does not answer must not hold the app's shutdown.
const CLOSE_MS = 5000;

// A consumer's close, its streams closed first (the typings give `close(true)` no promise).
const leave = (consumer: Consumer): Promise<void> =>
  (consumer.close as (force: boolean) => Promise<void>).call(consumer, true);

/** Broadcast through one Kafka topic, each replica reading all of it. */
export class KafkaTransport implements BroadcastTransport {
  readonly name: string;
  readonly #settings: KafkaTransportSettings;
  readonly #warn: (message: string, error: unknown) => void;
  readonly #load: () => Promise<KafkaModule>;
  #producer: Producer | undefined;
  #consumer: Consumer | undefined;
  #stream: MessagesStream | undefined;
  #reading: Promise<void> | undefined;
  #closed = false;
  // The next offset to read of each partition: where a new stream starts after one failed.
  readonly #next = new Map<number, bigint>();
  // Ends the wait before reading again, at close.
  #wake: (() => void) | undefined;

  /** `load` gives the client's module: `@platformatic/kafka`, unless a test gives its own. */
  constructor(
    settings: KafkaTransportSettings,
    warn: (message: string, error: unknown) => void,
    load: () => Promise<KafkaModule> = () =>
      importOptional(() => import("@platformatic/kafka"), {
        packages: ["@platformatic/kafka"],
        neededBy: "thaw.broadcast.transport: kafka",
        what: "the Kafka client",
      }),
  ) {
    this.#settings = settings;
    this.#warn = warn;
    this.#load = load;
    this.name = `Kafka at ${settings.bootstrapServers.join(",")} (topic ${
      JSON.stringify(settings.topic)
    })`;
  }

  async start(receive: (text: string) => void): Promise<void> {
    const kafka = await this.#load();
    const { bootstrapServers, topic, clientId } = this.#settings;
    this.#producer = new kafka.Producer({
      clientId,
      bootstrapBrokers: [...bootstrapServers],
      // As Java's clients: a topic not made yet is made where the broker's settings allow.
      autocreateTopics: true,
    });
    const consumer = this.#newConsumer(kafka);
    this.#consumer = consumer;
    try {
      // The topic's end now, read before start() resolves: a record published from then on, by
      // any replica, is at or past it, so none is missed between the start and the first fetch.
      const ends = await consumer.listOffsets({ topics: [topic] });
      for (const [partition, offset] of (ends.get(topic) ?? []).entries()) {
        this.#next.set(partition, offset);
      }
      const stream = await this.#consume(consumer);
      this.#stream = stream;
      this.#reading = this.#read(kafka, stream, receive);
    } catch (error) {
      await this.close();
      throw transportFailure("consume from", this.name, error);
    }
  }

  #newConsumer(kafka: KafkaModule): Consumer {
    const { bootstrapServers, clientId } = this.#settings;
    const consumer: Consumer = new kafka.Consumer({
      clientId,
      // A group of this consumer alone: every replica gets every record.
      groupId: `${clientId}-${crypto.randomUUID()}`,
      bootstrapBrokers: [...bootstrapServers],
      autocreateTopics: true,
    });
    // A rejoin that failed for good is said as an `error` event, which with no listener would end
    // the process; the stream's failure that follows makes the transport read again.
    consumer.on("error", (error: unknown) => {
      if (!this.#closed) this.#warn(`Broadcaster: the consumer of ${this.name} failed:`, error);
    });
    return consumer;
  }

  async #consume(consumer: Consumer): Promise<MessagesStream> {
    const { topic } = this.#settings;
    const stream = await consumer.consume({
      topics: [topic],
      mode: "manual",
      offsets: [...this.#next].map(([partition, offset]) => ({ topic, partition, offset })),
      autocommit: false,
    });
    // A stream that fails before the read loop reads it (its consumer closed by a close under
    // way, as it lists its offsets) emits `error` with no one listening: an uncaught error. The
    // loop's reading hears every failure all the same.
    stream.on("error", () => {});
    return stream;
  }

  // Reads the stream; when it fails (its brokers gone), a new consumer reads on from the next
  // offset of each partition, after a wait that grows while it keeps failing, until the close.
  async #read(
    kafka: KafkaModule,
    first: MessagesStream,
    receive: (text: string) => void,
  ): Promise<void> {
    let stream = first;
    for (let attempt = 0;;) {
      let failure: unknown;
      try {
        for await (const message of stream) {
          attempt = 0;
          this.#next.set(message.partition, message.offset + 1n);
          const value = message.value as Buffer | undefined | null;
          let text = "";
          try {
            text = value === undefined || value === null ? "" : STRICT_UTF8.decode(value);
          } catch {
            // Not UTF-8: no message, which the broadcaster reports.
          }
          receive(text);
        }
      } catch (error) {
        failure = error;
      }
      if (this.#closed) return;
      let ms = READ_AGAIN.delayOf(++attempt);
      this.#warn(
        `Broadcaster: stopped reading from ${this.name}; reading again in ${ms} ms:`,
        failure ?? new Error("the stream ended"),
      );
      for (;;) {
        await this.#drop();
        if (!await this.#pause(ms)) return;
        const consumer = this.#newConsumer(kafka);
        this.#consumer = consumer;
        try {
          stream = await this.#consume(consumer);
        } catch (error) {
          if (this.#closed) return;
          ms = READ_AGAIN.delayOf(++attempt);
          this.#warn(
            `Broadcaster: could not read from ${this.name} again; trying in ${ms} ms:`,
            error,
          );
          continue;
        }
        if (this.#closed) {
          await stream.close().catch(() => {});
          return;
        }
        this.#stream = stream;
        this.#warn(`Broadcaster: reading again from ${this.name}`, undefined);
        break;
      }
    }
  }

  // Lets the failed stream and its consumer go (leaving its group, when a broker hears it).
  async #drop(): Promise<void> {
    const stream = this.#stream;
    const consumer = this.#consumer;
    this.#stream = undefined;
    this.#consumer = undefined;
    await stream?.close().catch(() => {});
    if (consumer !== undefined) await closeWithin(consumer, () => leave(consumer), CLOSE_MS);
  }

  // Waits `ms`, unless the transport closes first: then false.
  #pause(ms: number): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve(true);
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve(false);
      };
    });
  }

  async publish(channel: string, text: string): Promise<void> {
    const producer = this.#producer;
    if (producer === undefined) throw new Error(`Broadcaster: ${this.name} is not connected`);
    const ms = this.#settings.publishWithinMs ?? PUBLISH_WITHIN_MS;
    try {
      await deadline(
        producer.send({
          messages: [{
            topic: this.#settings.topic,
            key: Buffer.from(channel),
            value: Buffer.from(text),
          }],
        }),
        ms,
        () => new Error(`no answer within ${ms} ms`),
      );
    } catch (error) {
      throw transportFailure("publish on", this.name, error);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
    const stream = this.#stream;
    const consumer = this.#consumer;
    const producer = this.#producer;
    this.#stream = undefined;
    this.#consumer = undefined;
    this.#producer = undefined;
    // The clients before the read loop is awaited: a join it has under way waits on the broker,
    // and ends once its consumer is closed. Leaving the group at once: nothing was committed, and
    // no other member will take over.
    await stream?.close().catch(() => {});
    await Promise.all([
      consumer === undefined ? undefined : closeWithin(consumer, () => leave(consumer), CLOSE_MS),
      producer === undefined ? undefined : closeWithin(producer, () => producer.close(), CLOSE_MS),
    ]);
    await this.#reading;
    // A consumer made while the close began, reading again after a failure.
    await this.#drop();
  }
}
