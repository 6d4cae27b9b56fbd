// What the Kafka client reports through OpenTelemetry's API, by the messaging conventions: a
// PRODUCER span per send and `messaging.client.sent.messages`; a CONSUMER `process` span per record
// handled, `messaging.client.consumed.messages` and `messaging.process.duration`; the consumer lag
// and the outboxes' backlog as gauges (kafka_gauges.ts). Made only where the API is installed
// (`optionalApi()`): an app without it never loads this file, and a send or a record then costs
// nothing here; while no provider is registered, two look-ups. A provider registered after
// bootstrap is followed at the next send or record (kafka_instruments.ts).
import type { Attributes, Context, Span } from "@opentelemetry/api";
import { type OtelApi, registeredTracer } from "../actuator/opentelemetry.ts";
import { KafkaGauges, type LagReader } from "./kafka_gauges.ts";
import { KafkaInstruments } from "./kafka_instruments.ts";
import { errorClassOf } from "../observe/error_class.ts";
import { baseAttributes } from "./messaging_attributes.ts";
import type { OutgoingRecord, RecordMetadata, RecordSender } from "./outgoing_record.ts";
import { creationContext, type ReceivedHeaders, withTraceHeaders } from "./trace_headers.ts";

export type { LagReader, PartitionLag } from "./kafka_gauges.ts";

/** A received record as the telemetry reads it: where it came from, and its headers. */
export interface ReceivedRecordView {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  /**
   * Its headers, as the client hands them (a `Map` of bytes) or as pairs: only `traceparent` and
   * `tracestate` are read.
   */
  readonly headers: ReceivedHeaders | undefined;
}

/**
 * The Kafka client's telemetry, over OpenTelemetry's API: the producer's through
 * {@linkcode KafkaTelemetry.sender}, the listeners' through {@linkcode processRecord}, the gauges
 * through {@linkcode KafkaTelemetry.observeLag} and {@linkcode KafkaTelemetry.observeBacklog}.
 */
export class KafkaTelemetry {
  readonly #api: OtelApi;
  readonly #base: Attributes;
  readonly #gauges = new KafkaGauges();
  readonly #instruments: KafkaInstruments;

  /**
   * @param api OpenTelemetry's API
   * @param clientId `kafka.client-id`, as `messaging.client.id`
   * @param server the first of `kafka.bootstrap-servers` (`host:port`), as `server.address`/`port`
   */
  constructor(api: OtelApi, clientId: string, server?: string) {
    this.#api = api;
    this.#base = baseAttributes(clientId, server);
    this.#instruments = new KafkaInstruments(api, this.#gauges);
  }

