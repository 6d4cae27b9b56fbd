// bootstrap({ kafka: kafka() }) against the real broker: `KafkaTemplate` as a bean sending what
// the broker then holds byte for byte (key, JSON value, headers, partition, offset), a batch's
// offsets, a partition the topic lacks, a broker that is gone (the send rejects, bounded), the
// `kafka` health component, and the `kafka.*` keys refused or masked as every Thaw key is.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import { actuator } from "../../actuator.ts";
import { type Application, bootstrap, ConfigError } from "../../mod.ts";
import { kafka, KafkaTemplate } from "../../kafka.ts";
import { KafkaProducer } from "../../src/kafka/kafka_producer.ts";
import { topicSize } from "./outbox/outbox_support.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "./broker.ts";

const text = (s: string) => new TextEncoder().encode(s);

async function app(config: Record<string, unknown> = {}): Promise<Application> {
  return await bootstrap({
    config: { kafka: { "bootstrap-servers": KAFKA_BOOTSTRAP, ...config } },
    kafka: kafka(),
  });
}

describe("KafkaTemplate against the broker", () => {
  let application: Application;
  let template: KafkaTemplate;
  before(async () => {
    application = await app();
    template = application.getBean(KafkaTemplate);
  });
  after(() => application.close());

  it("sends a JSON value with its key and headers, and answers where it went", async () => {
    const topic = uniqueName("template");
    await createTopic(topic, 3);
    const result = await template.send(topic, { id: 7, name: "Ada" }, {
      key: "customer-4",
      headers: [["trace", "a"], ["trace", "b"], ["bytes", new Uint8Array([0, 255, 10])]],
    });
    assert.equal(result.outboxed, false);
    const [record] = await readTopic(topic, 1);
    assert.ok(!result.outboxed);
    assert.equal(record.partition, result.partition);
    assert.equal(record.offset, result.offset);
    assert.equal(record.key, "customer-4");
    assert.deepEqual(JSON.parse(record.value ?? ""), { id: 7, name: "Ada" });
    // Read back as a map: the last of a repeated name; the raw bytes of the binary one.
    assert.equal(record.headers.get("trace"), "b");
    assert.equal(record.headers.get("bytes"), "\u0000\ufffd\n");
  });

  it("puts a key's records on the partition Java's partitioner gives it, in order", async () => {
    // What Java's client computes (Utils.toPositive(Utils.murmur2(key)) % partitions), worked
    // out with kafka-clients 4.1.1 itself: a Spring service and this app agree on each key.
    const java: Record<string, [number, number]> = {
      "same": [1, 0],
      "customer-4": [1, 5],
      "a": [0, 5],
      "b": [0, 6],
      "c": [2, 0],
      "\u00fc-key": [1, 3],
      "order-1000": [2, 6],
    };
    for (const [index, partitions] of [[0, 4], [1, 7]] as const) {
      const topic = uniqueName("template-key");
      await createTopic(topic, partitions);
      for (const [key, expected] of Object.entries(java)) {
        for (let i = 0; i < 2; i++) {
          const result = await template.send(topic, i, { key });
          assert.equal(
            !result.outboxed && result.partition,
            expected[index],
            `${key} of ${partitions}`,
          );
        }
      }
      const records = await readTopic(topic, 2 * Object.keys(java).length);
      for (const key of Object.keys(java)) {
        assert.deepEqual(records.filter((r) => r.key === key).map((r) => r.value), ["0", "1"]);
      }
    }
  });

  it("writes to the partition asked for, and refuses one the topic lacks", async () => {
    const topic = uniqueName("template-partition");
    await createTopic(topic, 2);
    const result = await template.send(topic, "x", { partition: 1 });
    assert.equal(!result.outboxed && result.partition, 1);
    await assert.rejects(template.send(topic, "x", { partition: 2 }), {
      name: "RangeError",
      message: `send("${topic}"): partition 2 does not exist; the topic has 2 partitions`,
    });
  });

  it("sends null as a tombstone: a record with no value", async () => {
    const topic = uniqueName("template-tombstone");
    await createTopic(topic);
    await template.send(topic, null, { key: "gone" });
    const [record] = await readTopic(topic, 1);
    assert.equal(record.key, "gone");
    assert.equal(record.value, undefined);
  });
});

// One record sent to topic "t" through a producer on `broker` alone that retries twice (three
// attempts in a round) until its delivery timeout of 1.5 s, closed once the send settles.
async function sendOnce(broker: string): Promise<void> {
  const producer = new KafkaProducer(
    { clientId: "thaw-tests", bootstrapBrokers: [broker] },
    -1,
    2,
    1_500,
  );
  try {
    await producer.send([{
      topic: "t",
      key: undefined,
      value: text("x"),
      headers: [],
      partition: undefined,
    }]);
  } finally {
    await producer.close();
  }
}

