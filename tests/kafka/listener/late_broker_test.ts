// A broker out of reach when the listeners start (the app came up first, the network blinked):
// the members keep trying to join, saying so in the log, and consume once the broker answers. A
// close while they try ends them, without waiting out its bound.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { tcpProxy } from "../../sql/tcp_proxy.ts";
import { createTopic, KAFKA_BOOTSTRAP, uniqueName } from "../broker.ts";
import { KeptLog, producerSender, sendJson, testHost, until } from "./listener_fixture.ts";

const TRYING_AGAIN = /joining group "[^"]+" failed; trying again/;

describe("@KafkaListener with the broker out of reach at start", () => {
  it("keeps trying to join, and consumes once the broker answers", async () => {
    const [host, port] = KAFKA_BOOTSTRAP.split(":");
    // Down: its port refuses, as a broker not started yet does.
    const proxy = await tcpProxy(host, Number(port));
    const sender = producerSender();
    const topic = uniqueName("listen-late-broker");
    await createTopic(topic, 2);
    const received: number[] = [];
    class Late {
      @KafkaListener({ topics: topic, groupId: uniqueName("g"), concurrency: 2 })
      onRecord(value: number): void {
        received.push(value);
      }
    }
    const log = new KeptLog();
    const listeners = kafkaListeners(
      [{ instance: new Late() }],
      testHost(sender, log, {}, [`127.0.0.1:${proxy.port}`]),
    );
    let gaveUp: unknown;
    try {
      const started = listeners.start();
      started.catch((error: unknown) => gaveUp = error);
      await until(() => {
        if (gaveUp !== undefined) throw new Error(`the start gave up: ${gaveUp}`);
        return log.lines.filter((line) => TRYING_AGAIN.test(line)).length >= 2;
      }, "each member said its first join failed");
      await proxy.up();
      let joined = false;
      started.then(() => joined = true, () => {});
      await until(() => joined, "the members joined once the broker answered");
      await sendJson(sender, topic, [0, 1, 2, 3].map((n) => ({ value: n, key: `k${n}` })));
      await until(() => received.length >= 4, "the records reached the listener");
      assert.deepEqual(received.toSorted(), [0, 1, 2, 3]);
    } finally {
      assert.deepEqual(await listeners.close(5000), { abandoned: 0 });
      await proxy.down();
      await sender.close();
    }
  });

  it("ends its tries when closed", async () => {
    const [host, port] = KAFKA_BOOTSTRAP.split(":");
    const proxy = await tcpProxy(host, Number(port));
    const sender = producerSender();
    class Never {
      @KafkaListener({ topics: uniqueName("listen-never"), groupId: uniqueName("g") })
      onRecord(_value: unknown): void {}
    }
    const log = new KeptLog();
    const listeners = kafkaListeners(
      [{ instance: new Never() }],
      testHost(sender, log, {}, [`127.0.0.1:${proxy.port}`]),
    );
    try {
      const started = listeners.start();
      await until(() => log.lines.some((line) => TRYING_AGAIN.test(line)), "a join failed");
      // The close's bound is far off: it ends with the tries, not by waiting it out; and the start
      // ends with it, joined or not. Past 60 s it waited: a give-up, not a deadline to beat.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        Promise.all([listeners.close(600_000), started]).then(([closed]) => closed),
        new Promise((resolve) => timer = setTimeout(() => resolve("still trying"), 60_000)),
      ]).finally(() => clearTimeout(timer));
      assert.deepEqual(ended, { abandoned: 0 });
    } finally {
      await proxy.down();
      await sender.close();
    }
  });
});
