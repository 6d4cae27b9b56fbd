// kafka() against a broker that asks who is calling (the test broker's secured listeners): the
// template sends and a @KafkaListener consumes over SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
// over TLS with a client certificate, and over SASL on TLS. A refused password and a broker
// certificate the client does not trust each fail the send saying so, the listener says so as it
// keeps trying, and the password shows nowhere.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, it } from "node:test";
import { bootstrap, Service } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { kafka, KafkaListener, KafkaTemplate } from "../../kafka.ts";
import { KafkaProducer } from "../../src/kafka/kafka_producer.ts";
import { memoryLogger } from "../helpers.ts";
import { tempDir } from "../temp_dir.ts";
import { fencedBlocks } from "../examples/doc_blocks.ts";
import { createTopic, KAFKA_SECURED, readTopic, tlsFile, uniqueName } from "./broker.ts";
import { until } from "./listener/listener_fixture.ts";

const USER = { username: "thaw", password: "thaw-secret" };

const scram512OverTls = () => ({
  "bootstrap-servers": KAFKA_SECURED.saslSsl,
  security: { protocol: "SASL_SSL" },
  sasl: { mechanism: "SCRAM-SHA-512", ...USER },
  ssl: { "trust-store-certificates": tlsFile("ca.pem") },
});

const accepted: readonly { name: string; config: () => Record<string, unknown> }[] = [
  ...(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] as const).map((mechanism) => ({
    name: `SASL ${mechanism}`,
    config: () => ({
      "bootstrap-servers": KAFKA_SECURED.saslPlaintext,
      security: { protocol: "SASL_PLAINTEXT" },
      sasl: { mechanism, ...USER },
    }),
  })),
  {
    name: "TLS with a client certificate",
    config: () => ({
      "bootstrap-servers": KAFKA_SECURED.ssl,
      security: { protocol: "SSL" },
      ssl: {
        "trust-store-certificates": tlsFile("ca.pem"),
        "key-store-certificate-chain": tlsFile("client.pem"),
        "key-store-key": tlsFile("client.key"),
      },
    }),
  },
  { name: "SCRAM-SHA-512 over TLS", config: scram512OverTls },
];

// An app whose listener keeps the values of `topic`, on the brokers `config` names.
async function listening(topic: string, config: Record<string, unknown>) {
  const seen: unknown[] = [];
  @Service()
  class Sink {
    @KafkaListener({ topics: topic, groupId: uniqueName("secured-group") })
    take(value: unknown): void {
      seen.push(value);
    }
  }
  const logger = memoryLogger();
  const app = await bootstrap({
    config: { kafka: { ...config, consumer: { "auto-offset-reset": "earliest" } } },
    components: [Sink],
    logger,
    kafka: kafka(),
  });
  app.start();
  return { app, seen, logger };
}

// The error a send to `topic` rejects with, from an app on `config` whose producer tries three
// times; a send that goes through fails the test.
async function refusedSend(
  topic: string,
  config: Record<string, unknown>,
  producer: Record<string, unknown> = {},
): Promise<Error> {
  const app = await bootstrap({
    config: { kafka: { ...config, producer: { retries: 2, ...producer } } },
    kafka: kafka(),
  });
  try {
    return await app.getBean(KafkaTemplate).send(topic, 1).then(
      () => assert.fail(`the send to ${topic} went through`),
      (error: unknown) => error as Error,
    );
  } finally {
    await app.close();
  }
}

