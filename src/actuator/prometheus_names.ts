// OpenTelemetry's metric names as Prometheus names: the unit becomes a suffix
// (`http.server.request.duration` in `s` is `http_server_request_duration_seconds`), as the
// OpenTelemetry specification's Prometheus compatibility rules say. OpenTelemetry's own serializer
// leaves units out of names, so that a dashboard made for another OpenTelemetry service's
// `_seconds` would find nothing here.
import type { MetricData, ResourceMetrics } from "@opentelemetry/sdk-metrics";

/** The words OpenTelemetry's Prometheus rules give units (`s` is `seconds`). */
export const UNITS: Readonly<Record<string, string>> = {
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

/** The words of the units a rate is per (`By/s` is `bytes_per_second`). */
export const PER_UNITS: Readonly<Record<string, string>> = {
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

/**
 * OpenTelemetry names whose Prometheus form Prometheus refuses, and the name served instead.
 * `db.client.connection.count`, the database client conventions' connections by state, would be
 * the gauge `db_client_connection_count`, which `promtool check metrics` refuses (`_count` is a
 * histogram's and a summary's): it is served as `db_client_connections`, the plural Prometheus's
 * naming advice gives a gauge of things, as Micrometer's `hikaricp_connections` is. An
 * instrumentation library's metric of that name (pg's) joins the same family.
 */
const RENAMED: ReadonlyMap<string, string> = new Map([
  ["db.client.connection.count", "db.client.connections"],
]);

/** `name` with the unit's suffix, unless it ends with it already. */
export function prometheusName(name: string, unit: string): string {
  name = RENAMED.get(name) ?? name;
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

// What OpenTelemetry's serializer makes of a name or a label: what Prometheus does not take is `_`.
const sanitize = (name: string) => name.replace(/[^a-z0-9_]/gi, "_").replace(/_{2,}/g, "_");

/**
 * `metrics` as the text format needs them: one family per name. OpenTelemetry's serializer writes
 * a family per meter, so that two meters' `http.server.request.duration` (an instrumentation
 * library's and Thaw's), or `wait` in `s` beside `wait_seconds`, would be two families of one name,
 * which Prometheus refuses. Metrics whose names end the same are merged into one family, each
 * point labelled with its meter's name (`otel_scope_name`); one of another kind is left out, as
 * is a point whose labels another point of its family has. Label names are written as the
 * serializer writes them, the first of two that end the same kept.
 *
 * `sum` is the SDK's `DataPointType.SUM`, whose monotonic metrics are counters (`_total`).
 */
export function prometheusFamilies(metrics: ResourceMetrics, sum: number): ResourceMetrics {
  const families = new Map<string, MetricData>();
  const seen = new Map<string, Set<string>>();
  for (const scope of metrics.scopeMetrics) {
    for (
      const metric of withUnitSuffixes({ ...metrics, scopeMetrics: [scope] }).scopeMetrics[0]
        .metrics
    ) {
      const counter = metric.dataPointType === sum && (metric as { isMonotonic?: boolean })
            .isMonotonic === true;
      let name = sanitize(metric.descriptor.name);
      if (counter && !name.endsWith("_total")) name += "_total";
      const family = families.get(name);
      if (
        family !== undefined &&
        (family.dataPointType !== metric.dataPointType ||
          (family as { isMonotonic?: boolean }).isMonotonic !==
            (metric as { isMonotonic?: boolean }).isMonotonic)
      ) {
        continue;
      }
      const labelled = (metric.dataPoints as { attributes: Record<string, unknown> }[]).map(
        (point) => {
          // No prototype: an attribute named `constructor` or `__proto__` is a label like any.
          const attributes: Record<string, unknown> = Object.create(null);
          for (const [key, value] of Object.entries(point.attributes)) {
            const label = sanitize(key);
            if (!(label in attributes) && label !== "otel_scope_name") attributes[label] = value;
          }
          attributes.otel_scope_name = scope.scope.name;
          return { ...point, attributes };
        },
      );
      const labels = seen.get(name) ?? new Set<string>();
      seen.set(name, labels);
      const points = labelled.filter((point) => {
        const key = JSON.stringify(Object.entries(point.attributes).sort());
        if (labels.has(key)) return false;
        labels.add(key);
        return true;
      });
      families.set(name, {
        ...(family ?? metric),
        descriptor: { ...(family ?? metric).descriptor, name },
        dataPoints: [...(family?.dataPoints ?? []), ...points],
      } as MetricData);
    }
  }
  return {
    resource: metrics.resource,
    scopeMetrics: [{ scope: { name: "" }, metrics: [...families.values()] }],
  };
}
