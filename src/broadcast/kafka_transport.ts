// Broadcast through a Kafka topic (`@platformatic/kafka`): each message is one record, keyed by its
// channel so that a channel's messages keep their order on one partition. Every replica consumes
// the whole topic in a consumer group of its own (so that each one sees every record) from the
// topic's end as it starts, committing nothing: a live feed has no past to catch up on. Apart in
// its own file so that it can take the client settings of the app's `kafka:` section later.
import { Buffer } from "node:buffer";
import { importOptional } from "../runtime/optional_module.ts";
import type { BroadcastTransport } from "./broadcast_transport.ts";
import { transportFailure } from "./transport_failure.ts";

/** Where the Kafka transport connects, and the topic its records go to. */
export interface KafkaTransportSettings {
  readonly bootstrapServers: readonly string[];
  readonly topic: string;
  readonly clientId: string;
}

const STRICT_UTF8 = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true });

type Producer = import("@platformatic/kafka").Producer<Buffer, Buffer, Buffer, Buffer>;
type Consumer = import("@platformatic/kafka").Consumer<Buffer, Buffer, Buffer, Buffer>;
type MessagesStream = import("@platformatic/kafka").MessagesStream<Buffer, Buffer, Buffer, Buffer>;

/** Broadcast through one Kafka topic, each replica reading all of it. */
export class KafkaTransport implements BroadcastTransport {
  readonly name: string;
  readonly #settings: KafkaTransportSettings;
  readonly #warn: (message: string, error: unknown) => void;
  #producer: Producer | undefined;
  #consumer: Consumer | undefined;
  #stream: MessagesStream | undefined;
  #reading: Promise<void> | undefined;
  #closed = false;

  constructor(settings: KafkaTransportSettings, warn: (message: string, error: unknown) => void) {
    this.#settings = settings;
    this.#warn = warn;
    this.name = `Kafka at ${settings.bootstrapServers.join(",")} (topic ${
      JSON.stringify(settings.topic)
    })`;
  }

  async start(receive: (text: string) => void): Promise<void> {
    const kafka = await importOptional(() => import("@platformatic/kafka"), {
      packages: ["@platformatic/kafka"],
      neededBy: "thaw.broadcast.transport: kafka",
      what: "the Kafka client",
    });
    const { bootstrapServers, topic, clientId } = this.#settings;
    const brokers = [...bootstrapServers];
    this.#producer = new kafka.Producer({ clientId, bootstrapBrokers: brokers });
    const consumer = new kafka.Consumer({
      clientId,
      // A group of this replica alone: every replica gets every record.
      groupId: `${clientId}-${crypto.randomUUID()}`,
      bootstrapBrokers: brokers,
    });
    this.#consumer = consumer;
    try {
      // The topic's end now, read before start() resolves: a record published from then on, by
      // any replica, is at or past it, so none is missed between the start and the first fetch.
      const ends = await consumer.listOffsets({ topics: [topic] });
      const offsets = (ends.get(topic) ?? []).map((offset, partition) => ({
        topic,
        partition,
        offset,
      }));
      const stream = await consumer.consume({
        topics: [topic],
        mode: "manual",
        offsets,
        autocommit: false,
      });
      this.#stream = stream;
      this.#reading = this.#read(stream, receive);
    } catch (error) {
      await this.close();
      throw transportFailure("consume from", this.name, error);
    }
  }

  async #read(stream: MessagesStream, receive: (text: string) => void): Promise<void> {
    try {
      for await (const message of stream) {
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
      if (!this.#closed) {
        this.#warn(`Broadcaster: stopped reading from ${this.name}:`, error);
      }
    }
  }

  async publish(channel: string, text: string): Promise<void> {
    const producer = this.#producer;
    if (producer === undefined) throw new Error(`Broadcaster: ${this.name} is not connected`);
    try {
      await producer.send({
        messages: [{
          topic: this.#settings.topic,
          key: Buffer.from(channel),
          value: Buffer.from(text),
        }],
      });
    } catch (error) {
      throw transportFailure("publish on", this.name, error);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const stream = this.#stream;
    const consumer = this.#consumer;
    const producer = this.#producer;
    this.#stream = undefined;
    this.#consumer = undefined;
    this.#producer = undefined;
    await stream?.close().catch(() => {});
    await this.#reading;
    // Leaving the group at once: nothing was committed, and no other member will take over.
    await Promise.all([
      (consumer?.close as ((force: boolean) => Promise<void>) | undefined)
        ?.call(consumer, true).catch(() => {}),
      producer?.close().catch(() => {}),
    ]);
  }
}
