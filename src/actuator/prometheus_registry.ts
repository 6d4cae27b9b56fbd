// The process's meters, read by `/actuator/prometheus`: one MeterProvider for the process (as
// Micrometer's global registry is), registered as OpenTelemetry's global one unless the app
// registered its own first, so that `metrics.getMeter("shop")` anywhere shows up with no set-up.
import type { Histogram, MeterProvider } from "@opentelemetry/api";
import { VERSION } from "../version.ts";
import { DURATION_BUCKETS } from "./duration_buckets.ts";
import type { OtelApi, OtelMetricsSdk } from "./opentelemetry.ts";
import { prometheusFamilies } from "./prometheus_names.ts";
import { type RuntimeMetrics, runtimeMetrics } from "./runtime_metrics.ts";
import { runtimeSources } from "./runtime_sources.ts";

/** What the prometheus endpoint reads. */
export interface PrometheusRegistry {
  /** Thaw's request histogram, in this registry. */
  readonly requests: Histogram;
  /** The registry's provider: what Thaw's own meters are made on. */
  readonly provider: MeterProvider;
  /** The process's own series (CPU, memory, uptime, the runtime's), while an app observes them. */
  readonly runtime: RuntimeMetrics;
  /** Whether the app's code reaches this registry through OpenTelemetry's global API. */
  readonly global: boolean;
  /** The text exposition of every meter now. */
  scrape(): Promise<string>;
}

/** Thaw's request histogram, on a meter of `provider`. */
export function requestHistogram(
  provider: {
    getMeter(name: string, version?: string): ReturnType<OtelApi["metrics"]["getMeter"]>;
  },
): Histogram {
  return provider.getMeter("thaw", VERSION).createHistogram("http.server.request.duration", {
    unit: "s",
    description: "Duration of HTTP server requests.",
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
  });
}

// Module-level: one registry for the process, as OpenTelemetry's global one is (see the top).
let registry: PrometheusRegistry | undefined;

/** The process's registry, made on first use. */
export function prometheusRegistry(
  api: OtelApi,
  { sdk, Serializer }: OtelMetricsSdk,
): PrometheusRegistry {
  if (registry !== undefined) return registry;
  class ScrapeReader extends sdk.MetricReader {
    protected override onForceFlush(): Promise<void> {
      return Promise.resolve();
    }
    protected override onShutdown(): Promise<void> {
      return Promise.resolve();
    }
  }
  const reader = new ScrapeReader({
    aggregationTemporalitySelector: () => sdk.AggregationTemporality.CUMULATIVE,
  });
  const provider = new sdk.MeterProvider({ readers: [reader] });
  // No target_info (its labels would be the SDK's and the runtime's, not the service's), and no
  // scope labels of the serializer's: `prometheusFamilies` gives each point its meter's name, and
  // a version label would start new series at every upgrade.
  const serializer = new Serializer("", false, undefined, true, true);
  const global = api.metrics.setGlobalMeterProvider(provider);
  registry = {
    requests: requestHistogram(provider),
    provider,
    runtime: runtimeMetrics(provider.getMeter("thaw", VERSION), runtimeSources()),
    global,
    async scrape() {
      const { resourceMetrics } = await reader.collect();
      return serializer.serialize(prometheusFamilies(resourceMetrics, sdk.DataPointType.SUM));
    },
  };
  return registry;
}
