// The Kafka client's instruments on the meter provider registered now: made again when another is
// registered (after bootstrap, as the datasources' telemetry follows it), none while it is the
// no-op one, so that a send or a record then costs two look-ups.
import type {
  BatchObservableCallback,
  Counter,
  Histogram,
  Meter,
  MeterProvider,
  Observable,
  ObservableGauge,
} from "@opentelemetry/api";
import { DURATION_BUCKETS } from "../actuator/duration_buckets.ts";
import type { OtelApi } from "../actuator/opentelemetry.ts";
import { VERSION } from "../version.ts";
import type { KafkaGauges } from "./kafka_gauges.ts";

/** The instruments a send or a record reports on. */
export interface Instruments {
  /** `messaging.client.sent.messages`. */
  readonly sent: Counter;
  /** `messaging.client.consumed.messages`. */
  readonly consumed: Counter;
  /** `messaging.process.duration`, in seconds. */
  readonly duration: Histogram;
}

/** The instruments of one provider, with the gauges' callback to remove when it is left. */
interface Made extends Instruments {
  readonly meter: Meter;
  readonly lag: ObservableGauge;
  readonly backlog: ObservableGauge;
  readonly read: BatchObservableCallback;
}

/** Follows the registered meter provider, making the instruments on each. */
export class KafkaInstruments {
  readonly #api: OtelApi;
  readonly #gauges: KafkaGauges;
  // What a no-op provider makes: a provider that makes it too is the no-op one.
  readonly #noop: Counter;
  #provider: MeterProvider | undefined;
  #made: Made | undefined;

  /** The gauges are read, at each collection, from `gauges`. */
  constructor(api: OtelApi, gauges: KafkaGauges) {
    this.#api = api;
    this.#gauges = gauges;
    this.#noop = api.createNoopMeter().createCounter("messaging.client.sent.messages");
  }

  /** The instruments of the meter provider registered now; none while it is the no-op one. */
  current(): Instruments | undefined {
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
    const read: BatchObservableCallback = (result) => this.#gauges.observe(result, lag, backlog);
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
