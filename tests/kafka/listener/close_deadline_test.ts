// `Listeners.close(timeoutMs)` is the app's `server.shutdown-timeout`: it keeps it whatever the
// broker does. Here the broker is black-holed through a proxy (connections open, nothing answers)
// while the members join, and the close must still end, and let the process end, near its bound.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { tcpProxy } from "../../sql/tcp_proxy.ts";
import { KAFKA_BOOTSTRAP, uniqueName } from "../broker.ts";
import { KeptLog, producerSender, testHost } from "./listener_fixture.ts";

/** `promise`'s outcome, or "still waiting" once `ms` passed: a give-up, not a deadline to beat. */
function settled(promise: Promise<unknown>, ms: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.then(() => "settled", () => "settled"),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve("still waiting"), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

describe("Listeners.close with the broker not answering", () => {
  it("ends by its timeout while a join is under way", async () => {
    const [host, port] = KAFKA_BOOTSTRAP.split(":");
    const proxy = await tcpProxy(host, Number(port));
    await proxy.up();
    proxy.hold();
    const sender = producerSender();
    const topic = uniqueName("listen-close-held");
    class Held {
      @KafkaListener({ topics: topic, groupId: uniqueName("g"), concurrency: 2 })
      onRecord(_value: unknown): void {}
    }
    const log = new KeptLog();
    const listeners = kafkaListeners(
      [{ instance: new Held() }],
      testHost(sender, log, {}, [`127.0.0.1:${proxy.port}`]),
    );
    try {
      const started = listeners.start();
      started.catch(() => {});
      // The members' connections reached the proxy, which holds them: the joins are under way.
      while (proxy.carried() < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      const closing = listeners.close(500);
      // The timeout and the grace of the commit, the leave and the cut are about 16 s at most; a
      // close that waits on the broker never settles. Far past both: a give-up, not a deadline.
      assert.equal(await settled(closing, 60_000), "settled", "the close waited on the broker");
      assert.deepEqual(await closing, { abandoned: 0 });
    } finally {
      await proxy.down();
      await sender.close();
    }
  });
});
