// OpenTelemetry's metric names as Prometheus names: the unit becomes a suffix
// (`http.server.request.duration` in `s` is `http_server_request_duration_seconds`), as the
// OpenTelemetry specification's Prometheus compatibility rules say. OpenTelemetry's own serializer
// leaves units out of names, so that a dashboard made for another OpenTelemetry service's
// `_seconds` would find nothing here.
import type { MetricData, ResourceMetrics } from "@opentelemetry/sdk-metrics";

const UNITS: Readonly<Record<string, string>> = {
  // Time
  d: "days",
  h: "hours",
  min: "minutes",
  s: "seconds",
  ms: "milliseconds",
  us: "microseconds",
  ns: "nanoseconds",
  // Bytes
  By: "bytes",
  KiBy: "kibibytes",
  MiBy: "mebibytes",
  GiBy: "gibibytes",
  TiBy: "tebibytes",
  KBy: "kilobytes",
  MBy: "megabytes",
  GBy: "gigabytes",
  TBy: "terabytes",
  // SI
  m: "meters",
  V: "volts",
  A: "amperes",
  J: "joules",
  W: "watts",
  g: "grams",
  // Misc
  Cel: "celsius",
  Hz: "hertz",
  "%": "percent",
};

const PER_UNITS: Readonly<Record<string, string>> = {
  s: "second",
  m: "minute",
  h: "hour",
  d: "day",
  w: "week",
  mo: "month",
  y: "year",
};

/**
 * The suffix a unit gives a Prometheus name: `s` is `seconds`, `By/s` is `bytes_per_second`; an
 * annotation (`{request}`), `1` and a unit of no known word give none, but for a word of letters
 * alone, which is taken as it is (`requests`).
 */
export function unitSuffix(unit: string): string {
  const bare = unit.replace(/\{[^}]*\}/g, "").trim();
  if (bare === "" || bare === "1") return "";
  const [of, per, ...more] = bare.split("/");
  if (more.length > 0) return "";
  const word = (u: string, table: Readonly<Record<string, string>>): string =>
    Object.hasOwn(table, u) ? table[u] : /^[A-Za-z]+$/.test(u) ? u : "";
  const head = of === "" || of === "1" ? "" : word(of, UNITS);
  if (per === undefined) return head;
  const tail = word(per, PER_UNITS);
  if (tail === "") return head;
  return head === "" ? `per_${tail}` : `${head}_per_${tail}`;
}

/** `name` with the unit's suffix, unless it ends with it already. */
export function prometheusName(name: string, unit: string): string {
  const suffix = unitSuffix(unit);
  if (suffix === "") return name;
  const words = name.split(/[^A-Za-z0-9]+/).filter((w) => w !== "").join("_").toLowerCase();
  const word = suffix.toLowerCase();
  return words.endsWith(`_${word}`) || words === word ? name : `${name}_${suffix}`;
}

/**
 * A copy of `metrics` whose names carry their units, and whose units are left out (the text
 * format has no place for them; the names say them now). The SDK's own objects are not changed.
 */
export function withUnitSuffixes(metrics: ResourceMetrics): ResourceMetrics {
  return {
    resource: metrics.resource,
    scopeMetrics: metrics.scopeMetrics.map((scope) => ({
      scope: scope.scope,
      metrics: scope.metrics.map((metric): MetricData => ({
        ...metric,
        descriptor: {
          ...metric.descriptor,
          name: prometheusName(metric.descriptor.name, metric.descriptor.unit),
          unit: "",
        },
      } as MetricData)),
    })),
  };
}
