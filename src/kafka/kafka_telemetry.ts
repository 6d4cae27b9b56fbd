// What the Kafka client reports through OpenTelemetry's API, by the messaging conventions: a
// PRODUCER span per send and `messaging.client.sent.messages`; a CONSUMER `process` span per record
// handled, `messaging.client.consumed.messages` and `messaging.process.duration`; the consumer
// lag of the listeners' groups and the outbox's backlog as gauges read when metrics are collected.
// Made only where the API is installed (`optionalApi()`): an app without it never loads this
// file, and a send or a record then costs nothing here. While no provider is registered, a send
// or a record costs two look-ups. A provider registered after bootstrap is followed at the next
// send or record, as the datasources' telemetry follows it.
import type {
  Attributes,
  BatchObservableCallback,
  Context,
  Counter,
  Histogram,
  Meter,
  MeterProvider,
  Observable,
  ObservableGauge,
  Span,
  SpanContext,
} from "@opentelemetry/api";
import { Buffer } from "node:buffer";
import { DURATION_BUCKETS } from "../actuator/duration_buckets.ts";
import { type OtelApi, registeredTracer } from "../actuator/opentelemetry.ts";
import { VERSION } from "../version.ts";
import type { OutgoingRecord, RecordMetadata, RecordSender } from "./outgoing_record.ts";

/** A received record as the telemetry reads it: where it came from, and its headers. */
export interface ReceivedRecordView {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  /**
   * Its headers, as the client hands them (a `Map` of bytes) or as pairs: only `traceparent` and
   * `tracestate` are read.
   */
  readonly headers:
    | Iterable<readonly [string | Uint8Array, string | Uint8Array | null | undefined]>
    | undefined;
}

/** The lag of one partition for one group: the partition's end offset less the committed one. */
export interface PartitionLag {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  readonly lag: number;
}

/** Reads the lag of `groups` (the client's Admin: `consumer_lag.ts`). */
export type LagReader = (groups: readonly string[]) => Promise<readonly PartitionLag[]>;

interface Instruments {
  readonly meter: Meter;
  readonly sent: Counter;
  readonly consumed: Counter;
  readonly duration: Histogram;
  readonly lag: ObservableGauge;
  readonly backlog: ObservableGauge;
  readonly read: BatchObservableCallback;
}

/** One registration of the lag of some groups. */
interface LagSource {
  readonly groups: () => readonly string[];
  readonly read: LagReader;
  readonly timeoutMs: number;
  last: readonly PartitionLag[];
  pending: Promise<void> | undefined;
}

/** One registration of an outbox's backlog. */
interface BacklogSource {
  readonly backlog: () => Promise<number>;
  readonly timeoutMs: number;
  readonly attributes: Attributes;
  last: number | undefined;
  pending: Promise<void> | undefined;
}

const SYSTEM = "kafka";
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The Kafka client's telemetry, over OpenTelemetry's API: the producer's through
 * {@linkcode KafkaTelemetry.sender}, the listeners' through {@linkcode processRecord}, the gauges
 * through {@linkcode KafkaTelemetry.observeLag} and {@linkcode KafkaTelemetry.observeBacklog}.
 */
export class KafkaTelemetry {
  readonly #api: OtelApi;
  readonly #base: Attributes;
  readonly #noop: Counter;
  readonly #lags = new Set<LagSource>();
  readonly #backlogs = new Set<BacklogSource>();
  #provider: MeterProvider | undefined;
  #made: Instruments | undefined;

