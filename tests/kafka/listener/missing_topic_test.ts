// A listener of a topic that does not exist yet, as Java's consumer: it waits for it quietly (a
// line at most, no stack trace each try), and the broker makes it where its settings allow.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import { uniqueName } from "../broker.ts";
import { sendJson, until, withListeners } from "./listener_fixture.ts";

describe("@KafkaListener on a topic that does not exist yet", () => {
  it("makes it where the broker allows, and takes its first record, saying little", async () => {
    const topic = uniqueName("not-yet");
    const seen: unknown[] = [];
    class Late {
      @KafkaListener({ topics: topic, groupId: uniqueName("late") })
      onRecord(value: unknown): void {
        seen.push(value);
      }
    }
    await withListeners(new Late(), async ({ sender, log, listeners }) => {
      await listeners.start();
      await sendJson(sender, topic, [{ value: "first" }]);
      await until(() => seen.length === 1, "the first record of the new topic");
      assert.deepEqual(seen, ["first"]);
      const said = log.lines.filter((line) => !line.startsWith("info"));
      assert.ok(said.length <= 1, `at most one line while waiting:\n${said.join("\n")}`);
    });
  });
});