describe("KafkaProducer", () => {
  it("sends once with acks 1 and 0, a record alone or a batch; acks 0 knows no offset", async () => {
    const topic = uniqueName("producer-acks");
    await createTopic(topic, 1);
    const record = (value: string) => ({
      topic,
      key: undefined,
      value: text(value),
      headers: [],
      partition: undefined,
    });
    for (const acks of [1, 0] as const) {
      const producer = new KafkaProducer(
        { clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] },
        acks,
        2,
      );
      try {
        const [one] = await producer.send([record(`a${acks}`)]);
        const batch = await producer.send([record(`b${acks}`), record(`c${acks}`)]);
        if (acks === 1) {
          assert.ok(one.offset >= 0n);
          assert.deepEqual(batch.map((r) => r.offset), [one.offset + 1n, one.offset + 2n]);
        } else {
          assert.deepEqual([one, ...batch].map((r) => r.offset), [-1n, -1n, -1n]);
        }
      } finally {
        await producer.close();
      }
    }
    const read = await readTopic(topic, 6);
    assert.deepEqual(read.map((r) => r.value), ["a1", "b1", "c1", "a0", "b0", "c0"]);
    assert.equal(await topicSize(topic, 1), 6, "each written once");
  });

  it("answers each record of a batch with its own partition and offset", async () => {
    const topic = uniqueName("producer-batch");
    await createTopic(topic, 3);
    const producer = new KafkaProducer(
      { clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] },
      -1,
      10,
    );
    try {
      const records = ["a", "b", "c", "a", "b", "c", "a"].map((key, i) => ({
        topic,
        key: text(key),
        value: text(String(i)),
        headers: [],
        partition: undefined,
      }));
      const placed = await producer.send(records);
      const read = await readTopic(topic, records.length);
      for (const [i, where] of placed.entries()) {
        const found = read.find((r) =>
          r.partition === where.partition && r.offset === where.offset
        );
        assert.equal(found?.value, String(i), `record ${i} at ${where.partition}/${where.offset}`);
      }
    } finally {
      await producer.close();
    }
  });

  it("rejects a send to a broker that is gone at its bound, the client's failure its cause", async () => {
    await assert.rejects(sendOnce("127.0.0.1:1"), (error: Error) => {
      assert.equal(error.name, "TimeoutError");
      assert.match(error.message, /send\("t"\): no acknowledgement within 1500 ms/);
      assert.match(String((error.cause as Error)?.message), /failed 3 times/);
      return true;
    });
  });

  it("rejects a send to a host that never answers, rather than waiting for ever", async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    try {
      await assert.rejects(sendOnce(`127.0.0.1:${port}`));
    } finally {
      silent.close();
    }
  });
});

describe("the kafka health component", () => {
  const healthOf = async (config: Record<string, unknown>) => {
    const application = await bootstrap({
      config: {
        kafka: config,
        management: { endpoint: { health: { "show-details": "always" } } },
      },
      kafka: kafka(),
      actuator: actuator(),
    });
    try {
      const response = await application.fetch(new Request("http://x/actuator/health"));
      return { status: response.status, body: await response.json() };
    } finally {
      await application.close();
    }
  };

  it("is UP with the cluster's id and brokers while a broker answers", async () => {
    const { status, body } = await healthOf({ "bootstrap-servers": KAFKA_BOOTSTRAP });
    assert.equal(status, 200);
    assert.equal(body.components.kafka.status, "UP");
    assert.equal(body.components.kafka.details.brokers, 1);
    assert.equal(typeof body.components.kafka.details.clusterId, "string");
  });

  it("is DOWN when no broker answers", async () => {
    const { status, body } = await healthOf({
      "bootstrap-servers": "127.0.0.1:1",
      producer: { retries: 2 },
    });
    assert.equal(status, 503);
    assert.equal(body.components.kafka.status, "DOWN");
  });

  it("names the brokers and what failed when none answers, within the health timeout", async () => {
    // With the default retries the client tries for longer than the health check may take: the
    // component says why itself, not the health check's bound.
    const { status, body } = await healthOf({ "bootstrap-servers": "127.0.0.1:1" });
    assert.equal(status, 503);
    const { error } = body.components.kafka.details;
    assert.match(error, /no broker answered within \d+ ms/);
    assert.match(error, /127\.0\.0\.1:1/);
    assert.match(error, /connecting to 127\.0\.0\.1:1 failed/);
    assert.doesNotMatch(error, /check\(\) did not answer/);
  });
});

describe("the kafka.* keys", () => {
  it("refuses a broker that is not host:port, and SASL without its password", async () => {
    await assert.rejects(app({ "bootstrap-servers": "http://broker:9092" }), {
      message: /kafka\.bootstrap-servers: "http:\/\/broker:9092" is not host:port/,
    });
    await assert.rejects(
      app({ security: { protocol: "SASL_SSL" }, sasl: { mechanism: "PLAIN", username: "u" } }),
      { message: /SASL_SSL needs kafka\.sasl\.password/ },
    );
    await assert.rejects(app({ producer: { acks: 2 } }), {
      message: /kafka\.producer\.acks must be all, -1, 0 or 1, got 2/,
    });
  });

  it("never shows the SASL password in an error", async () => {
    const error = await app({
      security: { protocol: "SASL_PLAINTEXT" },
      sasl: { mechanism: "PLAIN", username: "u", password: "hunter2-secret" },
      listener: { concurrency: "hunter2-secret" },
    }).then(() => undefined, (e: Error) => e);
    assert.ok(error instanceof ConfigError);
    assert.doesNotMatch(error.message, /hunter2/);
  });
});
