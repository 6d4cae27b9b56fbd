import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  canonicalNumber,
  OPENMETRICS_CONTENT_TYPE,
  prefersOpenMetrics,
  toOpenMetrics,
} from "../../src/actuator/openmetrics.ts";
import { type OmFamily, readOpenMetrics } from "./openmetrics_check.ts";
import { propertyOptions } from "../property.ts";

// What Prometheus 2.42 sends when it scrapes (its default scrape protocols).
const PROMETHEUS_2_42 =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75," +
  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

describe("prefersOpenMetrics: what the scraper's Accept asks for", () => {
  it("is OpenMetrics 1.0.0 for Prometheus's own Accept, the text format when nothing says", () => {
    const cases: [string | null, boolean][] = [
      [PROMETHEUS_2_42, true],
      // Prometheus 3's, with an escaping scheme Thaw's names never need.
      [
        "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8," +
        "application/openmetrics-text;version=0.0.1;q=0.75," +
        "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4," +
        "*/*;q=0.1",
        true,
      ],
      [null, false],
      ["", false],
      ["*/*", false],
      ["text/plain", false],
      ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false],
      ["application/openmetrics-text", true],
      ["application/openmetrics-text; version=1.0.0; charset=utf-8", true],
      ['application/openmetrics-text;version="1.0.0"', true],
      ["Application/OpenMetrics-Text; Version=1.0.0; Q=0.9, text/plain;q=0.5", true],
      ["application/*", true],
      // Equal weights: the text format, the default.
      ["application/openmetrics-text, text/plain", false],
      ["text/*, application/*", false],
      ["application/openmetrics-text;q=0.4, text/plain;q=0.5", false],
      ["application/openmetrics-text;q=0.5, text/plain;q=0.4", true],
      ["application/openmetrics-text;q=0, */*", false],
      ["text/plain;q=0, */*", true],
      // A version Thaw does not write is not asked for by that range.
      ["application/openmetrics-text;version=0.0.1", false],
      ["application/openmetrics-text;version=2.0.0, text/plain;q=0.1", false],
      // The most specific range that matches gives the weight.
      ["application/openmetrics-text;version=1.0.0;q=0.2, application/*, text/plain;q=0.5", false],
      ["text/plain;version=0.0.4;q=0.3, text/*, application/openmetrics-text;q=0.5", true],
      // A malformed weight leaves its range out.
      ["application/openmetrics-text;q=abc, text/plain;q=0.1", false],
      ["application/openmetrics-text;q=2, text/plain;q=0.1", false],
      ["application/openmetrics-text;q=1.000, text/plain;q=0.999", true],
      ["nonsense, application/openmetrics-text", true],
      [",,;", false],
    ];
    for (const [accept, expected] of cases) {
      assert.equal(prefersOpenMetrics(accept), expected, JSON.stringify(accept));
    }
  });

  it("follows the weights, whatever their order (property)", () => {
    const weight = fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000);
    fc.assert(
      fc.property(weight, weight, fc.boolean(), (om, text, omFirst) => {
        const ranges = [
          `application/openmetrics-text;version=1.0.0;q=${om}`,
          `text/plain;version=0.0.4;q=${text}`,
        ];
        const accept = (omFirst ? ranges : ranges.reverse()).join(", ");
        assert.equal(prefersOpenMetrics(accept), om > text, accept);
      }),
      propertyOptions(),
    );
  });

  it("does not depend on the order of the ranges (property)", () => {
    const range = fc.constantFrom(
      "application/openmetrics-text;version=1.0.0",
      "application/openmetrics-text;version=0.0.1;q=0.75",
      "application/openmetrics-text;q=0.3",
      "application/*;q=0.6",
      "text/plain;version=0.0.4;q=0.5",
      "text/plain;q=0.9",
      "text/*;q=0.2",
      "*/*;q=0.1",
      "text/html",
    );
    fc.assert(
      fc.property(fc.uniqueArray(range, { maxLength: 6 }), (ranges) => {
        const once = prefersOpenMetrics(ranges.join(","));
        assert.equal(prefersOpenMetrics([...ranges].reverse().join(" , ")), once);
      }),
      propertyOptions(),
    );
  });

  it("names the content type OpenMetrics 1.0 requires", () => {
    assert.equal(
      OPENMETRICS_CONTENT_TYPE,
      "application/openmetrics-text; version=1.0.0; charset=utf-8",
    );
  });
});

