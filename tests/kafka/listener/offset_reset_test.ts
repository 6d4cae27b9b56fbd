// A committed offset the log does not have (past its end, or behind its retention): the member
// starts where `auto-offset-reset` says, as Java's consumer does, rather than fetching that offset
// again and again.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Admin } from "@platformatic/kafka";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import { KAFKA_BOOTSTRAP, uniqueName } from "../broker.ts";
import { listenerTopic, sendJson, until, withListeners } from "./listener_fixture.ts";

describe("@KafkaListener with a committed offset out of the log's range", () => {
  it("starts from the reset's offset (earliest) and gets every record", async () => {
    const topic = await listenerTopic("out-of-range", 1);
    const groupId = uniqueName("out-of-range");
    const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] });
    try {
      await admin.alterConsumerGroupOffsets({
        groupId,
        topics: [{ name: topic, partitionOffsets: [{ partition: 0, offset: 10n }] }],
      });
    } finally {
      await admin.close();
    }
    const seen: unknown[] = [];
    class Orders {
      @KafkaListener({ topics: topic, groupId })
      onOrder(value: unknown): void {
        seen.push(value);
      }
    }
    await withListeners(new Orders(), async ({ sender, log, listeners }) => {
      await sendJson(sender, topic, [{ value: "first" }]);
      await listeners.start();
      await sendJson(sender, topic, [{ value: "second" }]);
      await until(
        () => seen.length >= 2,
        "both records at the listener",
        60_000,
        () => log.lines.join("\n"),
      );
      assert.deepEqual(seen, ["first", "second"]);
    });
  });
});
