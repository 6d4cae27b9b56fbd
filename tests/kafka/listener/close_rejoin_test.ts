// A member joins the group while another closes with records running (a rolling deploy): the
// closing member's rejoin waits for its records, as a rebalance's does, so that the newcomer is
// given their partitions only once they finished and were committed, never while they run.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Admin } from "@platformatic/kafka";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { KAFKA_BOOTSTRAP, uniqueName } from "../broker.ts";
import { deferred } from "../../deferred.ts";
import {
  KeptLog,
  listenerTopic,
  producerSender,
  sendJson,
  testHost,
  until,
} from "./listener_fixture.ts";

/** The group's state as its coordinator tells it (`PREPARINGREBALANCE`, `STABLE`, ...). */
async function groupState(group: string): Promise<string | undefined> {
  const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] });
  try {
    return (await admin.describeGroups({ groups: [group] })).get(group)?.state;
  } finally {
    await admin.close();
  }
}

describe("@KafkaListener closing while another member joins", () => {
  it("gives the newcomer no record the closing member still runs", async () => {
    const topic = await listenerTopic("listen-close-rejoin", 2);
    const group = uniqueName("g");
    const sender = producerSender();
    const gate = deferred<void>();
    const running = new Set<number>();
    const ended: number[] = [];
    // What the newcomer got, and whether the closing member was still running it then.
    const taken: { id: number; whileRunning: boolean }[] = [];
    class Closing {
      @KafkaListener({ topics: topic, groupId: group })
      async onRecord(value: { id: number }): Promise<void> {
        running.add(value.id);
        await gate.promise;
        running.delete(value.id);
        ended.push(value.id);
      }
    }
    class Newcomer {
      @KafkaListener({ topics: topic, groupId: group })
      onRecord(value: { id: number }): void {
        taken.push({ id: value.id, whileRunning: running.has(value.id) });
      }
    }
    const log = new KeptLog();
    const closing = kafkaListeners([{ instance: new Closing() }], testHost(sender, log));
    const newcomer = kafkaListeners([{ instance: new Newcomer() }], testHost(sender, log));
    try {
      await closing.start();
      await sendJson(sender, topic, [
        { value: { id: 1 }, partition: 0 },
        { value: { id: 2 }, partition: 1 },
      ]);
      await until(() => running.size === 2, "both records running");
      const closed = closing.close(120_000);
      const joined = newcomer.start();
      joined.catch(() => {});
      // The newcomer's join began the rebalance; the closing member hears of it at its next
      // heartbeat (every 500 ms) and would rejoin at once without the hold, handing the
      // partitions over within a second. Given that long several times over, for a record the
      // newcomer must not get: a give-up on the wrong outcome, not a wait to order events.
      while (await groupState(group) !== "PREPARINGREBALANCE") {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await until(() => taken.length > 0, "a record taken over while it runs", 5_000)
        .catch(() => {});
      assert.deepEqual(taken, [], "the newcomer got records the closing member was running");
      assert.equal(running.size, 2);
      gate.resolve();
      assert.deepEqual(await closed, { abandoned: 0 });
      assert.deepEqual(ended.sort(), [1, 2]);
      await joined;
      // Both were committed before the partitions moved: the newcomer starts after them.
      await sendJson(sender, topic, [{ value: { id: 3 }, partition: 0 }]);
      await until(() => taken.length > 0, "the record sent after the close");
      assert.deepEqual(taken, [{ id: 3, whileRunning: false }]);
    } finally {
      gate.resolve();
      await closing.close(10_000);
      await newcomer.close(10_000);
      await sender.close();
    }
  });
});
