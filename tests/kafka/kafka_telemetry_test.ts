// The Kafka client through OpenTelemetry's real SDK, against the real broker: a PRODUCER span per
// send whose context rides in the record's `traceparent`, the CONSUMER span of that record its
// child, the messaging counters and the processing histogram with `error.type` on failure, the
// consumer lag of a group by partition read through the Admin, and the outbox's backlog.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { type Histogram, MeterProvider } from "@opentelemetry/sdk-metrics";
import { Admin } from "@platformatic/kafka";
import { bootstrap, Service } from "../../mod.ts";
import { kafka, KafkaListener, type KafkaRecord, KafkaTemplate } from "../../kafka.ts";
import { observeConsumerLag } from "../../src/kafka/consumer_lag.ts";
import { KafkaTelemetry, processRecord } from "../../src/kafka/kafka_telemetry.ts";
import { CollectingReader, restoreMeterProviderAfter, valueOf } from "../metric_reader.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "./broker.ts";
import fc from "fast-check";
import { propertyOptions } from "../property.ts";
import type { OutgoingRecord } from "../../src/kafka/outgoing_record.ts";

restoreMeterProviderAfter();

const CONFIG = { kafka: { "bootstrap-servers": KAFKA_BOOTSTRAP, "client-id": "telemetry" } };

