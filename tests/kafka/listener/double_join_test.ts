// Two joins of one consumer at once (the client rejoins after a heartbeat and after a commit, each
// on its own) share one JoinGroup and one SyncGroup, and the client says the one generation twice.
// The member keeps one generation: its records are committed, and a member of the group after it
// starts past them.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as client from "@platformatic/kafka";
import type { Buffer } from "node:buffer";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { createTopic, uniqueName } from "../broker.ts";
import { KeptLog, producerSender, sendJson, testHost, until } from "./listener_fixture.ts";

describe("@KafkaListener whose consumer says one generation twice", () => {
  it("runs and commits its records once, as one generation", async () => {
    const topic = uniqueName("listen-double-join");
    await createTopic(topic, 1);
    const groupId = uniqueName("g");
    const sender = producerSender();
    let joins = 0;
    // The first join is asked for twice at once, as the client's two rejoins would.
    class DoublingConsumer extends client.Consumer {
      constructor(options: client.ConsumerOptions<Buffer, Buffer, Buffer, Buffer>) {
        super(options);
        this.on("consumer:group:join", () => joins++);
        const join = (opts?: client.GroupOptions) => super.joinGroup(opts);
        Object.assign(this, {
          joinGroup: (opts?: client.GroupOptions): Promise<string> => {
            const answer = join(opts);
            if (joins === 0) join(opts).catch(() => {});
            return answer;
          },
        });
      }
    }
    const seen: bigint[] = [];
    class Listener {
      @KafkaListener({ topics: topic, groupId })
      onRecord(_value: unknown, record: KafkaRecord): void {
        seen.push(record.offset);
      }
    }
    const log = new KeptLog();
    const doubling = { ...client, Consumer: DoublingConsumer } as typeof client;
    const first = kafkaListeners(
      [{ instance: new Listener() }],
      testHost(sender, log, { client: doubling }),
    );
    const logged = () => log.lines.join("\n");
    try {
      await first.start();
      await until(() => joins === 2, "the generation said twice", 60_000, logged);
      await sendJson(sender, topic, [0, 1, 2].map((n) => ({ value: n })));
      await until(() => seen.includes(2n), "the records at the listener", 60_000, logged);
      assert.deepEqual(seen, [0n, 1n, 2n]);
    } finally {
      await first.close(10_000);
    }
    // What the first member finished was committed: the next starts after it.
    const second = kafkaListeners([{ instance: new Listener() }], testHost(sender, log));
    try {
      await second.start();
      await sendJson(sender, topic, [{ value: 3 }]);
      await until(() => seen.includes(3n), "the record sent after", 60_000, logged);
      assert.deepEqual(seen, [0n, 1n, 2n, 3n], logged());
    } finally {
      await second.close(10_000);
      await sender.close();
    }
  });
});
