// kafka()'s close: the listeners, then the outboxes' relays, within one shutdown timeout between
// them, not one each. With a clock of the test's: the relays get what the listeners left. On the
// broker: a listener stuck in its method takes its whole budget, and the relays that follow get
// none of a fresh one.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { closeKafkaParts } from "../../src/kafka/kafka_close.ts";
import { KafkaListener } from "../../src/kafka/listener/kafka_listener.ts";
import { kafkaListeners } from "../../src/kafka/listener/listeners.ts";
import { deferred } from "../deferred.ts";
import { createTopic, uniqueName } from "./broker.ts";
import { KeptLog, producerSender, sendJson, testHost } from "./listener/listener_fixture.ts";

describe("kafka()'s close", () => {
  it("gives the outboxes what the listeners left of the shutdown timeout (a clock of the test's)", async () => {
    for (const took of [400, 1000, 1500]) {
      let now = 10_000;
      const events: string[] = [];
      const log = new KeptLog();
      await closeKafkaParts(
        {
          listeners: {
            close: (ms) => {
              events.push(`listeners ${ms}`);
              now += took;
              return Promise.resolve({ abandoned: took >= ms ? 1 : 0 });
            },
          },
          stopLag: () => {
            events.push("lag");
          },
          outboxes: {
            close: (ms) => {
              events.push(`outboxes ${ms}`);
              return Promise.resolve();
            },
          },
          logger: log,
        },
        1000,
        () => now,
      );
      assert.deepEqual(events, ["listeners 1000", "lag", `outboxes ${Math.max(0, 1000 - took)}`]);
    }
  });

  it("leaves the relays none of a fresh timeout after a listener stuck in its method", async () => {
    const topic = uniqueName("close-deadline");
    await createTopic(topic, 1);
    const sender = producerSender();
    const running = deferred();
    const never = deferred();
    class Stuck {
      @KafkaListener({ topics: topic, groupId: uniqueName("g") })
      async onRecord(): Promise<void> {
        running.resolve();
        await never.promise;
      }
    }
    const log = new KeptLog();
    const listeners = kafkaListeners([{ instance: new Stuck() }], testHost(sender, log));
    const events: string[] = [];
    try {
      await listeners.start();
      await sendJson(sender, topic, [{ value: 1 }]);
      await running.promise;
      const timeoutMs = 1000;
      await closeKafkaParts(
        {
          listeners: {
            close: async (ms) => {
              const left = await listeners.close(ms);
              events.push(`listeners abandoned ${left.abandoned}`);
              return left;
            },
          },
          stopLag: undefined,
          // A relay stuck in a send: its close waits for it as long as it is given.
          outboxes: {
            close: async (ms) => {
              events.push(ms < timeoutMs ? "outboxes given what was left" : `outboxes given ${ms}`);
              await new Promise((resolve) => setTimeout(resolve, ms));
            },
          },
          logger: log,
        },
        timeoutMs,
      );
      assert.deepEqual(events, ["listeners abandoned 1", "outboxes given what was left"]);
      assert.match(log.lines.join("\n"), /Kafka listeners: 1 record still running after/);
    } finally {
      never.resolve();
      await listeners.close(10_000);
      await sender.close();
    }
  });
});
