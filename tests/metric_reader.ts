// A metric reader a test collects from when it wants: the points of one metric, now.
import { AggregationTemporality, type DataPoint, MetricReader } from "@opentelemetry/sdk-metrics";

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
