// The instruments follow the meter provider registered now: none while it is the no-op one, made
// once per provider, and made again on another, the gauges then read on the new one only.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as api from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { KafkaGauges } from "../../src/kafka/kafka_gauges.ts";
import { KafkaInstruments } from "../../src/kafka/kafka_instruments.ts";
import { CollectingReader, restoreMeterProviderAfter } from "../metric_reader.ts";

restoreMeterProviderAfter();

const BACKLOG = "thaw.kafka.outbox.backlog";

// Registers a provider of its own, collected by the reader answered.
function registered(): CollectingReader {
  const reader = new CollectingReader();
  api.metrics.disable();
  api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  return reader;
}

describe("KafkaInstruments", () => {
  after(() => api.metrics.disable());

  it("makes none while the no-op provider is registered", () => {
    api.metrics.disable();
    const instruments = new KafkaInstruments(api, new KafkaGauges());
    assert.equal(instruments.current(), undefined);
  });

  it("makes them once per provider, and again on another, the gauges moving with them", async () => {
    const gauges = new KafkaGauges();
    let reads = 0;
    gauges.addBacklog(() => Promise.resolve(++reads), { "db.namespace": "main" }, 1000);
    const first = registered();
    const instruments = new KafkaInstruments(api, gauges);
    const made = instruments.current();
    assert.notEqual(made, undefined);
    assert.equal(instruments.current(), made);
    assert.deepEqual((await first.points(BACKLOG)).map((p) => p.value), [1]);

    const second = registered();
    const remade = instruments.current();
    assert.notEqual(remade, undefined);
    assert.notEqual(remade, made);
    assert.deepEqual((await second.points(BACKLOG)).map((p) => p.value), [2]);
    // The first provider's gauge is read no more: a collection of it reads no backlog.
    await first.points(BACKLOG);
    assert.equal(reads, 2);
  });
});
