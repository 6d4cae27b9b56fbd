// Two members of a group and a rebalance while records run: a partition's records never run on
// both members at once (a member's JoinGroup waits for its records), and every record runs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { kafkaListeners, type Listeners } from "../../../src/kafka/listener/listeners.ts";
import { createTopic, uniqueName } from "../broker.ts";
import { KeptLog, producerSender, sendJson, testHost, until } from "./listener_fixture.ts";

const PARTITIONS = 4;
const PER_PARTITION = 40;

describe("@KafkaListener in a group of two", () => {
  it("never runs a partition's records on both members at once across a rebalance", async () => {
    const topic = uniqueName("listen-rebalance");
    await createTopic(topic, PARTITIONS);
    const sender = producerSender();
    const group = uniqueName("g");
    // Every begin and end, in the order they happened.
    const events: { member: string; what: "begin" | "end"; partition: number; offset: bigint }[] =
      [];
    const done = new Set<string>();
    function listenerOf(member: string) {
      class Worker {
        @KafkaListener({ topics: topic, groupId: group })
        async onRecord(_value: unknown, record: KafkaRecord): Promise<void> {
          const { partition, offset } = record;
          events.push({ member, what: "begin", partition, offset });
          await new Promise((resolve) => setTimeout(resolve, 20));
          events.push({ member, what: "end", partition, offset });
          done.add(`${partition}:${offset}`);
        }
      }
      return new Worker();
    }
    const log = new KeptLog();
    const host = testHost(sender, log);
    const first = kafkaListeners([{ instance: listenerOf("A") }], host);
    let second: Listeners | undefined;
    try {
      await first.start();
      let sent = 0;
      const send = async (perPartition: number) => {
        const records = [];
        for (let n = 0; n < perPartition; n++) {
          for (let p = 0; p < PARTITIONS; p++) records.push({ value: { n: sent++ }, partition: p });
        }
        await sendJson(sender, topic, records);
      };
      await send(PER_PARTITION);
      await until(() => done.size >= 20, "the first member's first records");
      second = kafkaListeners([{ instance: listenerOf("B") }], host);
      await second.start();
      // Load until the second member runs records of its own: the rebalance came under load.
      while (!events.some((e) => e.member === "B") && sent < 20 * PER_PARTITION * PARTITIONS) {
        await send(2);
      }
      assert.ok(events.some((e) => e.member === "B"), "the second member was given partitions");
      await until(() => done.size >= sent, "every record", 300_000);
      // Per partition, at most one record runs at a time, whichever member runs it.
      const running = new Map<number, { member: string; offset: bigint }>();
      for (const event of events) {
        const now = running.get(event.partition);
        if (event.what === "begin") {
          assert.equal(
            now,
            undefined,
            `partition ${event.partition} offset ${event.offset} began on ${event.member} while ` +
              `offset ${now?.offset} ran on ${now?.member}`,
          );
          running.set(event.partition, { member: event.member, offset: event.offset });
        } else {
          running.delete(event.partition);
        }
      }
    } finally {
      await Promise.all([first.close(10_000), second?.close(10_000)]);
      await sender.close();
    }
  });
});