describe("canonicalNumber", () => {
  it("writes the specification's examples as it lists them", () => {
    const cases: [number, string][] = [
      [0, "0.0"],
      [0.001, "0.001"],
      [0.002, "0.002"],
      [0.01, "0.01"],
      [0.1, "0.1"],
      [0.9, "0.9"],
      [0.95, "0.95"],
      [0.99, "0.99"],
      [0.999, "0.999"],
      [1, "1.0"],
      [1.7, "1.7"],
      [10, "10.0"],
      [1e-10, "1e-10"],
      [1e-9, "1e-09"],
      [1e-5, "1e-05"],
      [0.0001, "0.0001"],
      [100000, "100000.0"],
      [1e6, "1e+06"],
      [1e10, "1e+10"],
      [1e23, "1e+23"],
      [1.1e23, "1.1e+23"],
      [0.005, "0.005"],
      [2.5, "2.5"],
      [-1.5, "-1.5"],
      [1e300, "1e+300"],
      [Infinity, "+Inf"],
      [-Infinity, "-Inf"],
      [NaN, "NaN"],
    ];
    for (const [value, expected] of cases) {
      assert.equal(canonicalNumber(value), expected, `${value}`);
    }
  });

  it("reads back as the same number, with a point or an exponent (property)", () => {
    fc.assert(
      fc.property(fc.double(), (value) => {
        const text = canonicalNumber(value);
        assert.match(text, /^(?:\+Inf|-Inf|NaN|-?\d+\.\d+|-?\d(?:\.\d+)?e[-+]\d{2,3})$/);
        const back = Number(text.replace("Inf", "Infinity"));
        assert.ok(Object.is(back, value) || (value === 0 && back === 0), `${value}: ${text}`);
      }),
      propertyOptions(),
    );
  });
});

// A family of the text format, as a generator writes it, with the samples Prometheus reads of it.
interface TextFamily {
  readonly name: string;
  readonly type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  readonly help: string | null;
  readonly lines: string[];
  readonly samples: Sample[];
}

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  /** Milliseconds, as the text format has them. */
  readonly timestamp?: bigint;
}

const escapeLabel = (v: string) =>
  v.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
const escapeHelp = (v: string) => v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");

// The ways the text format writes a number (Go's ParseFloat reads them all).
function numberText(value: number, style: number): string {
  if (Number.isNaN(value)) return ["NaN", "nan", "NaN"][style % 3];
  if (value === Infinity) return ["+Inf", "Inf", "+inf"][style % 3];
  if (value === -Infinity) return ["-Inf", "-inf", "-Inf"][style % 3];
  if (style % 3 === 1 && Number.isInteger(value) && Math.abs(value) < 1e15) return `${value}.0`;
  if (style % 3 === 2) return value.toExponential();
  return String(value);
}

const labelSet = fc.dictionary(
  fc.constantFrom("a", "b", "_c", "method", "x9"),
  fc.string({ unit: "binary", maxLength: 6 }),
  { maxKeys: 3 },
);
const labelSets = fc.uniqueArray(labelSet, {
  minLength: 1,
  maxLength: 3,
  selector: (l) => JSON.stringify(Object.entries(l).sort()),
});
const style = fc.nat(8);
const timestamp = fc.option(fc.bigInt({ min: -(2n ** 50n), max: 2n ** 50n }), { nil: undefined });

function sampleLine(
  name: string,
  labels: Readonly<Record<string, string>>,
  value: string,
  ts: bigint | undefined,
  layout: number,
): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  // The text format allows blanks between tokens and a comma after the last label.
  const gap = layout % 4 === 3 ? " \t" : " ";
  const body = pairs.length === 0 && layout % 2 === 0
    ? ""
    : `{${pairs.join(",")}${layout % 5 === 4 && pairs.length > 0 ? "," : ""}}`;
  return `${name}${layout % 7 === 6 ? " " : ""}${body}${gap}${value}${
    ts === undefined ? "" : `${gap}${ts}`
  }`;
}

