// OpenTelemetry's packages, loaded when the actuator needs them: optional peers, so that an app
// that asks for no metrics and registers no OpenTelemetry SDK installs none of them.
import { importOptional, MissingPackageError } from "../runtime/optional_module.ts";

/** OpenTelemetry's API module. */
export type OtelApi = typeof import("@opentelemetry/api");

/** What the `prometheus` endpoint needs besides the API: the metrics SDK and the serializer. */
export interface OtelMetricsSdk {
  readonly sdk: typeof import("@opentelemetry/sdk-metrics");
  readonly Serializer:
    typeof import("@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js").PrometheusSerializer;
}

/**
 * The API where it is installed, else `undefined`: no app can register a tracer or meter provider
 * without it, so there is then nothing to report to.
 */
export async function optionalApi(): Promise<OtelApi | undefined> {
  try {
    return await requiredApi("the actuator");
  } catch (error) {
    if (error instanceof MissingPackageError) return undefined;
    throw error;
  }
}

/** The API; a `MissingPackageError` naming `neededBy` and the install line where it is missing. */
export function requiredApi(neededBy: string): Promise<OtelApi> {
  return importOptional(() => import("@opentelemetry/api"), {
    packages: ["@opentelemetry/api"],
    neededBy,
    what: "OpenTelemetry's API",
  });
}

/** The metrics SDK and the Prometheus serializer; a `MissingPackageError` where one is missing. */
export async function requiredMetricsSdk(neededBy: string): Promise<OtelMetricsSdk> {
  const need = {
    packages: [
      "@opentelemetry/api",
      "@opentelemetry/sdk-metrics",
      "@opentelemetry/exporter-prometheus",
    ],
    neededBy,
    what: "OpenTelemetry's metrics SDK and Prometheus serializer",
  };
  // Specifiers a bundler does not follow: the SDK's Node build imports Node's `os` and `util`, which
  // an edge bundle cannot resolve, and an edge worker that serves health must still bundle. (The
  // serializer alone: the exporter's entry also loads its own HTTP server.)
  const at = (...path: string[]) => ["@opentelemetry", ...path].join("/");
  const [sdk, serializer] = await Promise.all([
    importOptional(
      () => import(at("sdk-metrics")) as Promise<OtelMetricsSdk["sdk"]>,
      need,
    ),
    importOptional(
      () =>
        import(at("exporter-prometheus", "build", "src", "PrometheusSerializer.js")) as Promise<
          { PrometheusSerializer: OtelMetricsSdk["Serializer"] }
        >,
      need,
    ),
  ]);
  return { sdk, Serializer: serializer.PrometheusSerializer };
}
