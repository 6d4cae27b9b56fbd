// The `kafka.*` keys read into the client's options: brokers as host:port (a property test of
// which texts pass), SASL and TLS only with what they need, acks as the protocol counts it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { KafkaSettings } from "../../src/kafka/kafka_settings.ts";
import { propertyOptions } from "../property.ts";

const settingsOf = (kafka: Record<string, unknown>) =>
  new KafkaSettings(readSettings(resolveConfig({ kafka }, () => undefined)));

describe("KafkaSettings", () => {
  it("reads the defaults Spring Boot and the Java client have", () => {
    const settings = settingsOf({});
    assert.deepEqual(settings.client, { clientId: "thaw", bootstrapBrokers: ["localhost:9092"] });
    assert.equal(settings.acks, -1);
    assert.equal(settings.autoOffsetReset, "latest");
    assert.equal(settings.concurrency, 1);
    assert.equal(settings.deliveryTimeoutMs, 120_000);
    assert.deepEqual(settings.secrets, []);
  });

  it("reads kafka.producer.delivery-timeout as a duration, and refuses what cannot be one", () => {
    assert.equal(settingsOf({ producer: { "delivery-timeout": "30s" } }).deliveryTimeoutMs, 30_000);
    assert.equal(settingsOf({ producer: { "delivery-timeout": 500 } }).deliveryTimeoutMs, 500);
    for (const value of [0, "soon", -1]) {
      assert.throws(() => settingsOf({ producer: { "delivery-timeout": value } }), {
        message:
          /kafka\.producer\.delivery-timeout: give milliseconds \(250\) or a duration .*, above 0/,
      }, String(value));
    }
  });

  it("takes host:port brokers as a list or a comma text, and refuses anything else", () => {
    const host = fc.oneof(
      fc.domain(),
      fc.ipV4(),
      fc.ipV6().map((ip) => `[${ip}]`),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(host, fc.integer({ min: 0, max: 65535 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (pairs) => {
          const servers = pairs.map(([h, p]) => `${h}:${p}`);
          assert.deepEqual(
            settingsOf({ "bootstrap-servers": servers }).client.bootstrapBrokers,
            servers,
          );
          assert.deepEqual(
            settingsOf({ "bootstrap-servers": servers.join(" , ") }).client.bootstrapBrokers,
            servers,
          );
        },
      ),
      propertyOptions(),
    );
    for (
      const bad of ["broker", "broker:", "broker:99999", "http://b:1", "a b:1", "user@b:1", ":9092"]
    ) {
      assert.throws(() => settingsOf({ "bootstrap-servers": bad }), {
        message: new RegExp(`is not host:port`),
      }, bad);
    }
  });

  it("reads acks as all, -1, 0 or 1, text or number", () => {
    for (
      const [given, acks] of [["all", -1], [-1, -1], ["-1", -1], [0, 0], ["1", 1], [1, 1]] as const
    ) {
      assert.equal(settingsOf({ producer: { acks: given } }).acks, acks);
    }
    assert.throws(() => settingsOf({ producer: { acks: "leader" } }), { message: /got "leader"/ });
  });

  it("secures the connection as kafka.security.protocol says", () => {
    const sasl = settingsOf({
      security: { protocol: "SASL_SSL" },
      sasl: { mechanism: "SCRAM-SHA-512", username: "u", password: "p4ss" },
      ssl: { "trust-store-certificates": "-----BEGIN CERTIFICATE-----" },
    });
    assert.deepEqual(sasl.client.sasl, {
      mechanism: "SCRAM-SHA-512",
      username: "u",
      password: "p4ss",
    });
    assert.deepEqual(sasl.client.tls, { ca: "-----BEGIN CERTIFICATE-----" });
    assert.deepEqual(sasl.secrets, ["p4ss"]);
    assert.equal(
      settingsOf({
        security: { protocol: "SASL_PLAINTEXT" },
        sasl: { mechanism: "PLAIN", username: "u", password: "p" },
      }).client.tls,
      undefined,
    );
    assert.throws(() => settingsOf({ sasl: { mechanism: "PLAIN" } }), {
      message:
        /SASL is used only when kafka\.security\.protocol is SASL_PLAINTEXT or SASL_SSL \(it is PLAINTEXT\)/,
    });
    assert.throws(
      () => settingsOf({ security: { protocol: "SSL" }, ssl: { "key-store-key": "k" } }),
      {
        message: /a client certificate needs both/,
      },
    );
  });

  it("reads the outbox's keys, durations as durations, and refuses what cannot be one", () => {
    assert.deepEqual(settingsOf({}).outbox, {
      table: "thaw_outbox",
      batchSize: 100,
      pollIntervalMs: 1_000,
      leaseMs: 30_000,
      sendTimeoutMs: 10_000,
      retentionMs: 3_600_000,
    });
    assert.equal(settingsOf({ outbox: { enabled: false } }).outbox, undefined);
    const read = settingsOf({
      outbox: {
        table: "orders_outbox",
        "poll-interval": "250ms",
        lease: "PT1M",
        "send-timeout": 2000,
        retention: 0,
        "batch-size": "7",
      },
    }).outbox;
    assert.deepEqual(read, {
      table: "orders_outbox",
      batchSize: 7,
      pollIntervalMs: 250,
      leaseMs: 60_000,
      sendTimeoutMs: 2_000,
      retentionMs: 0,
    });
    for (const [key, value] of [["lease", 0], ["poll-interval", "soon"], ["send-timeout", -1]]) {
      assert.throws(() => settingsOf({ outbox: { [key]: value } }), {
        message: new RegExp(`kafka\\.outbox\\.${key}: give milliseconds \\(250\\) .*, above 0`),
      }, `${key}: ${value}`);
    }
    assert.throws(() => settingsOf({ outbox: { retention: "a while" } }), {
      message: /kafka\.outbox\.retention: give milliseconds \(250\) or a duration \("250ms"/,
    });
    for (const table of ["orders-outbox", "1outbox", "a".repeat(59), "x;DROP TABLE y", "é"]) {
      assert.throws(() => settingsOf({ outbox: { table } }), {
        message: /kafka\.outbox\.table: give a table name of letters, digits and _/,
      }, table);
    }
  });
});
