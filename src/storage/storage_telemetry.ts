// What an `ObjectStorage` reports through OpenTelemetry's API, loaded only where the app has it: a
// CLIENT span per operation while a tracer provider is registered; `thaw.storage.operation.duration`
// and the bytes it moved while a meter provider is. Keys are left out of both: they are the app's
// data, and one series per key would have no bound.
import type { Attributes, Counter, Histogram, Span } from "@opentelemetry/api";
import { type OtelApi, registeredTracer } from "../actuator/opentelemetry.ts";
import { DURATION_BUCKETS } from "../observe/db_client_meter.ts";
import { FollowedMeter } from "../observe/followed_meter.ts";
import type { StorageError, StorageOperation } from "./storage_error.ts";

/** The instruments of one meter provider. */
interface StorageInstruments {
  readonly duration: Histogram;
  readonly bytes: Counter;
}

/** One operation under way, ended once with how it went. */
export interface StorageMeasure {
  /** Ends the operation: its span and its point of the duration histogram. */
  end(error?: StorageError): void;
  /** Counts bytes sent to the store (`in`) or read from it (`out`). */
  bytes(direction: "in" | "out", count: number): void;
}

/** Reports the operations of one store, named `store`, of kind `kind`. */
export class StorageTelemetry {
  readonly #api: OtelApi;
  readonly #base: Attributes;
  readonly #meter: FollowedMeter<StorageInstruments>;

  constructor(api: OtelApi, store: string, kind: string) {
    this.#api = api;
    this.#base = { "thaw.storage.name": store, "thaw.storage.kind": kind };
    this.#meter = new FollowedMeter(api, (meter) => ({
      duration: meter.createHistogram("thaw.storage.operation.duration", {
        unit: "s",
        description: "Duration of object storage operations.",
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
      bytes: meter.createCounter("thaw.storage.bytes", {
        unit: "By",
        description: "Bytes sent to (in) and read from (out) object storage.",
      }),
    }));
  }

  /** Starts measuring `operation`; nothing is made while no provider is registered. */
  begin(operation: StorageOperation): StorageMeasure | undefined {
    const tracer = registeredTracer(this.#api);
    const instruments = this.#meter.current();
    if (tracer === undefined && instruments === undefined) return undefined;
    const attributes: Attributes = { ...this.#base, "thaw.storage.operation": operation };
    const span: Span | undefined = tracer?.startSpan(
      `${operation} ${this.#base["thaw.storage.name"]}`,
      { kind: this.#api.SpanKind.CLIENT, attributes },
    );
    const start = performance.now();
    const { SpanStatusCode } = this.#api;
    return {
      end(error) {
        const ended = error === undefined
          ? attributes
          : { ...attributes, "error.type": error.kind };
        instruments?.duration.record((performance.now() - start) / 1000, ended);
        if (span === undefined) return;
        if (error !== undefined) {
          span.setAttribute("error.type", error.kind);
          // Not the error's message, which names the key.
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: `${error.operation}: ${error.kind}`,
          });
        }
        span.end();
      },
      bytes(direction, count) {
        instruments?.bytes.add(count, { ...attributes, "thaw.storage.direction": direction });
      },
    };
  }
}
