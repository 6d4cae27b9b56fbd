// @KafkaListener's options, checked when the class is defined, and the retry's waits.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  KafkaListener,
  listenerMark,
  RETRY_DEFAULTS,
} from "../../../src/kafka/listener/kafka_listener.ts";
import { Backoff } from "../../../src/runtime/backoff.ts";

describe("@KafkaListener options", () => {
  it("fills the retry's defaults and reads durations as text", () => {
    assert.deepEqual(listenerMark({ topics: "a" }, "@KafkaListener").retry, RETRY_DEFAULTS);
    const mark = listenerMark(
      { topics: ["a", "b"], retry: { attempts: 5, delay: "200ms", maxDelay: "2s" }, batch: true },
      "@KafkaListener",
    );
    assert.deepEqual(mark.topics, ["a", "b"]);
    assert.deepEqual(mark.retry, {
      attempts: 5,
      backoff: new Backoff({ delay: 200, multiplier: 2, maxDelay: 2000 }),
      includes: [],
      excludes: [],
    });
    assert.equal(mark.batch, true);
  });

  it("refuses what it cannot run, naming the option", () => {
    const refusals: [unknown, RegExp][] = [
      [{ topics: [] }, /topics names no topic/],
      [{ topics: "a b" }, /"a b" is not a Kafka topic name/],
      [{ topics: "a", groupId: "" }, /groupId is a non-empty text/],
      [{ topics: "a", concurrency: 0 }, /concurrency is a whole number of consumers, 1 or more/],
      [{ topics: "a", schema: {} }, /schema is a Standard Schema/],
      [{ topics: "a", retry: { attempts: 0 } }, /attempts counts deliveries/],
      [
        { topics: "a", retry: { delay: "soon" } },
        /retry: delay: give milliseconds \(250\) or a duration \("250ms", "5s", "10m", "1h"\)/,
      ],
      [{ topics: "a", retry: { includes: Error } }, /retry: includes is a list of error classes/],
      [{ topics: "a", retry: { delay: 500, maxDelay: 100 } }, /maxDelay \(100 ms\) is under delay/],
      [{ topics: "a", retry: { tries: 2 } }, /unknown option "tries"/],
      [{ topics: "a", topic: "b" }, /unknown option "topic"/],
    ];
    for (const [options, message] of refusals) {
      assert.throws(
        () => KafkaListener(options as Parameters<typeof KafkaListener>[0]),
        message,
      );
    }
  });

  it("takes public instance methods only", () => {
    assert.throws(
      () => {
        class Bad {
          @KafkaListener({ topics: "a", groupId: "g" })
          static onRecord(): void {}
        }
        return Bad;
      },
      /@KafkaListener on onRecord: it takes records on public instance methods only/,
    );
  });
});
