// What the actuator observes of every request: the request histogram and the server span, through
// OpenTelemetry's API where it is installed (or handed in by the app), and the process's registry
// where `prometheus` is exposed.
import type { Histogram, MeterProvider } from "@opentelemetry/api";
import type { RequestObserver } from "../observe/request_observer.ts";
import {
  givenMetricsSdk,
  type GivenModules,
  optionalApi,
  type OtelApi,
  requiredApi,
  requiredMetricsSdk,
} from "./opentelemetry.ts";
import { ConfigError } from "../config/config_error.ts";
import { MissingPackageError } from "../runtime/optional_module.ts";
import { prometheusRegistry, requestHistogram } from "./prometheus_registry.ts";
import { metricsObserver } from "./request_metrics.ts";
import type { RuntimeMetrics } from "./runtime_metrics.ts";
import { tracingObserver } from "./request_tracing.ts";
import { clientAddress, type ForwardHeadersStrategy } from "../runtime/client_address.ts";
import { clientSource } from "../observe/client_source.ts";
import { type Mask, noMask } from "../config/secrets_mask.ts";

/** The request observers, outermost first, and the scrape of `/actuator/prometheus`. */
export interface RequestTelemetry {
  readonly observers: readonly RequestObserver[];
  readonly scrape?: () => Promise<string>;
  /** The API the metrics go through, where there is one: the open streams' gauge goes there too. */
  readonly api?: OtelApi;
  /**
   * The providers Thaw's other meters (the caches', the scheduler's) go to now, as the request
   * histogram does: the registry's, and the app's own beside it.
   */
  readonly providers?: () => readonly MeterProvider[];
  /** The process's series, in the registry the scrape reads: an app observes them while it runs. */
  readonly runtime?: RuntimeMetrics;
}

/**
 * With `prometheus` served, the process's registry: `required` (named in `include`), its packages
 * must be there; `optional` (`*`), it is served where they are. Else the app's own providers,
 * registered through OpenTelemetry's API, where it is installed. Without the API, nothing: no
 * provider can have been registered. With `given` (`actuator({ opentelemetry })`), its modules
 * are those, and none is imported. Spans name the client by `strategy`
 * (`server.forward-headers-strategy`), their texts through `mask` (the log's).
 */
export async function requestTelemetry(
  prometheus: "required" | "optional" | "off",
  given?: GivenModules,
  strategy: ForwardHeadersStrategy = "none",
  mask: Mask = noMask,
): Promise<RequestTelemetry> {
  // The access log names the client as the spans do, however the app is served.
  clientSource.address = clientAddress;
  if (prometheus === "optional") {
    try {
      return await requestTelemetry("required", given, strategy, mask);
    } catch (error) {
      if (!(error instanceof MissingPackageError || error instanceof ConfigError)) throw error;
      return await requestTelemetry("off", given, strategy, mask);
    }
  }
  const neededBy = "management.endpoints.web.exposure.include: prometheus";
  const api = given !== undefined
    ? given.api
    : prometheus === "required"
    ? await requiredApi(neededBy).catch((error) => {
      if (error instanceof MissingPackageError) throw error;
      // An edge runtime loads no module its bundle does not hold.
      throw new ConfigError(
        `${neededBy}: this runtime cannot load OpenTelemetry's packages from node_modules ` +
          `(${(error as Error)?.message}); import them in the app and hand them in, ` +
          "actuator({ opentelemetry: { api, sdkMetrics, PrometheusSerializer } }), or serve " +
          "prometheus from Deno, Bun or Node",
        { cause: error },
      );
    })
    : await optionalApi();
  if (api === undefined) return { observers: [] };
  // The global provider may be registered after bootstrap: the histogram follows it.
  let cached: { provider: unknown; histogram: Histogram } | undefined;
  const global = () => {
    const provider = api.metrics.getMeterProvider();
    if (cached?.provider !== provider) cached = { provider, histogram: requestHistogram(provider) };
    return cached.histogram;
  };
  if (prometheus === "required") {
    const registry = prometheusRegistry(
      api,
      given !== undefined ? givenMetricsSdk(given, neededBy) : await requiredMetricsSdk(neededBy),
    );
    // An app that registered its own provider first gets the request metrics there too.
    const histograms = registry.global ? () => [registry.requests] : () => [
      registry.requests,
      global(),
    ];
    const own = [registry.provider];
    return {
      observers: [tracingObserver(api, strategy, mask), metricsObserver(histograms)],
      scrape: registry.scrape,
      api,
      providers: registry.global
        ? () => own
        : () => [registry.provider, api.metrics.getMeterProvider()],
      runtime: registry.runtime,
    };
  }
  // The API's no-op meter hands out one histogram, the same the no-op provider's meters do.
  const noop = api.createNoopMeter().createHistogram("http.server.request.duration");
  return {
    observers: [tracingObserver(api, strategy, mask), metricsObserver(() => [global()], noop)],
    api,
    providers: () => [api.metrics.getMeterProvider()],
  };
}