  /** `sender` with a PRODUCER span per record and `messaging.client.sent.messages` counted. */
  sender(sender: RecordSender): RecordSender {
    return { send: (records) => this.#send(sender, records) };
  }

  /**
   * Reports the consumer lag of the groups `groups` answers (read again at each collection) as
   * `messaging.kafka.consumer.lag`, by group, topic and partition. A collection waits at most
   * `timeoutMs` for the broker; past it, the values of the last read that finished are reported
   * and the read goes on for the next. Returns what stops it.
   */
  observeLag(groups: () => readonly string[], read: LagReader, timeoutMs = 1000): () => void {
    const stop = this.#gauges.addLag(groups, read, timeoutMs);
    this.#instruments.current();
    return stop;
  }

  /**
   * Reports `backlog()` (the records an outbox holds not yet sent) as `thaw.kafka.outbox.backlog`,
   * with `attributes` (the datasource's name), waiting at most `timeoutMs` at each collection as
   * {@linkcode KafkaTelemetry.observeLag} does. Returns what stops it.
   */
  observeBacklog(
    backlog: () => Promise<number>,
    attributes: Attributes = {},
    timeoutMs = 1000,
  ): () => void {
    const stop = this.#gauges.addBacklog(backlog, attributes, timeoutMs);
    this.#instruments.current();
    return stop;
  }

  /**
   * Runs `handle(record)` inside a CONSUMER `process <topic>` span, the child of the span whose
   * `traceparent` the record carries (and linked to it, as the conventions ask), and records
   * `messaging.client.consumed.messages` and `messaging.process.duration`, with `error.type`
   * where `handle` throws or rejects. {@linkcode processRecord} skips it when telemetry is off.
   */
  process<T extends ReceivedRecordView, R>(
    group: string,
    record: T,
    handle: (record: T) => R | Promise<R>,
  ): Promise<R> {
    const tracer = registeredTracer(this.#api);
    const instruments = this.#instruments.current();
    if (tracer === undefined && instruments === undefined) {
      return processRecord(undefined, group, record, handle);
    }
    const api = this.#api;
    const attributes: Attributes = {
      ...this.#base,
      "messaging.operation.name": "process",
      "messaging.operation.type": "process",
      "messaging.destination.name": record.topic,
      "messaging.destination.partition.id": String(record.partition),
      "messaging.consumer.group.name": group,
    };
    let span: Span | undefined;
    let context: Context = api.context.active();
    if (tracer !== undefined) {
      const parent = creationContext(api, record.headers);
      const parentContext = parent === undefined
        ? context
        : api.trace.setSpanContext(api.ROOT_CONTEXT, parent);
      span = tracer.startSpan(`process ${record.topic}`, {
        kind: api.SpanKind.CONSUMER,
        attributes: { ...attributes, "messaging.kafka.offset": Number(record.offset) },
        links: parent === undefined ? [] : [{ context: parent }],
      }, parentContext);
      context = api.trace.setSpan(parentContext, span);
    }
    const start = performance.now();
    const done = (error: unknown, failed: boolean): void => {
      const seconds = (performance.now() - start) / 1000;
      const point = failed ? { ...attributes, "error.type": errorClassOf(error) } : attributes;
      if (span !== undefined) {
        if (failed) {
          span.setAttribute("error.type", point["error.type"] as string);
          // No message: a handler's may quote the record.
          span.setStatus({ code: api.SpanStatusCode.ERROR });
        }
        span.end();
      }
      if (instruments !== undefined) {
        instruments.consumed.add(1, point);
        instruments.duration.record(seconds, point);
      }
    };
    return api.context.with(context, async () => {
      try {
        const result = await handle(record);
        done(undefined, false);
        return result;
      } catch (error) {
        done(error, true);
        throw error;
      }
    });
  }

  async #send(
    sender: RecordSender,
    records: readonly OutgoingRecord[],
  ): Promise<readonly RecordMetadata[]> {
    const tracer = registeredTracer(this.#api);
    const instruments = this.#instruments.current();
    if (tracer === undefined && instruments === undefined) return sender.send(records);
    const api = this.#api;
    const active = api.context.active();
    const spans: (Span | undefined)[] = [];
    const traced = tracer === undefined ? records : records.map((record) => {
      const span = tracer.startSpan(`send ${record.topic}`, {
        kind: api.SpanKind.PRODUCER,
        attributes: {
          ...this.#base,
          "messaging.operation.name": "send",
          "messaging.operation.type": "send",
          "messaging.destination.name": record.topic,
        },
      }, active);
      spans.push(span);
      return withTraceHeaders(record, span.spanContext());
    });
    try {
      const sent = await sender.send(traced);
      sent.forEach((metadata, i) => {
        const partition = String(metadata.partition);
        const span = spans[i];
        if (span !== undefined) {
          span.setAttribute("messaging.destination.partition.id", partition);
          span.setAttribute("messaging.kafka.offset", Number(metadata.offset));
          span.end();
        }
        instruments?.sent.add(1, {
          ...this.#base,
          "messaging.operation.name": "send",
          "messaging.destination.name": metadata.topic,
          "messaging.destination.partition.id": partition,
        });
      });
      return sent;
    } catch (error) {
      const type = errorClassOf(error);
      records.forEach((record, i) => {
        const span = spans[i];
        if (span !== undefined) {
          span.setAttribute("error.type", type);
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: messageOf(error) });
          span.end();
        }
        instruments?.sent.add(1, {
          ...this.#base,
          "messaging.operation.name": "send",
          "messaging.destination.name": record.topic,
          "error.type": type,
        });
      });
      throw error;
    }
  }
}

/**
 * Runs `handle(record)` for group `group` through `telemetry` where there is one (the app has
 * OpenTelemetry's API), else calls it directly: what a listener container calls per record.
 */
export function processRecord<T extends ReceivedRecordView, R>(
  telemetry: KafkaTelemetry | undefined,
  group: string,
  record: T,
  handle: (record: T) => R | Promise<R>,
): Promise<R> {
  if (telemetry === undefined) {
    try {
      return Promise.resolve(handle(record));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return telemetry.process(group, record, handle);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
