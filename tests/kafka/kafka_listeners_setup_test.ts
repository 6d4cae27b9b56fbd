// kafka() with @KafkaListener beans, as an app runs them: the listeners consume once the app
// starts, what KafkaTemplate sent reaches them, a record that keeps failing goes to <topic>.DLT,
// and app.close() leaves the group after the record running finished.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bootstrap, Service } from "../../mod.ts";
import { kafka, KafkaListener, type KafkaRecord, KafkaTemplate } from "../../kafka.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "./broker.ts";
import { memoryLogger } from "../helpers.ts";

const topic = uniqueName("listeners-setup");

@Service()
class Payments {
  readonly seen: string[] = [];
  @KafkaListener({ topics: topic, groupId: `${topic}-group`, retry: { attempts: 2, delay: 10 } })
  take(value: { id: string }, record: KafkaRecord): void {
    if (value.id === "poison") throw new Error("cannot pay");
    this.seen.push(`${value.id}@${record.key}`);
  }
}

describe("kafka() with @KafkaListener", () => {
  it("consumes what the template sends once the app starts, and dead-letters a poison record", async () => {
    await createTopic(topic, 2);
    await createTopic(`${topic}.DLT`, 1);
    const app = await bootstrap({
      config: {
        kafka: {
          "bootstrap-servers": KAFKA_BOOTSTRAP,
          consumer: { "auto-offset-reset": "earliest" },
        },
      },
      components: [Payments],
      logger: memoryLogger(),
      kafka: kafka(),
    });
    try {
      app.start();
      const template = app.getBean(KafkaTemplate);
      await template.send(topic, { id: "a" }, { key: "k1" });
      await template.send(topic, { id: "poison" }, { key: "k2" });
      await template.send(topic, { id: "b" }, { key: "k1" });
      const [dead] = await readTopic(`${topic}.DLT`, 1);
      assert.equal(JSON.parse(dead.value ?? "").id, "poison");
      assert.equal(dead.headers.get("kafka_dlt-original-topic"), topic);
      assert.equal(dead.headers.get("kafka_dlt-exception-message"), "cannot pay");
      const payments = app.getBean(Payments);
      const deadline = Date.now() + 60_000;
      while (payments.seen.length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(payments.seen, ["a@k1", "b@k1"]);
    } finally {
      await app.close();
    }
  });

  it("refuses a listener without a group, naming it, before any consumer connects", async () => {
    @Service()
    class Lost {
      @KafkaListener({ topics: "t" })
      take(): void {}
    }
    await assert.rejects(
      bootstrap({
        config: { kafka: { "bootstrap-servers": KAFKA_BOOTSTRAP } },
        components: [Lost],
        kafka: kafka(),
      }),
      /Lost\.take: @KafkaListener names no groupId and kafka\.consumer\.group-id is not set/,
    );
  });
});
