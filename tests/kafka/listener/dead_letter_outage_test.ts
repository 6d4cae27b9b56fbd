// A listener gives a record up while its `.DLT` cannot be written (the producer's broker black-holed
// through a proxy): each try of the DLT is bounded by the producer's delivery timeout and said in
// the log; the record goes through its method again, as Spring's error handler does after its
// recoverer failed; the partition waits, and nothing is committed: a member that takes over starts
// at that record, and sends it to the DLT once the broker answers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { KafkaProducer } from "../../../src/kafka/kafka_producer.ts";
import { tcpProxy } from "../../sql/tcp_proxy.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "../broker.ts";
import { KeptLog, producerSender, sendJson, testHost, until } from "./listener_fixture.ts";

/** Keeps each line with the error logged with it. */
class ErrorLog extends KeptLog {
  readonly errors: { message: string; error: unknown }[] = [];
  override error = (message: string, error?: unknown): void => {
    this.lines.push(`error ${message}`);
    this.errors.push({ message, error });
  };
}

describe("@KafkaListener with its DLT out of reach", () => {
  it("says so, runs the record again, commits nothing, and dead-letters it once the DLT answers", async () => {
    const topic = uniqueName("listen-dlt-down");
    await createTopic(topic, 1);
    await createTopic(`${topic}.DLT`, 1);
    const sender = producerSender();
    const [host, port] = KAFKA_BOOTSTRAP.split(":");
    const proxy = await tcpProxy(host, Number(port));
    await proxy.up();
    // Black-holed before the first byte: the DLT's producer never learns the broker's address.
    proxy.hold();
    const deadLetters = new KafkaProducer(
      { clientId: "thaw-tests-dlt", bootstrapBrokers: [`127.0.0.1:${proxy.port}`] },
      -1,
      2,
      300,
    );
    const group = uniqueName("g");
    const calls: bigint[] = [];
    class Declined extends Error {
      override name = "Declined";
    }
    const makeListener = () =>
      class Orders {
        @KafkaListener({ topics: topic, groupId: group, retry: { attempts: 1 } })
        onOrder(_value: unknown, record: KafkaRecord): void {
          calls.push(record.offset);
          if (record.offset === 0n) throw new Declined("declined");
        }
      };
    const log = new ErrorLog();
    const first = kafkaListeners(
      [{ instance: new (makeListener())() }],
      testHost(deadLetters, log),
    );
    let second: ReturnType<typeof kafkaListeners> | undefined;
    try {
      await first.start();
      await sendJson(sender, topic, [{ value: 0, key: "poison" }, { value: 1, key: "next" }]);
      const dltFailed = () =>
        log.errors.filter((e) => e.message.includes(`to ${topic}.DLT failed`));
      await until(
        () => calls.filter((o) => o === 0n).length >= 2 && dltFailed().length >= 1,
        "the record run again after its DLT failed",
      );
      assert.deepEqual(new Set(calls), new Set([0n]), "the partition's next record waits");
      const [failure] = dltFailed();
      assert.match(
        failure.message,
        new RegExp(
          `Orders\\.onOrder: sending a record of ${topic} partition 0 offset 0 to ` +
            `${topic}\\.DLT failed; not committed, it goes through Orders\\.onOrder again`,
        ),
      );
      assert.match(
        String(failure.error),
        /TimeoutError.*300 ms \(kafka\.producer\.delivery-timeout\)/,
      );
      // Given up at close: not committed.
      await first.close(10_000);
      proxy.release();
      calls.length = 0;
      second = kafkaListeners([{ instance: new (makeListener())() }], testHost(deadLetters, log));
      await second.start();
      await until(
        () => calls.includes(1n),
        "the next record, once the poison one is a dead letter",
      );
      assert.equal(calls[0], 0n, "the member that took over started at the uncommitted record");
      const [dead] = await readTopic(`${topic}.DLT`, 1);
      assert.equal(dead.key, "poison");
      assert.equal(dead.headers.get("kafka_dlt-exception-fqcn"), "Declined");
    } finally {
      await first.close(10_000);
      await second?.close(10_000);
      await deadLetters.close();
      await sender.close();
      await proxy.down();
    }
  });
});