function textFamily(name: string, type: TextFamily["type"]): fc.Arbitrary<TextFamily> {
  const help = fc.option(fc.string({ unit: "binary", maxLength: 12 }), { nil: null });
  const points = labelSets.chain((sets) =>
    fc.tuple(
      ...sets.map((labels) =>
        fc.record({
          labels: fc.constant(labels),
          value: type === "counter" ? fc.double({ min: 0, noNaN: true }) : fc.double(),
          bounds: fc.uniqueArray(fc.double({ noNaN: true, noDefaultInfinity: true }), {
            maxLength: 4,
          }).map((b) => b.sort((x, y) => x - y)),
          counts: fc.array(fc.nat(1000), { minLength: 5, maxLength: 5 }),
          sum: fc.double({ noNaN: true }),
          ts: timestamp,
          style,
          layout: fc.nat(1000),
        })
      ),
    )
  );
  return fc.tuple(help, points).map(([help, points]) => {
    const lines: string[] = [];
    const samples: Sample[] = [];
    if (help !== null) lines.push(`# HELP ${name} ${escapeHelp(help)}`);
    lines.push(`# TYPE ${name} ${type}`);
    const write = (
      sample: string,
      labels: Record<string, string>,
      value: number,
      p: (typeof points)[number],
      valueText = numberText(value, p.style),
    ) => {
      lines.push(sampleLine(sample, labels, valueText, p.ts, p.layout));
      samples.push({
        name: sample,
        labels,
        value,
        ...(p.ts === undefined ? {} : { timestamp: p.ts }),
      });
    };
    for (const p of points) {
      if (type === "histogram" || type === "summary") {
        const counts = [...p.counts].sort((x, y) => x - y);
        const bound = type === "histogram" ? "le" : "quantile";
        const at = [
          ...new Set(
            type === "histogram"
              ? [...p.bounds, Infinity]
              : p.bounds.map((b) => Math.abs(b) / (1 + Math.abs(b))),
          ),
        ];
        // The +Inf bucket's count, the last.
        const total = counts[Math.max(at.length - 1, 0)];
        if (p.style % 2 === 0) write(`${name}_count`, p.labels, total, p);
        if (p.style % 2 === 0) write(`${name}_sum`, p.labels, p.sum, p);
        at.forEach((b, i) => {
          const labels = { ...p.labels, [bound]: b === Infinity ? "+Inf" : String(b) };
          write(type === "histogram" ? `${name}_bucket` : name, labels, counts[i], p);
        });
        if (p.style % 2 === 1) write(`${name}_count`, p.labels, total, p);
        if (p.style % 2 === 1) write(`${name}_sum`, p.labels, p.sum, p);
      } else {
        write(name, p.labels, p.value, p);
      }
    }
    return { name, type, help, lines, samples };
  });
}

// A text exposition of `families`, with the comments and blank lines the text format allows.
function exposition(families: readonly TextFamily[], noise: number): string {
  const lines: string[] = [];
  families.forEach((family, i) => {
    if ((noise >> i) % 2 === 1) lines.push("# a comment, which OpenMetrics has no place for", "");
    lines.push(...family.lines);
  });
  return lines.join("\n") + "\n";
}

const TYPES = ["counter", "gauge", "histogram", "summary", "untyped"] as const;

// Families whose names cannot clash: each its own stem, a unit word perhaps, `_total` on counters.
const distinctFamilies = fc.array(
  fc.tuple(fc.constantFrom(...TYPES), fc.constantFrom("", "_seconds", "_bytes", "_per_second")),
  { maxLength: 5 },
).chain((kinds) =>
  fc.tuple(
    ...kinds.map(([type, unit], i) =>
      textFamily(`f${i}_x${unit}${type === "counter" ? "_total" : ""}`, type)
    ),
  )
);

// Families named so that OpenMetrics' names clash: `a` as a gauge, `a_total` as a counter, etc.
const clashingFamilies = fc.uniqueArray(
  fc.tuple(
    fc.constantFrom(
      "a",
      "a_total",
      "a_count",
      "a_sum",
      "a_bucket",
      "a_created",
      "a_total_total",
      "b_seconds",
      "b_seconds_total",
      "b",
      "b_total",
    ),
    fc.constantFrom(...TYPES),
  ),
  { maxLength: 6, selector: ([name]) => name },
).chain((kinds) => fc.tuple(...kinds.map(([name, type]) => textFamily(name, type))));

function num(text: string): number {
  const lower = text.toLowerCase().replace(/^\+/, "");
  if (lower === "nan") return NaN;
  if (lower === "inf" || lower === "infinity") return Infinity;
  if (lower === "-inf" || lower === "-infinity") return -Infinity;
  return Number(text);
}

// Seconds, as OpenMetrics writes them, in milliseconds: exact, or undefined when not whole ms.
function millis(seconds: string): bigint | undefined {
  const match = /^([-+]?)(\d*)(?:\.(\d*))?$/.exec(seconds);
  if (match === null) return undefined;
  const fraction = match[3] ?? "";
  if (fraction.length > 3 && !/^0*$/.test(fraction.slice(3))) return undefined;
  const ms = BigInt(`${match[2] || "0"}${fraction.slice(0, 3).padEnd(3, "0")}`);
  return match[1] === "-" ? -ms : ms;
}

