// The database clients' metrics, in one place for the datasources (src/data) and the search
// connections (src/search), which import nothing of each other: both report
// `db.client.operation.duration` alike, made from the meter provider registered now, and made
// again when another is registered after them.
import type { Histogram, Meter, MeterProvider } from "@opentelemetry/api";
import type { OtelApi } from "../actuator/opentelemetry.ts";
import { VERSION } from "../version.ts";

/** The conventions' advice for `db.client.operation.duration`, in seconds; the pools' waits too. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];

/** What a client makes of one meter provider, and how it stops reading it. */
export interface MeterInstruments<T> {
  /** What the client records to. */
  readonly value: T;
  /** Removes what reads the client for that provider (an observable's callback). */
  readonly undo?: (() => void) | undefined;
}

/**
 * Follows the meter provider registered now: while it is a real one, what `make` made of its
 * `thaw` meter and `db.client.operation.duration` histogram; nothing while it is the no-op one.
 * A provider registered later is followed at the next {@linkcode DbClientMeter.current}, the
 * former's callbacks undone.
 */
export class DbClientMeter<T> {
  readonly #api: OtelApi;
  readonly #make: (meter: Meter, duration: Histogram) => MeterInstruments<T>;
  // The API's no-op meter hands out one histogram, the same the no-op provider's meters do.
  readonly #noop: Histogram;
  #provider: MeterProvider | undefined;
  #made: MeterInstruments<T> | undefined;

  constructor(api: OtelApi, make: (meter: Meter, duration: Histogram) => MeterInstruments<T>) {
    this.#api = api;
    this.#make = make;
    this.#noop = api.createNoopMeter().createHistogram("db.client.operation.duration");
  }

  /** What was made of the provider registered now; none while it is the no-op one. */
  current(): T | undefined {
    const provider = this.#api.metrics.getMeterProvider();
    if (provider !== this.#provider) this.#follow(provider);
    return this.#made?.value;
  }

  /** Undoes what was made: the next {@linkcode DbClientMeter.current} makes it again. */
  forget(): void {
    this.#made?.undo?.();
    this.#made = undefined;
    this.#provider = undefined;
  }

  #follow(provider: MeterProvider): void {
    this.forget();
    this.#provider = provider;
    const meter = provider.getMeter("thaw", VERSION);
    const duration = meter.createHistogram("db.client.operation.duration", {
      unit: "s",
      description: "Duration of database client operations.",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    if (duration !== this.#noop) this.#made = this.#make(meter, duration);
  }
}