describe("Kafka telemetry on the real broker", () => {
  const exporter = new InMemorySpanExporter();
  let reader: CollectingReader;

  before(() => {
    api.trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.metrics.disable();
    reader = new CollectingReader();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });
  after(() => {
    api.trace.disable();
    api.context.disable();
    api.metrics.disable();
  });

  const spansNamed = (name: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((s) => s.name === name);

  it("joins the template's PRODUCER span and the CONSUMER span through traceparent", async () => {
    const topic = uniqueName("telemetry");
    await createTopic(topic, 2);
    const app = await bootstrap({ config: CONFIG, kafka: kafka() });
    const template = app.getBean(KafkaTemplate);
    const tracer = api.trace.getTracer("test");
    let sent: Awaited<ReturnType<KafkaTemplate["send"]>> | undefined;
    const caller = tracer.startSpan("caller");
    try {
      await api.context.with(api.trace.setSpan(api.context.active(), caller), async () => {
        sent = await template.send(topic, { id: 1 }, {
          key: "k",
          headers: { traceparent: "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01" },
        });
      });
    } finally {
      caller.end();
      await app.close();
    }
    assert.ok(sent !== undefined && !sent.outboxed);
    const [producer] = spansNamed(`send ${topic}`);
    assert.ok(producer, "a PRODUCER span per send");
    assert.equal(producer.kind, api.SpanKind.PRODUCER);
    assert.equal(producer.parentSpanContext?.spanId, caller.spanContext().spanId);
    assert.deepEqual(
      {
        system: producer.attributes["messaging.system"],
        operation: producer.attributes["messaging.operation.type"],
        destination: producer.attributes["messaging.destination.name"],
        partition: producer.attributes["messaging.destination.partition.id"],
        offset: producer.attributes["messaging.kafka.offset"],
        client: producer.attributes["messaging.client.id"],
      },
      {
        system: "kafka",
        operation: "send",
        destination: topic,
        partition: String(sent.partition),
        offset: Number(sent.offset),
        client: "telemetry",
      },
    );
    const sentPoints = await reader.points("messaging.client.sent.messages");
    assert.equal(
      valueOf(sentPoints, {
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": String(sent.partition),
        "messaging.system": "kafka",
      }),
      1,
    );

    // The record on the broker carries the send span's context, in place of the app's.
    const [record] = await readTopic(topic, 1);
    const { traceId, spanId } = producer.spanContext();
    assert.equal(record.headers.get("traceparent"), `00-${traceId}-${spanId}-01`);

    const telemetry = new KafkaTelemetry(api, "telemetry");
    const group = uniqueName("group");
    let activeInHandler: string | undefined;
    const answer = await processRecord(telemetry, group, {
      topic,
      partition: record.partition,
      offset: record.offset,
      headers: record.headers,
    }, () => {
      activeInHandler = api.trace.getActiveSpan()?.spanContext().spanId;
      return Promise.resolve("done");
    });
    assert.equal(answer, "done");
    const [consumer] = spansNamed(`process ${topic}`);
    assert.ok(consumer, "a CONSUMER span per record");
    assert.equal(consumer.kind, api.SpanKind.CONSUMER);
    assert.equal(consumer.spanContext().traceId, traceId);
    assert.equal(consumer.parentSpanContext?.spanId, spanId);
    assert.deepEqual(consumer.links.map((l) => l.context.spanId), [spanId]);
    assert.equal(activeInHandler, consumer.spanContext().spanId);
    assert.equal(consumer.attributes["messaging.consumer.group.name"], group);
    assert.equal(consumer.attributes["messaging.kafka.offset"], Number(record.offset));
    const where = { "messaging.destination.name": topic, "messaging.consumer.group.name": group };
    assert.equal(valueOf(await reader.points("messaging.client.consumed.messages"), where), 1);
    const duration = valueOf(await reader.points("messaging.process.duration"), where) as
      | Histogram
      | undefined;
    assert.equal(duration?.count, 1);
    // The messaging conventions' advised buckets, in seconds.
    assert.deepEqual(
      duration?.buckets.boundaries,
      [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    );
  });

  it("runs a listener's record in a CONSUMER span, the child of the send's PRODUCER span", async () => {
    const topic = uniqueName("telemetry-listener");
    await createTopic(topic, 2);
    let handled!: (seen: { active: string | undefined; traceparent: string | undefined }) => void;
    const seen = new Promise<{ active: string | undefined; traceparent: string | undefined }>(
      (resolve) => (handled = resolve),
    );
    @Service()
    class Tracked {
      @KafkaListener({ topics: topic, groupId: uniqueName("telemetry-listener-group") })
      take(_value: unknown, record: KafkaRecord): void {
        handled({
          active: api.trace.getActiveSpan()?.spanContext().spanId,
          traceparent: record.headers.get("traceparent"),
        });
      }
    }
    const app = await bootstrap({
      config: { kafka: { ...CONFIG.kafka, consumer: { "auto-offset-reset": "earliest" } } },
      components: [Tracked],
      kafka: kafka(),
    });
    const caller = api.trace.getTracer("test").startSpan("caller");
    let handler: { active: string | undefined; traceparent: string | undefined };
    try {
      app.start();
      await api.context.with(
        api.trace.setSpan(api.context.active(), caller),
        () => app.getBean(KafkaTemplate).send(topic, { id: 1 }, { key: "k" }),
      );
      handler = await seen;
    } finally {
      caller.end();
      // Lets the record finish: its span ends with it.
      await app.close();
    }
    const [producer] = spansNamed(`send ${topic}`);
    assert.ok(producer, "a PRODUCER span for the send");
    assert.equal(producer.parentSpanContext?.spanId, caller.spanContext().spanId);
    const { traceId, spanId } = producer.spanContext();
    assert.equal(handler.traceparent, `00-${traceId}-${spanId}-01`);
    const consumers = spansNamed(`process ${topic}`);
    assert.equal(consumers.length, 1, "one CONSUMER span for the one record");
    const [consumer] = consumers;
    assert.equal(consumer.kind, api.SpanKind.CONSUMER);
    assert.equal(consumer.spanContext().traceId, traceId);
    assert.equal(consumer.parentSpanContext?.spanId, spanId);
    assert.deepEqual(consumer.links.map((l) => l.context.spanId), [spanId]);
    assert.equal(handler.active, consumer.spanContext().spanId, "the method runs in the span");
    assert.equal(consumer.attributes["messaging.destination.name"], topic);
  });

  it("marks a failing handler's span and points with error.type, and rethrows", async () => {
    const telemetry = new KafkaTelemetry(api, "telemetry");
    const topic = uniqueName("failing");
    const group = uniqueName("group");
    class OrderRefused extends Error {}
    await assert.rejects(
      processRecord(telemetry, group, {
        topic,
        partition: 0,
        offset: 4n,
        headers: new Map([[new TextEncoder().encode("traceparent"), new Uint8Array([1, 2])]]),
      }, () => {
        throw new OrderRefused("value 42 refused");
      }),
      OrderRefused,
    );
    const [span] = spansNamed(`process ${topic}`);
    assert.equal(span.status.code, api.SpanStatusCode.ERROR);
    assert.equal(span.status.message, undefined);
    assert.equal(span.attributes["error.type"], "OrderRefused");
    // A malformed traceparent is no parent: the span starts a trace of its own.
    assert.equal(span.parentSpanContext, undefined);
    const where = {
      "messaging.destination.name": topic,
      "messaging.consumer.group.name": group,
      "error.type": "OrderRefused",
    };
    assert.equal(valueOf(await reader.points("messaging.client.consumed.messages"), where), 1);
  });

  it("takes a record's traceparent as the parent only when it is well formed", async () => {
    const telemetry = new KafkaTelemetry(api, "telemetry");
    const hex = (length: number) =>
      fc.string({
        unit: fc.constantFrom(..."0123456789abcdef"),
        minLength: length,
        maxLength: length,
      });
    const wellFormed = fc.tuple(hex(32), hex(16), fc.constantFrom("00", "01")).map(
      ([trace, span, flags]) => `00-${trace}-${span}-${flags}`,
    );
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(wellFormed, fc.string(), fc.string({ unit: "binary" })),
        fc.boolean(),
        async (header, asBytes) => {
          const topic = `property-${runs++}`;
          const value = asBytes ? new TextEncoder().encode(header) : header;
          let inHandler: api.SpanContext | undefined;
          await processRecord(telemetry, "g", {
            topic,
            partition: 0,
            offset: 0n,
            headers: [["traceparent", value]],
          }, () => {
            inHandler = api.trace.getActiveSpan()?.spanContext();
          });
          const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim());
          const valid = match !== null && !/^0+$/.test(match[1]) && !/^0+$/.test(match[2]);
          // The handler runs in the record's trace where it names one, else in a trace of its own.
          assert.equal(inHandler?.traceId === match?.[1], valid);
          const [span] = spansNamed(`process ${topic}`);
          if (valid && match[3] === "00") {
            // The producer did not sample the trace: neither is the processing recorded.
            assert.equal(span, undefined);
          } else {
            assert.equal(span.parentSpanContext?.spanId, valid ? match[2] : undefined);
          }
        },
      ),
      propertyOptions(60),
    );
  });

  it("carries each record's own send span to its processing, the app's traceparent replaced", async () => {
    const telemetry = new KafkaTelemetry(api, "telemetry");
    const captured: OutgoingRecord[] = [];
    const sender = telemetry.sender({
      send: (records) => {
        captured.push(...records);
        return Promise.resolve(
          records.map((r, i) => ({ topic: r.topic, partition: 0, offset: BigInt(i) })),
        );
      },
    });
    const topic = uniqueName("batch");
    const text = (s: string) => new TextEncoder().encode(s);
    await sender.send([0, 1, 2].map((i) => ({
      topic,
      key: undefined,
      value: text(String(i)),
      headers: [["traceparent", text("00-11111111111111111111111111111111-2222222222222222-01")]],
      partition: undefined,
    })));
    const sends = spansNamed(`send ${topic}`);
    assert.equal(sends.length, 3);
    for (const [i, record] of captured.entries()) {
      assert.deepEqual(record.headers.filter(([name]) => name === "traceparent").length, 1);
      await processRecord(telemetry, "g", {
        topic,
        partition: 0,
        offset: BigInt(i),
        headers: record.headers,
      }, () => {});
    }
    const processed = spansNamed(`process ${topic}`);
    assert.deepEqual(
      processed.map((s) => s.parentSpanContext?.spanId),
      sends.map((s) => s.spanContext().spanId),
    );
  });

  it("calls the handler directly when there is no telemetry", async () => {
    const record = { topic: "t", partition: 0, offset: 0n, headers: undefined };
    assert.equal(await processRecord(undefined, "g", record, (r) => r.offset + 1n), 1n);
    await assert.rejects(
      processRecord(undefined, "g", record, () => {
        throw new RangeError("no");
      }),
      RangeError,
    );
  });

  it("reports the lag of a group by partition, read through the Admin", async () => {
    const topic = uniqueName("lag");
    const group = uniqueName("lag-group");
    await createTopic(topic, 2);
    const app = await bootstrap({ config: CONFIG, kafka: kafka() });
    try {
      const template = app.getBean(KafkaTemplate);
      for (let i = 0; i < 5; i++) await template.send(topic, i, { partition: 0 });
      for (let i = 0; i < 3; i++) await template.send(topic, i, { partition: 1 });
    } finally {
      await app.close();
    }
    const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] });
    try {
      await admin.alterConsumerGroupOffsets({
        groupId: group,
        topics: [{
          name: topic,
          partitionOffsets: [{ partition: 0, offset: 2n }, { partition: 1, offset: 3n }],
        }],
      });
    } finally {
      await admin.close();
    }
    const telemetry = new KafkaTelemetry(api, "telemetry");
    const stop = observeConsumerLag(
      telemetry,
      { clientId: "thaw", bootstrapBrokers: [KAFKA_BOOTSTRAP] },
      () => [group],
      60_000,
    );
    try {
      const points = await reader.points("messaging.kafka.consumer.lag");
      const at = (partition: number) =>
        valueOf(points, {
          "messaging.consumer.group.name": group,
          "messaging.destination.name": topic,
          "messaging.destination.partition.id": String(partition),
        });
      assert.deepEqual([at(0), at(1)], [3, 0]);
    } finally {
      await stop();
    }
  });

  it("does not hold a collection for a lag read that never answers", async () => {
    const telemetry = new KafkaTelemetry(api, "telemetry");
    const group = uniqueName("stuck");
    let reads = 0;
    const stop = telemetry.observeLag(() => [group], () => {
      reads++;
      return new Promise(() => {});
    }, 20);
    try {
      const points = await reader.points("messaging.kafka.consumer.lag");
      assert.equal(valueOf(points, { "messaging.consumer.group.name": group }), undefined);
      await reader.points("messaging.kafka.consumer.lag");
      // The read under way is waited for again, not started twice.
      assert.equal(reads, 1);
    } finally {
      stop();
    }
  });

  it("reports the outbox's backlog", async () => {
    const telemetry = new KafkaTelemetry(api, "telemetry");
    let backlog = 7;
    const stop = telemetry.observeBacklog(
      () => Promise.resolve(backlog),
      { "db.client.connection.pool.name": "orders-db" },
    );
    try {
      const where = { "db.client.connection.pool.name": "orders-db", "messaging.system": "kafka" };
      assert.equal(valueOf(await reader.points("thaw.kafka.outbox.backlog"), where), 7);
      backlog = 0;
      assert.equal(valueOf(await reader.points("thaw.kafka.outbox.backlog"), where), 0);
    } finally {
      stop();
    }
  });
});
