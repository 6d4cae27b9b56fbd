// The broadcast's Kafka transport closed while it reads again after a failure: the new stream,
// whose consumer the close has just closed, fails as it starts ("Client is closed.", as
// @platformatic/kafka's does when its offsets cannot be listed), and that failure must not be an
// uncaught error. A fake client module (the transport takes its module from `load`): the race is
// set up exactly, which the broker tests can only hit by chance.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { Readable } from "node:stream";
import { KafkaTransport } from "../../src/broadcast/kafka_transport.ts";

type KafkaModule = typeof import("@platformatic/kafka");

// A stream that fails at once as it starts, as a MessagesStream of a closed consumer does.
function failingStream(): Readable & { close(): Promise<void> } {
  const stream = new Readable({
    objectMode: true,
    construct() {
      throw new Error("Client is closed.");
    },
    read() {},
  }) as Readable & { close(): Promise<void> };
  stream.close = () => {
    stream.destroy();
    return Promise.resolve();
  };
  return stream;
}

describe("the broadcast's Kafka transport, closed while it reads again", () => {
  it("leaves no uncaught error from the stream its close cut short", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => void uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    let consumes = 0;
    let transport: KafkaTransport | undefined;
    const streams: Readable[] = [];
    let closing: Promise<void> | undefined;
    class Producer {
      close(): Promise<void> {
        return Promise.resolve();
      }
    }
    class Consumer {
      on(): void {}
      listOffsets(): Promise<Map<string, bigint[]>> {
        return Promise.resolve(new Map([["t", [0n]]]));
      }
      async consume(): Promise<Readable> {
        consumes++;
        // The first stream fails: the transport reads again with a new consumer. As it asks
        // that one for its stream, the app closes.
        if (consumes === 2) closing = transport?.close();
        await Promise.resolve();
        const stream = failingStream();
        streams.push(stream);
        return stream;
      }
      close(): Promise<void> {
        return Promise.resolve();
      }
    }
    const kafka = { Producer, Consumer } as unknown as KafkaModule;
    try {
      transport = new KafkaTransport(
        { bootstrapServers: ["127.0.0.1:1"], topic: "t", clientId: "c" },
        () => {},
        () => Promise.resolve(kafka),
      );
      await transport.start(() => {});
      // The read loop waits its first second before reading again, then closes.
      while (closing === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      await closing;
      // Both streams ended: whatever they emitted has been emitted.
      for (const stream of streams) {
        if (!stream.closed) await new Promise((resolve) => stream.once("close", resolve));
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(consumes, 2);
      assert.deepEqual(uncaught.map(String), []);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });
});
