// OpenTelemetry's packages, loaded when the actuator needs them: optional peers, so that an app
// that asks for no metrics and registers no OpenTelemetry SDK installs none of them.
//
// Each is imported through a specifier a bundler does not follow: an edge worker that serves health
// must bundle whether or not they are installed, and the SDK's Node build imports Node's `os` and
// `util`, which an edge bundle cannot resolve. So on an edge runtime none of them loads, and the
// actuator observes nothing there.
import { importOptional, MissingPackageError } from "../runtime/optional_module.ts";

const at = (...path: string[]) => ["@opentelemetry", ...path].join("/");

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
    // An edge runtime resolves no bare specifier that its bundle does not hold (workerd: "No such
    // module"), and has no code for it.
    if (String((error as Error | undefined)?.message).includes("@opentelemetry/api")) {
      return undefined;
    }
    throw error;
  }
}

/** The API; a `MissingPackageError` naming `neededBy` and the install line where it is missing. */
export function requiredApi(neededBy: string): Promise<OtelApi> {
  return importOptional(() => import(at("api")) as Promise<OtelApi>, {
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
  // The serializer alone: the exporter's entry also loads its own HTTP server.
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
