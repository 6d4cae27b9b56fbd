// A member the group dropped (a method held the event loop past the session timeout, so no
// heartbeat went): it joins again and the partition goes on from what was committed, every
// record processed at least once.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { createTopic, uniqueName } from "../broker.ts";
import { KeptLog, producerSender, sendJson, testHost, until } from "./listener_fixture.ts";

describe("@KafkaListener dropped by its group", () => {
  it("joins again and goes on from the committed offset", async () => {
    const topic = uniqueName("listen-dropped");
    await createTopic(topic, 1);
    const sender = producerSender();
    const seen: bigint[] = [];
    let blocked = false;
    class Blocking {
      @KafkaListener({ topics: topic, groupId: uniqueName("g") })
      onRecord(_value: unknown, record: KafkaRecord): void {
        seen.push(record.offset);
        if (record.offset === 1n && !blocked) {
          blocked = true;
          // Holds the event loop past the session timeout (6 s): no heartbeat goes meanwhile.
          const end = Date.now() + 8000;
          while (Date.now() < end) { /* busy */ }
        }
      }
    }
    const log = new KeptLog();
    const listeners = kafkaListeners([{ instance: new Blocking() }], testHost(sender, log));
    try {
      await listeners.start();
      await sendJson(sender, topic, [0, 1, 2].map((n) => ({ value: n })));
      await until(() => seen.includes(2n), "the record after the block");
      await sendJson(sender, topic, [3, 4].map((n) => ({ value: n })));
      await until(() => seen.includes(4n), "records sent after the drop");
      for (const offset of [0n, 1n, 2n, 3n, 4n]) {
        assert.ok(seen.includes(offset), `offset ${offset}`);
      }
      // In order, each record after the one before (a record delivered again repeats from there).
      for (let i = 1; i < seen.length; i++) {
        assert.ok(seen[i] <= seen[i - 1] + 1n, `offsets in order: ${seen.join(", ")}`);
      }
    } finally {
      await listeners.close(10_000);
      await sender.close();
    }
  });
});
