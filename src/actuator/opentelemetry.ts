// OpenTelemetry's packages, loaded when the actuator needs them: optional peers, so that an app
// that asks for no metrics and registers no OpenTelemetry SDK installs none of them.
//
// Each is imported through a specifier a bundler does not follow: an edge worker that serves health
// must bundle whether or not they are installed, and the SDK's Node build imports Node's `os` and
// `util`, which an edge bundle cannot resolve. So on an edge runtime none of them loads, unless
// the app imports them itself and hands them in (`actuator({ opentelemetry })`): its bundle then
// holds them, and the actuator imports nothing.
import { ConfigError } from "../config/config_error.ts";
import { isMapping } from "../object_guards.ts";
import { checkOptionsObject } from "../options_object.ts";
import { importOptional, MissingPackageError } from "../runtime/optional_module.ts";
import { VERSION } from "../version.ts";

const at = (...path: string[]) => ["@opentelemetry", ...path].join("/");

/** OpenTelemetry's API module. */
export type OtelApi = typeof import("@opentelemetry/api");

/** What the `prometheus` endpoint needs besides the API: the metrics SDK and the serializer. */
export interface OtelMetricsSdk {
  readonly sdk: typeof import("@opentelemetry/sdk-metrics");
  readonly Serializer:
    (typeof import("@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js"))[
      "PrometheusSerializer"
    ];
}

type Tracer = ReturnType<OtelApi["trace"]["getTracer"]>;

/**
 * Thaw's tracer of the registered provider; none while none is registered (the API's proxy then
 * has no delegate), so that the caller can skip the span's work.
 */
export function registeredTracer(api: OtelApi): Tracer | undefined {
  const provider = api.trace.getTracerProvider() as
    & ReturnType<OtelApi["trace"]["getTracerProvider"]>
    & { getDelegateTracer?: (name: string, version?: string) => Tracer | undefined };
  return typeof provider.getDelegateTracer === "function"
    ? provider.getDelegateTracer("thaw", VERSION)
    : provider.getTracer("thaw", VERSION);
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

/** The modules an app handed in, checked: what the actuator uses instead of importing them. */
export interface GivenModules {
  /** OpenTelemetry's API. */
  readonly api: OtelApi;
  /** Absent when the app gave the API alone. */
  readonly metrics?: OtelMetricsSdk;
}

const KEYS = ["api", "sdkMetrics", "PrometheusSerializer"] as const;
const OPTION = "actuator() option opentelemetry";
const SERIALIZER = "@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js";

function describeValue(value: unknown): string {
  if (typeof value === "function") {
    return value.name === "" ? "a function" : `the function ${value.name}`;
  }
  if (typeof value === "object" && value !== null) return "an object";
  if (value === undefined) return "undefined";
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

// The members of a module the actuator uses that `value` lacks (undefined for no object): checked
// so that a default export, a sub-object or another package fails where it is written, not at the
// first request.
function missing(value: unknown, members: readonly string[]): string[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const held = value as Record<string, unknown>;
  return members.filter((member) => held[member] === undefined);
}

function checkModule(key: string, value: unknown, members: readonly string[], what: string): void {
  const lacking = missing(value, members);
  if (lacking?.length === 0) return;
  throw new ConfigError(
    `${OPTION}.${key} must be ${what}, got ${
      lacking === undefined ? describeValue(value) : `an object without ${lacking.join(", ")}`
    }`,
  );
}

/**
 * Checks the `opentelemetry` option of `actuator()` where it is written: a `ConfigError` naming
 * the option and what is wrong for anything but `{ api, sdkMetrics?, PrometheusSerializer? }` of
 * OpenTelemetry's modules.
 */
export function checkOpenTelemetryOption(option: unknown): GivenModules | undefined {
  try {
    return checkModules(option);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    // A getter or a proxy's trap that throws: said where the option is written, as the rest.
    throw new ConfigError(`${OPTION} could not be read: ${(error as Error)?.message ?? error}`, {
      cause: error,
    });
  }
}

function checkModules(option: unknown): GivenModules | undefined {
  if (option === undefined) return undefined;
  // Before the unknown keys: the API module passed where `{ api }` was meant is told so, rather
  // than by the name of its first export.
  if (isMapping(option) && option.api === undefined) {
    throw new ConfigError(`${OPTION}.api is missing: import * as api from "@opentelemetry/api"`);
  }
  const given: unknown = option;
  checkOptionsObject(given, OPTION, KEYS, {
    error: ConfigError,
    hint: `give OpenTelemetry's modules, { ${KEYS.join(", ")} }`,
  });
  checkModule(
    "api",
    given.api,
    [
      "metrics",
      "context",
      "propagation",
      "trace",
      "createNoopMeter",
      "ROOT_CONTEXT",
      "SpanKind",
      "SpanStatusCode",
      "isSpanContextValid",
    ],
    `OpenTelemetry's API module, import * as api from "@opentelemetry/api"`,
  );
  const api = given.api as OtelApi;
  const { sdkMetrics, PrometheusSerializer } = given;
  if (sdkMetrics === undefined && PrometheusSerializer === undefined) return { api };
  if (sdkMetrics === undefined || PrometheusSerializer === undefined) {
    const alone = sdkMetrics === undefined ? "PrometheusSerializer" : "sdkMetrics";
    throw new ConfigError(
      `${OPTION}: sdkMetrics and PrometheusSerializer go together (the prometheus endpoint ` +
        `needs both), got ${alone} alone`,
    );
  }
  checkModule(
    "sdkMetrics",
    sdkMetrics,
    ["MeterProvider", "MetricReader", "AggregationTemporality", "DataPointType"],
    "the module of @opentelemetry/sdk-metrics, " +
      'import * as sdkMetrics from "@opentelemetry/sdk-metrics"',
  );
  const isClass = (value: unknown) =>
    typeof value === "function" && typeof value.prototype?.serialize === "function";
  if (!isClass(PrometheusSerializer)) {
    const itsModule = typeof PrometheusSerializer === "object" && PrometheusSerializer !== null &&
      isClass((PrometheusSerializer as Record<string, unknown>).PrometheusSerializer);
    throw new ConfigError(
      `${OPTION}.PrometheusSerializer must be the class, import { PrometheusSerializer } from ` +
        `"${SERIALIZER}", got ${itsModule ? "its module" : describeValue(PrometheusSerializer)}`,
    );
  }
  return {
    api,
    metrics: {
      sdk: sdkMetrics as OtelMetricsSdk["sdk"],
      Serializer: PrometheusSerializer as OtelMetricsSdk["Serializer"],
    },
  };
}

/**
 * The metrics SDK and serializer the app handed in; a `ConfigError` naming `neededBy` and the
 * option where it gave the API alone (the actuator imports nothing then, to mix no copies).
 */
export function givenMetricsSdk(given: GivenModules, neededBy: string): OtelMetricsSdk {
  if (given.metrics === undefined) {
    throw new ConfigError(
      `${neededBy}: ${OPTION} has no sdkMetrics and PrometheusSerializer: pass them too`,
    );
  }
  return given.metrics;
}
