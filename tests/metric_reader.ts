// A metric reader a test collects from when it wants: the points of one metric, now; the value
// of one point; and the global meter provider put back after a test file that sets its own.
import { after, before } from "node:test";
import * as api from "@opentelemetry/api";
import { AggregationTemporality, type DataPoint, MetricReader } from "@opentelemetry/sdk-metrics";

/** The value of the point of `points` whose attributes hold `attributes`; undefined for none. */
export function valueOf(points: DataPoint<unknown>[], attributes: api.Attributes): unknown {
  return points.find((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    ?.value;
}

/**
 * Puts back, after the calling test file, the meter provider registered before its tests: Bun
 * runs every test file in one process, and another file's provider (the actuator's registry) must
 * outlive this one's. Call it at the file's top level.
 */
export function restoreMeterProviderAfter(): void {
  // Read when the file's tests start, not when it is imported: a one-process run imports files
  // while earlier files' apps are still open, and putting back the provider of an app closed
  // since would hand every later app's actuator a registry nobody reads.
  let previous = api.metrics.getMeterProvider();
  before(() => {
    previous = api.metrics.getMeterProvider();
  });
  after(() => {
    api.metrics.disable();
    const noop = api.createNoopMeter().createHistogram("h");
    if (previous.getMeter("probe").createHistogram("h") !== noop) {
      api.metrics.setGlobalMeterProvider(previous);
    }
  });
}

/** Collects on demand, cumulative, from the provider it is given to. */
export class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  /** The points of the metric `name` now, of every scope. */
  async points(name: string): Promise<DataPoint<unknown>[]> {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) =>
      scope.metrics.filter((m) => m.descriptor.name === name).flatMap((m) =>
        m.dataPoints as DataPoint<unknown>[]
      )
    );
  }
}
