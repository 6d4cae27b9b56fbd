// A committed offset the log does not have (past its end, or behind its retention): the member
// starts where `auto-offset-reset` says, as Java's consumer does, rather than fetching that offset
// again and again.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Admin } from "@platformatic/kafka";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import { KAFKA_BOOTSTRAP, uniqueName } from "../broker.ts";
import { type KeptLog, listenerTopic, sendJson, until, withListeners } from "./listener_fixture.ts";

/** Commits `offset` on partition 0 of `topic` for `groupId`, as a group that read to there. */
async function commit(groupId: string, topic: string, offset: bigint): Promise<void> {
  const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] });
  try {
    await admin.alterConsumerGroupOffsets({
      groupId,
      topics: [{ name: topic, partitionOffsets: [{ partition: 0, offset }] }],
    });
  } finally {
    await admin.close();
  }
}

/**
 * The refusal to guess an offset, once the listener logged it, and the line it was logged with
 * (each logged line of the fetch loop has one error beside it).
 */
async function refusal(log: KeptLog): Promise<{ error: Error; line: string }> {
  const isRefusal = (detail: unknown): detail is Error =>
    detail instanceof Error && /auto-offset-reset is none/.test(detail.message);
  await until(
    () => log.details.some(isRefusal),
    "the refusal logged",
    60_000,
    () => log.lines.join("\n"),
  );
  const at = log.details.findIndex(isRefusal);
  return { error: log.details[at] as Error, line: log.lines[at] };
}

describe("@KafkaListener with a committed offset out of the log's range", () => {
  it("starts from the reset's offset (earliest) and gets every record", async () => {
    const topic = await listenerTopic("out-of-range", 1);
    const groupId = uniqueName("out-of-range");
    await commit(groupId, topic, 10n);
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

describe("@KafkaListener with auto-offset-reset none", () => {
  // A listener whose records are kept, on `topic` in `groupId`.
  function keeping(topic: string, groupId: string) {
    const seen: unknown[] = [];
    class Orders {
      @KafkaListener({ topics: topic, groupId })
      onOrder(value: unknown): void {
        seen.push(value);
      }
    }
    return { seen, instance: new Orders() };
  }

  it("reads from the committed offset when there is one", async () => {
    const topic = await listenerTopic("reset-none", 1);
    const groupId = uniqueName("reset-none");
    const { seen, instance } = keeping(topic, groupId);
    await withListeners(instance, async ({ sender, log, listeners }) => {
      await sendJson(sender, topic, [{ value: 0 }, { value: 1 }, { value: 2 }]);
      await commit(groupId, topic, 1n);
      await listeners.start();
      await until(() => seen.length >= 2, "records 1 and 2", 60_000, () => log.lines.join("\n"));
      assert.deepEqual(seen, [1, 2]);
    }, { autoOffsetReset: "none" });
  });

  it("takes no record and says why, naming the group and the partition, with none committed", async () => {
    const topic = await listenerTopic("reset-none-missing", 1);
    const groupId = uniqueName("reset-none-missing");
    const { seen, instance } = keeping(topic, groupId);
    await withListeners(instance, async ({ sender, log, listeners }) => {
      await sendJson(sender, topic, [{ value: "first" }]);
      await listeners.start();
      const { error } = await refusal(log);
      assert.ok(error.message.includes(`"${groupId}"`), error.message);
      assert.ok(error.message.includes(`${topic} partitions 0`), error.message);
      // The lane has no position until an offset is committed: nothing can have been fetched.
      assert.deepEqual(seen, []);
    }, { autoOffsetReset: "none" });
  });

  it("takes no record and says why when the committed offset is out of the log's range", async () => {
    const topic = await listenerTopic("reset-none-range", 1);
    const groupId = uniqueName("reset-none-range");
    await commit(groupId, topic, 10n);
    const { seen, instance } = keeping(topic, groupId);
    await withListeners(instance, async ({ sender, log, listeners }) => {
      await sendJson(sender, topic, [{ value: "first" }]);
      await listeners.start();
      await sendJson(sender, topic, [{ value: "second" }]);
      // The broker refuses the committed offset (the first failure), then the member will not
      // guess another (the second): a cause unlike the last one logged is logged at once.
      const { error, line } = await refusal(log);
      assert.ok(error.message.includes(`${topic} partitions 0`), error.message);
      assert.match(line, /failed \(2 in a row\)/);
      assert.deepEqual(seen, []);
    }, { autoOffsetReset: "none" });
  });
});