describe("kafka() on a secured broker", () => {
  for (const { name, config } of accepted) {
    it(`sends and consumes over ${name}`, async () => {
      const topic = uniqueName("secured");
      await createTopic(topic);
      const { app, seen } = await listening(topic, config());
      try {
        const sent = await app.getBean(KafkaTemplate).send(topic, { over: name }, { key: "k" });
        const [record] = await readTopic(topic, 1);
        assert.equal(!sent.outboxed && sent.offset, record.offset);
        await until(() => seen.length > 0, `the listener's record over ${name}`);
        assert.deepEqual(seen, [{ over: name }]);
      } finally {
        await app.close();
      }
    });
  }

  it("sends with the configuration the docs show, given this broker, user and CA", async () => {
    const [block] = fencedBlocks("docs/kafka.md", "yaml").filter((b) => b.includes("SASL_SSL"));
    const ca = tlsFile("ca.pem").trim().split("\n").map((line) => `      ${line}`).join("\n");
    const yaml = block.replace("kafka-1.internal:9093", KAFKA_SECURED.saslSsl)
      .replace("username: billing", "username: thaw")
      .replace(/ {6}-----BEGIN CERTIFICATE-----\n {6}\.\.\.\n {6}-----END CERTIFICATE-----/, ca);
    for (const put of [KAFKA_SECURED.saslSsl, "username: thaw", ca]) {
      assert.ok(yaml.includes(put), `the docs' block changed: ${put.slice(0, 30)} not put in`);
    }
    await using dir = await tempDir("thaw-kafka-docs-");
    await writeFile(join(dir.path, "application.yml"), yaml);
    const config = await loadConfig(join(dir.path, "application.yml"), {
      env: { KAFKA_PASSWORD: USER.password },
    });
    const topic = uniqueName("secured-docs");
    await createTopic(topic);
    const app = await bootstrap({ config, kafka: kafka() });
    try {
      await app.getBean(KafkaTemplate).send(topic, "from the docs");
      const [record] = await readTopic(topic, 1);
      assert.equal(record.value, '"from the docs"');
    } finally {
      await app.close();
    }
  });

  it("fails a send on a refused password, saying so, and the listener says so as it tries", async () => {
    const wrong = "not-the-secret-\u0001-9e3b";
    const topic = uniqueName("secured-refused");
    await createTopic(topic);
    const { app, logger } = await listening(topic, {
      "bootstrap-servers": KAFKA_SECURED.saslPlaintext,
      security: { protocol: "SASL_PLAINTEXT" },
      // PLAIN: the one mechanism that sends the password itself.
      sasl: { mechanism: "PLAIN", username: "thaw", password: wrong },
      producer: { retries: 2 },
    });
    try {
      const refused = await app.getBean(KafkaTemplate).send(topic, 1).then(
        () => assert.fail("the send went through with a wrong password"),
        (error: unknown) => error,
      );
      assert.equal(
        (refused as Error).message,
        `send(${JSON.stringify(topic)}): the broker refused the SASL credentials of "thaw" ` +
          "(PLAIN); see kafka.sasl.username and kafka.sasl.password",
      );
      assert.ok(!inspect(refused, { depth: Infinity }).includes(wrong), "the password shows");
      const said = /failed \(the broker refused the SASL credentials of "thaw" \(PLAIN\)/;
      await until(
        () => logger.lines.some(([line]) => said.test(String(line))),
        "the listener's line",
      );
      assert.ok(!inspect(logger.lines, { depth: Infinity }).includes(wrong), "the password shows");
    } finally {
      await app.close();
    }
    // The health check's round trip says it too.
    const producer = new KafkaProducer(
      {
        clientId: "thaw-tests",
        bootstrapBrokers: [KAFKA_SECURED.saslPlaintext],
        sasl: { mechanism: "SCRAM-SHA-256", username: "thaw", password: wrong },
      },
      -1,
      2,
    );
    try {
      await assert.rejects(producer.cluster(5_000), {
        message: 'the broker refused the SASL credentials of "thaw" (SCRAM-SHA-256); see ' +
          "kafka.sasl.username and kafka.sasl.password",
      });
    } finally {
      await producer.close();
    }
  });

  it("fails a send with a mechanism the listener does not take, naming the mechanism", async () => {
    const refused = await refusedSend("secured-mechanism", {
      ...scram512OverTls(),
      sasl: { mechanism: "PLAIN", ...USER },
    });
    assert.equal(
      refused.message,
      'send("secured-mechanism"): the broker does not take the SASL mechanism PLAIN on this ' +
        "listener; see kafka.sasl.mechanism and kafka.security.protocol",
    );
  });

  it("fails a send to a broker whose certificate it does not trust, saying so", async () => {
    const refused = await refusedSend("secured-untrusted", {
      ...scram512OverTls(),
      ssl: { "trust-store-certificates": tlsFile("other-ca.pem") },
    });
    assert.equal(
      refused.message,
      'send("secured-untrusted"): the broker\'s TLS certificate is not trusted ' +
        "(UNABLE_TO_VERIFY_LEAF_SIGNATURE); kafka.ssl.trust-store-certificates holds the " +
        "certificates it is checked against",
    );
  });

  it("fails a send where the broker asks for a client certificate and none is given", async () => {
    // The broker ends the connection without a word the client reports: the send is tried until
    // its bound, and fails with the client's error as the cause.
    const refused = await refusedSend("secured-no-certificate", {
      "bootstrap-servers": KAFKA_SECURED.ssl,
      security: { protocol: "SSL" },
      ssl: { "trust-store-certificates": tlsFile("ca.pem") },
    }, { "delivery-timeout": "3s" });
    assert.equal(refused.name, "TimeoutError");
    assert.ok(refused.cause instanceof Error, "the client's failure is the cause");
  });
});
