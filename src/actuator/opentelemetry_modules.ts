// The type of `actuator({ opentelemetry })`, apart from the modules that load OpenTelemetry: it
// names what the actuator uses of each module rather than OpenTelemetry's own types, so that the
// declarations of the actuator entry point type-check in an app that installs none of its packages.

/**
 * OpenTelemetry's modules, imported by the app and handed to `actuator({ opentelemetry })`: the
 * actuator then uses them, for traces and metrics alike, and imports none itself. An edge worker
 * (workerd, Cloudflare Workers) needs this: its bundle holds only what the app imports statically.
 */
export interface OpenTelemetryModules {
  /** `import * as api from "@opentelemetry/api"`. */
  readonly api: {
    readonly metrics: object;
    readonly context: object;
    readonly propagation: object;
    readonly trace: object;
    readonly createNoopMeter: (...args: never[]) => object;
    readonly ROOT_CONTEXT: object;
    readonly SpanKind: object;
    readonly SpanStatusCode: object;
    readonly isSpanContextValid: (...args: never[]) => boolean;
  };
  /**
   * `import * as sdkMetrics from "@opentelemetry/sdk-metrics"`: with the serializer, for
   * `prometheus`.
   */
  readonly sdkMetrics?: {
    readonly MeterProvider: abstract new (...args: never[]) => object;
    readonly MetricReader: abstract new (...args: never[]) => object;
    readonly AggregationTemporality: object;
    readonly DataPointType: object;
  };
  /**
   * `import { PrometheusSerializer } from
   * "@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js"`: with `sdkMetrics`,
   * for `prometheus` (the serializer alone: the exporter's entry also loads its HTTP server).
   */
  readonly PrometheusSerializer?: new (
    ...args: never[]
  ) => { serialize(resourceMetrics: never): string };
}
