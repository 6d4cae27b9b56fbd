// A member the group dropped (a method held the event loop past the session timeout, so no
// heartbeat went): it joins again and the partition goes on from what was committed, every
// record processed at least once.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as client from "@platformatic/kafka";
import type { Buffer } from "node:buffer";
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

// The client's own rejoin failing once with an error the client does not retry (a request timed
// out): the member, left with no generation and no join under way, joins again with a new consumer
// once the session timeout passed without a heartbeat. The client rejoins when a heartbeat says a
// rebalance began, and when a commit says the member's generation is stale.
const REJOINS = {
  "a heartbeat said a rebalance began": { heartbeat: 1, commit: 0 },
  "a commit said the generation is stale": { heartbeat: 0, commit: 1 },
} as const;

for (const [cause, armed] of Object.entries(REJOINS)) {
  describe(`@KafkaListener whose client's rejoin failed after ${cause}`, () => {
    it("joins again with a new consumer, and gets the records sent after", async () => {
      const topic = uniqueName("listen-rejoin-failed");
      await createTopic(topic, 1);
      const sender = producerSender();
      const seen: bigint[] = [];
      // Armed by the test: the next heartbeat or commit fails as `cause` says, the next join
      // times out.
      const faults = { heartbeat: 0, commit: 0, join: 0 };
      class FaultyConsumer extends client.Consumer {
        constructor(options: client.ConsumerOptions<Buffer, Buffer, Buffer, Buffer>) {
          super(options);
          type GetApi = (
            name: string,
            callback: (error: Error | null, api?: unknown) => void,
          ) => void;
          const self = this as unknown as Record<symbol, GetApi>;
          const getApi = self[client.kGetApi as unknown as symbol].bind(this);
          self[client.kGetApi as unknown as symbol] = (name, callback) =>
            getApi(name, (error, api) => {
              const fault = error !== null
                ? undefined
                : name === "Heartbeat" && faults.heartbeat > 0
                ? (faults.heartbeat--, new client.ProtocolError("REBALANCE_IN_PROGRESS"))
                : name === "OffsetCommit" && faults.commit > 0
                ? (faults.commit--, new client.ProtocolError("ILLEGAL_GENERATION"))
                : name === "JoinGroup" && faults.join > 0
                ? (faults.join--, new client.TimeoutError("Request timed out"))
                : undefined;
              if (fault === undefined) return callback(error, api);
              // The request fails as the broker's answer (or its absence) would say.
              callback(null, (...args: unknown[]) => {
                const done = args[args.length - 1] as (error: Error) => void;
                setTimeout(() => done(fault));
              });
            });
        }
      }
      class Listener {
        @KafkaListener({ topics: topic, groupId: uniqueName("g") })
        onRecord(_value: unknown, record: KafkaRecord): void {
          seen.push(record.offset);
          // Armed as the first record runs: its commit, or a heartbeat after it, fails.
          if (record.offset === 0n) Object.assign(faults, armed, { join: 1 });
        }
      }
      const log = new KeptLog();
      const faulty = { ...client, Consumer: FaultyConsumer } as typeof client;
      const listeners = kafkaListeners(
        [{ instance: new Listener() }],
        testHost(sender, log, { client: faulty }),
      );
      try {
        await listeners.start();
        await sendJson(sender, topic, [{ value: 0 }]);
        await until(() => seen.includes(0n) && faults.join === 0, "the client's rejoin, failed");
        await sendJson(sender, topic, [{ value: 1 }]);
        await until(
          () => seen.includes(1n),
          "the record sent after the failed rejoin",
          60_000,
          () => log.lines.join("\n"),
        );
        assert.ok(
          log.lines.some((line) => /joining again with a new consumer/.test(line)),
          log.lines.join("\n"),
        );
      } finally {
        await listeners.close(10_000);
        await sender.close();
      }
    });
  });
}
