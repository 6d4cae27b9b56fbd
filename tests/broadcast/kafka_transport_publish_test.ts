// The broadcast's Kafka transport when the client never answers a send (a broker gone mid-request,
// the client's callback lost): the publish fails within its bound, naming the transport, rather
// than holding its caller for ever. A client of the test's own stands for one that lost the
// answer: nothing of it keeps the process alive, as nothing of such a client did.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KafkaTransport } from "../../src/broadcast/kafka_transport.ts";

// A stream that yields nothing until closed; listeners, as the client's stream (a Node stream)
// takes them, are heard of nothing.
class QuietStream {
  #end: (() => void) | undefined;
  #ended = false;
  on(): this {
    return this;
  }
  [Symbol.asyncIterator](): AsyncIterator<never> {
    return {
      next: async () => {
        if (!this.#ended) await new Promise<void>((resolve) => this.#end = resolve);
        return { done: true, value: undefined as never };
      },
    };
  }
  close(): Promise<void> {
    this.#ended = true;
    this.#end?.();
    return Promise.resolve();
  }
}

const sends: unknown[] = [];
const silentKafka = {
  Producer: class {
    send(request: unknown): Promise<never> {
      sends.push(request);
      return new Promise<never>(() => {});
    }
    close(): Promise<void> {
      return Promise.resolve();
    }
  },
  Consumer: class {
    on(): void {}
    listOffsets(): Promise<Map<string, bigint[]>> {
      return Promise.resolve(new Map([["feed", [0n]]]));
    }
    consume(): Promise<QuietStream> {
      return Promise.resolve(new QuietStream());
    }
    close(): Promise<void> {
      return Promise.resolve();
    }
  },
};

describe("the broadcast's Kafka transport, its client silent", () => {
  it("fails a publish whose answer never comes within its bound, naming the transport", async () => {
    const transport = new KafkaTransport(
      { bootstrapServers: ["127.0.0.1:1"], topic: "feed", clientId: "t", publishWithinMs: 200 },
      () => {},
      () => Promise.resolve(silentKafka as never),
    );
    await transport.start(() => {});
    try {
      await assert.rejects(
        transport.publish("room", "hello"),
        (error: Error) =>
          error.message.includes('Kafka at 127.0.0.1:1 (topic "feed")') &&
          /no answer within 200 ms/.test(`${error.message} ${(error.cause as Error)?.message}`),
      );
      assert.equal(sends.length, 1);
    } finally {
      await transport.close();
    }
  });
});
