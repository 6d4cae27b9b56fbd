// A broker of the three killed (SIGKILL) under a steady producer, acks all: every send the
// producer was told is acknowledged reaches the listener, which goes on through the loss.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { createTopic, uniqueName } from "../broker.ts";
import { KAFKA_CLUSTER, killBroker, restartBroker, wholeCluster } from "../three_brokers.ts";
import { KeptLog, producerSender, sendJson, testHost, until, within } from "./listener_fixture.ts";

const VICTIM = 9193;

describe("@KafkaListener on three brokers", () => {
  it("loses no acknowledged send when a broker is killed under a steady producer", async () => {
    const topic = uniqueName("listen-broker-loss");
    const log = new KeptLog();
    // Each step that waits on the cluster is bounded: a step that hangs fails the test, naming
    // itself and what the listener logged, instead of the whole run's time-out naming nothing.
    const step = <T>(what: string, ms: number, promise: Promise<T>): Promise<T> =>
      within(
        promise,
        ms,
        () => `${what}; the listener logged:\n${log.lines.slice(-20).join("\n")}`,
      );
    await step("making the cluster whole", 360_000, wholeCluster());
    await step("creating the topic", 120_000, createTopic(topic, 3, KAFKA_CLUSTER));
    // The bare producer can hang for good on a send in flight when its broker dies: a send with
    // no answer for this long is counted unacknowledged and the producer replaced.
    const STUCK_MS = 15_000;
    let sender = producerSender(KAFKA_CLUSTER);
    const replaced: { close(): Promise<void> }[] = [];
    const received = new Set<number>();
    class Sink {
      @KafkaListener({ topics: topic, groupId: uniqueName("g") })
      onRecord(value: number, _record: KafkaRecord): void {
        received.add(value);
      }
    }
    const listeners = kafkaListeners(
      [{ instance: new Sink() }],
      testHost(sender, log, {}, KAFKA_CLUSTER),
    );
    const acknowledged: number[] = [];
    let failed = 0;
    let stuck = 0;
    let stop = false;
    let killed = false;
    let failedRestart: Error | undefined;
    // One send at a time, each awaited: a failed one is not acknowledged and is sent again.
    const producing = (async () => {
      for (let n = 0; !stop;) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const current = sender;
        try {
          await Promise.race([
            sendJson(current, topic, [{ value: n, key: `k${n % 7}` }]),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error("stuck")), STUCK_MS);
            }),
          ]);
          acknowledged.push(n);
          n += 1;
        } catch (error) {
          failed += 1;
          if ((error as Error).message === "stuck") {
            stuck += 1;
            replaced.push(current);
            sender = producerSender(KAFKA_CLUSTER);
          } else {
            // A producer that refuses at once, asked again at once, would starve every timer.
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        } finally {
          clearTimeout(timer);
        }
      }
    })();
    try {
      await step("the listener's join", 120_000, listeners.start());
      await until(() => acknowledged.length >= 50, "sends before the kill");
      await step("killing a broker", 60_000, killBroker(VICTIM));
      killed = true;
      const atKill = acknowledged.length;
      await until(() => acknowledged.length >= atKill + 150, "sends after the kill", 180_000);
      stop = true;
      await producing;
      await until(
        () => acknowledged.every((n) => received.has(n)),
        "every acknowledged send received",
        180_000,
      ).catch(() => {});
      const lost = acknowledged.filter((n) => !received.has(n));
      console.log(`${acknowledged.length} acknowledged, ${failed} failed (${stuck} hung)`);
      assert.equal(
        lost.length,
        0,
        `${lost.length} of ${acknowledged.length} acknowledged sends never received ` +
          `(${failed} sends failed and were sent again, ${stuck} of them hung): ` +
          lost.slice(0, 5).join(", "),
      );
    } finally {
      stop = true;
      // The broker first: whatever below waits on it, the next test finds the cluster whole. A
      // restart that fails still lets the clients close, and fails the test after them.
      const restarted = killed
        ? restartBroker(VICTIM).then(() => undefined, (error: Error) => error)
        : undefined;
      await producing;
      await listeners.close(10_000);
      // A producer with a send hung closes once its broker is back, if ever: not awaited past a
      // bound.
      await Promise.race([
        Promise.all([sender, ...replaced].map((r) => r.close().catch(() => {}))),
        new Promise((resolve) => setTimeout(resolve, STUCK_MS).unref?.()),
      ]);
      failedRestart = await restarted;
      if (failedRestart !== undefined) {
        console.error("restarting the broker failed:", failedRestart);
      }
    }
    if (failedRestart !== undefined) throw failedRestart;
  });
});