// A sample as a key: label values of `le` and `quantile` and the value compared as numbers.
function key(s: Sample): string {
  const labels = Object.entries(s.labels).map(([k, v]) =>
    k === "le" || k === "quantile" ? [k, String(num(v))] : [k, v]
  ).sort();
  return JSON.stringify([s.name, labels, String(s.value), String(s.timestamp)]);
}

function omSamples(families: readonly OmFamily[]): Sample[] {
  return families.flatMap((f) =>
    f.samples.map((s) => {
      const ts = s.timestamp === undefined ? undefined : millis(s.timestamp);
      assert.ok(s.timestamp === undefined || ts !== undefined, `timestamp ${s.timestamp}`);
      return {
        name: s.name,
        labels: s.labels,
        value: num(s.value),
        ...(ts === undefined ? {} : { timestamp: ts }),
      };
    })
  );
}

describe("toOpenMetrics", () => {
  it("writes OpenTelemetry's text as OpenMetrics 1.0: counters' family, UNIT, HELP, # EOF", () => {
    const text = [
      "# HELP http_server_request_duration_seconds Duration of HTTP server requests.",
      "# TYPE http_server_request_duration_seconds histogram",
      'http_server_request_duration_seconds_count{http_route="/a",otel_scope_name="thaw"} 2',
      'http_server_request_duration_seconds_sum{http_route="/a",otel_scope_name="thaw"} 0.75',
      'http_server_request_duration_seconds_bucket{http_route="/a",otel_scope_name="thaw",le="0.5"} 1',
      'http_server_request_duration_seconds_bucket{http_route="/a",otel_scope_name="thaw",le="1"} 2',
      'http_server_request_duration_seconds_bucket{http_route="/a",otel_scope_name="thaw",le="+Inf"} 2',
      '# HELP orders_placed_total Orders "placed"\\\\ \\nnow.',
      "# TYPE orders_placed_total counter",
      'orders_placed_total{a="x\\"y\\\\z\\nw",otel_scope_name="shop"} 3',
      "# HELP cpu_seconds_total description missing",
      "# TYPE cpu_seconds_total counter",
      'cpu_seconds_total{otel_scope_name="shop"} 0.5',
      "# HELP queue_bytes description missing",
      "# TYPE queue_bytes gauge",
      'queue_bytes{otel_scope_name="shop"} 1e+21',
      "# HELP rate_per_second description missing",
      "# TYPE rate_per_second gauge",
      "rate_per_second 5e-7",
      "",
    ].join("\n");
    assert.equal(
      toOpenMetrics(text),
      [
        "# TYPE http_server_request_duration_seconds histogram",
        "# UNIT http_server_request_duration_seconds seconds",
        "# HELP http_server_request_duration_seconds Duration of HTTP server requests.",
        'http_server_request_duration_seconds_count{http_route="/a",otel_scope_name="thaw"} 2',
        'http_server_request_duration_seconds_sum{http_route="/a",otel_scope_name="thaw"} 0.75',
        'http_server_request_duration_seconds_bucket{http_route="/a",otel_scope_name="thaw",le="0.5"} 1',
        'http_server_request_duration_seconds_bucket{http_route="/a",otel_scope_name="thaw",le="1.0"} 2',
        'http_server_request_duration_seconds_bucket{http_route="/a",otel_scope_name="thaw",le="+Inf"} 2',
        "# TYPE orders_placed counter",
        '# HELP orders_placed Orders \\"placed\\"\\\\ \\nnow.',
        'orders_placed_total{a="x\\"y\\\\z\\nw",otel_scope_name="shop"} 3',
        "# TYPE cpu_seconds counter",
        "# UNIT cpu_seconds seconds",
        "# HELP cpu_seconds description missing",
        'cpu_seconds_total{otel_scope_name="shop"} 0.5',
        "# TYPE queue_bytes gauge",
        "# UNIT queue_bytes bytes",
        "# HELP queue_bytes description missing",
        'queue_bytes{otel_scope_name="shop"} 1e+21',
        "# TYPE rate_per_second gauge",
        "# UNIT rate_per_second per_second",
        "# HELP rate_per_second description missing",
        "rate_per_second 5e-7",
        "# EOF",
        "",
      ].join("\n"),
    );
  });

  it("is # EOF alone for an empty exposition", () => {
    assert.equal(toOpenMetrics(""), "# EOF\n");
    assert.equal(toOpenMetrics("\n# only a comment\n"), "# EOF\n");
  });

  it("writes timestamps in seconds, untyped samples as unknown, no comment nor blank line", () => {
    const text = [
      "# a comment",
      "# TYPE g gauge",
      "g 1 1520879607789",
      "",
      'loose{a="1"} 2 -1500',
      'loose{a="2"} 3 7',
      "# TYPE u untyped",
      "u 4 0",
      "# TYPE nameless_total counter",
      "nameless_total 5",
    ].join("\n");
    assert.equal(
      toOpenMetrics(text),
      [
        "# TYPE g gauge",
        "g 1 1520879607.789",
        "# TYPE loose unknown",
        'loose{a="1"} 2 -1.5',
        'loose{a="2"} 3 0.007',
        "# TYPE u unknown",
        "u 4 0",
        "# TYPE nameless counter",
        "nameless_total 5",
        "# EOF",
        "",
      ].join("\n"),
    );
  });

  it("keeps a counter whose family name another family has as unknown, under its own name", () => {
    const text = [
      "# TYPE jobs gauge",
      "jobs 1",
      "# TYPE jobs_total counter",
      "jobs_total 2",
      "# TYPE hits counter",
      "hits 3",
    ].join("\n");
    assert.equal(
      toOpenMetrics(text),
      [
        "# TYPE jobs gauge",
        "jobs 1",
        "# TYPE jobs_total unknown",
        "jobs_total 2",
        // Not `_total`: OpenMetrics' counters are; its samples keep their name.
        "# TYPE hits unknown",
        "hits 3",
        "# EOF",
        "",
      ].join("\n"),
    );
  });

  it("gives nothing, so that the text format is served, for a clash no renaming resolves", () => {
    const histogram = [
      "# TYPE wait histogram",
      "wait_count 1",
      "wait_sum 2",
      'wait_bucket{le="+Inf"} 1',
    ];
    const gauge = ["# TYPE wait_count gauge", 'wait_count{a="1"} 7'];
    assert.equal(toOpenMetrics([...histogram, ...gauge].join("\n")), undefined);
    assert.equal(toOpenMetrics([...gauge, ...histogram].join("\n")), undefined);
  });

  it("names a counter after the other families, whatever their order", () => {
    const counter = ["# TYPE lat_total counter", "lat_total 1"];
    const histogram = [
      "# TYPE lat histogram",
      "lat_count 1",
      "lat_sum 2",
      'lat_bucket{le="+Inf"} 1',
    ];
    for (const text of [[...counter, ...histogram], [...histogram, ...counter]]) {
      const read = readOpenMetrics(toOpenMetrics(text.join("\n"))!);
      assert.deepEqual(
        read.map((f) => [f.name, f.type]).sort(),
        [["lat", "histogram"], ["lat_total", "unknown"]],
      );
    }
  });

  it("keeps every sample, and writes only what OpenMetrics 1.0 allows (property)", () => {
    fc.assert(
      fc.property(distinctFamilies, fc.nat(), (families, noise) => {
        const om = toOpenMetrics(exposition(families, noise));
        assert.ok(om?.endsWith("# EOF\n"));
        const read = readOpenMetrics(om!);
        assert.deepEqual(
          omSamples(read).map(key),
          families.flatMap((f) => f.samples).map(key),
        );
        assert.equal(read.length, families.length);
        families.forEach((family, i) => {
          const got = read[i];
          if (family.type === "counter") {
            assert.equal(got.name, family.name.slice(0, -"_total".length));
            assert.equal(got.type, "counter");
          } else {
            assert.equal(got.name, family.name);
            assert.equal(got.type, family.type === "untyped" ? "unknown" : family.type);
          }
          const unit = /_x_?(seconds|bytes|per_second)(?:_total)?$/.exec(family.name)?.[1];
          assert.equal(got.unit, unit);
          // The text format's reader skips the blanks before a HELP's text; a carriage return
          // at its end would read as a line ending.
          const help = family.help?.replace(/^[ \t]+/, "").replace(/\r+$/, "");
          assert.equal(got.help, help === "" ? undefined : help);
        });
      }),
      propertyOptions(150),
    );
  });

  it("keeps every sample or gives nothing, whatever the families' order (property)", () => {
    fc.assert(
      fc.property(
        clashingFamilies.chain((families) =>
          fc.tuple(
            fc.constant(families),
            fc.shuffledSubarray(families, { minLength: families.length }),
          )
        ),
        fc.nat(),
        ([families, shuffled], noise) => {
          const om = toOpenMetrics(exposition(families, noise));
          // Whether OpenMetrics can say it all depends on the names, not on their order.
          assert.equal(om === undefined, toOpenMetrics(exposition(shuffled, noise)) === undefined);
          if (om === undefined) return;
          const read = readOpenMetrics(om);
          assert.deepEqual(
            omSamples(read).map(key).sort(),
            families.flatMap((f) => f.samples).map(key).sort(),
          );
        },
      ),
      propertyOptions(150),
    );
  });
});