  /**
   * @param api OpenTelemetry's API
   * @param clientId `kafka.client-id`, as `messaging.client.id`
   * @param server the first of `kafka.bootstrap-servers` (`host:port`), as `server.address`/`port`
   */
  constructor(api: OtelApi, clientId: string, server?: string) {
    this.#api = api;
    const base: Attributes = { "messaging.system": SYSTEM, "messaging.client.id": clientId };
    if (server !== undefined) {
      const colon = server.lastIndexOf(":");
      base["server.address"] = server.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
      base["server.port"] = Number(server.slice(colon + 1));
    }
    this.#base = base;
    this.#noop = api.createNoopMeter().createCounter("messaging.client.sent.messages");
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
    const source: LagSource = { groups, read, timeoutMs, last: [], pending: undefined };
    this.#lags.add(source);
    this.#instruments();
    return () => void this.#lags.delete(source);
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
    const source: BacklogSource = {
      backlog,
      timeoutMs,
      attributes: { "messaging.system": SYSTEM, ...attributes },
      last: undefined,
      pending: undefined,
    };
    this.#backlogs.add(source);
    this.#instruments();
    return () => void this.#backlogs.delete(source);
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
    const instruments = this.#instruments();
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
      const point = failed ? { ...attributes, "error.type": errorType(error) } : attributes;
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
    const instruments = this.#instruments();
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
      const type = errorType(error);
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

  // The instruments of the meter provider registered now; none while it is the no-op one.
  #instruments(): Instruments | undefined {
    const provider = this.#api.metrics.getMeterProvider();
    if (provider !== this.#provider) this.#follow(provider);
    return this.#made;
  }

  #follow(provider: MeterProvider): void {
    const old = this.#made;
    if (old !== undefined) {
      old.meter.removeBatchObservableCallback(old.read, [old.lag, old.backlog]);
    }
    this.#made = undefined;
    this.#provider = provider;
    const meter = provider.getMeter("thaw", VERSION);
    const sent = meter.createCounter("messaging.client.sent.messages", {
      unit: "{message}",
      description: "Number of messages producer attempted to send to the broker.",
    });
    if (sent === this.#noop) return;
    const lag = meter.createObservableGauge("messaging.kafka.consumer.lag", {
      unit: "{message}",
      description: "Records of a partition a consumer group has not committed yet: the " +
        "partition's end offset less the group's committed offset.",
    });
    const backlog = meter.createObservableGauge("thaw.kafka.outbox.backlog", {
      unit: "{message}",
      description: "Records an outbox holds that are not sent yet.",
    });
    const read: BatchObservableCallback = async (result) => {
      await Promise.all([
        ...[...this.#lags].map(async (source) => {
          for (const point of await readLag(source)) {
            result.observe(lag, point.lag, {
              "messaging.system": SYSTEM,
              "messaging.consumer.group.name": point.group,
              "messaging.destination.name": point.topic,
              "messaging.destination.partition.id": String(point.partition),
            });
          }
        }),
        ...[...this.#backlogs].map(async (source) => {
          const value = await readBacklog(source);
          if (value !== undefined) result.observe(backlog, value, source.attributes);
        }),
      ]);
    };
    const observables: Observable[] = [lag, backlog];
    meter.addBatchObservableCallback(read, observables);
    this.#made = {
      meter,
      sent,
      consumed: meter.createCounter("messaging.client.consumed.messages", {
        unit: "{message}",
        description: "Number of messages that were delivered to the application.",
      }),
      duration: meter.createHistogram("messaging.process.duration", {
        unit: "s",
        description: "Duration of processing operation.",
        advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
      }),
      lag,
      backlog,
      read,
    };
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

// The last lag read that finished within the source's time, or the one before.
async function readLag(source: LagSource): Promise<readonly PartitionLag[]> {
  if (source.pending === undefined) {
    const groups = source.groups();
    if (groups.length === 0) return [];
    source.pending = source.read(groups).then(
      (points) => {
        source.last = points;
      },
      // A broker that is gone leaves the last figures; the health component says it is down.
      () => {},
    ).finally(() => {
      source.pending = undefined;
    });
  }
  await within(source.pending, source.timeoutMs);
  return source.last;
}

async function readBacklog(source: BacklogSource): Promise<number | undefined> {
  if (source.pending === undefined) {
    source.pending = source.backlog().then(
      (count) => {
        source.last = count;
      },
      () => {},
    ).finally(() => {
      source.pending = undefined;
    });
  }
  await within(source.pending, source.timeoutMs);
  return source.last;
}

// Resolves when `promise` settles or `ms` passed, whichever comes first; the timer cleared.
function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// The record with the span's context in W3C's `traceparent` (and `tracestate`, where it has
// one), in place of any the app set: the consumer's span is then the child of this send's.
function withTraceHeaders(record: OutgoingRecord, context: SpanContext): OutgoingRecord {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  const headers: (readonly [string, Uint8Array])[] = record.headers.filter(([name]) =>
    name !== "traceparent" && name !== "tracestate"
  );
  headers.push([
    "traceparent",
    Buffer.from(`00-${context.traceId}-${context.spanId}-${flags}`, "latin1"),
  ]);
  const state = context.traceState?.serialize();
  if (state !== undefined && state !== "") {
    headers.push(["tracestate", Buffer.from(state, "latin1")]);
  }
  return { ...record, headers };
}

// The span context a received record's `traceparent` names; none when it has none or a malformed
// one (anything from the wire is checked before it is trusted).
function creationContext(
  api: OtelApi,
  headers: ReceivedRecordView["headers"],
): SpanContext | undefined {
  if (headers === undefined) return undefined;
  let parent: string | undefined;
  let state: string | undefined;
  for (const [name, value] of headers) {
    if (value === null || value === undefined) continue;
    const key = typeof name === "string" ? name : Buffer.from(name).toString("latin1");
    if (key === "traceparent") parent = text(value);
    else if (key === "tracestate") state = text(value);
  }
  const match = parent === undefined ? null : TRACEPARENT.exec(parent.trim());
  if (match === null) return undefined;
  const context: SpanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: Number.parseInt(match[3], 16) & 1,
    isRemote: true,
  };
  if (!api.isSpanContextValid(context)) return undefined;
  if (state !== undefined && state.length <= 512) {
    return { ...context, traceState: api.createTraceState(state) };
  }
  return context;
}

const text = (value: string | Uint8Array): string =>
  typeof value === "string" ? value : Buffer.from(value).toString("latin1");

// The conventions' `error.type`: the error's class, never its message (which may quote a record).
function errorType(error: unknown): string {
  if (!(error instanceof Error)) return "_OTHER";
  const name = error.constructor?.name;
  return typeof name === "string" && name !== "" ? name : error.name || "_OTHER";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
