// An OpenMetrics 1.0 text reader written from the specification's ABNF and rules, apart from the
// converter under test, so that a test asserts what the specification says rather than what the
// converter does. It reads strictly: what Prometheus's own parser lets through (a bare `"` in a
// HELP, a family name twice) it refuses too, since the specification does.
import assert from "node:assert/strict";

/** A sample line, its label values unescaped. */
export interface OmSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: string;
  readonly timestamp?: string;
}

/** A MetricFamily: its metadata and samples, in the order written. */
export interface OmFamily {
  readonly name: string;
  readonly type: string;
  readonly unit?: string;
  readonly help?: string;
  readonly samples: OmSample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = "[a-zA-Z_][a-zA-Z0-9_]*";
// escaped-string: no newline, no bare `"` or `\`; `\` before anything but a newline.
const ESCAPED = '(?:[^"\\\\\\n]|\\\\[^\\n])*';
const REAL = "[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?";
const NUMBER = `(?:${REAL}|[-+]?(?:[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)|[nN][aA][nN])`;
const TYPES = [
  "counter",
  "gauge",
  "histogram",
  "gaugehistogram",
  "stateset",
  "info",
  "summary",
  "unknown",
];
// The sample names a family of each type may write, by suffix.
const SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  counter: ["_total", "_created"],
  gauge: [""],
  histogram: ["_bucket", "_count", "_sum", "_created"],
  gaugehistogram: ["_bucket", "_gcount", "_gsum"],
  stateset: [""],
  info: ["_info"],
  summary: ["", "_count", "_sum", "_created"],
  unknown: [""],
};

/** The names a family of `type` called `name` takes: its own, and those its samples may have. */
function familyNames(name: string, type: string): string[] {
  return [...new Set([name, ...SUFFIXES[type].map((suffix) => `${name}${suffix}`)])];
}

/** An escaped-string's value: a backslash before another character is itself, as it says. */
export function unescapeOm(text: string): string {
  return text.replace(
    /\\(.)/gs,
    (escape, c: string) => (c === "n" ? "\n" : c === "\\" || c === '"' ? c : escape),
  );
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = Object.create(null);
  if (text === "") return labels;
  const pair = new RegExp(`^(${LABEL})="(${ESCAPED})"(,|$)`, "su");
  let rest = text;
  while (rest !== "") {
    const match = pair.exec(rest);
    assert.ok(match, `labels not as the ABNF has them: ${JSON.stringify(line)}`);
    assert.ok(!Object.hasOwn(labels, match[1]), `label ${match[1]} twice: ${JSON.stringify(line)}`);
    labels[match[1]] = unescapeOm(match[2]);
    rest = rest.slice(match[0].length);
    assert.ok(match[3] === "" || rest !== "", `a trailing comma: ${JSON.stringify(line)}`);
  }
  return labels;
}

// Canonical numbers (the `le` and `quantile` values): Go's %g of a float, `.0` added where it
// would read as an integer.
const CANONICAL = /^(?:\+Inf|-Inf|NaN|-?\d+\.\d+|-?\d(?:\.\d+)?e[-+]\d{2,3})$/;

/**
 * The families of an OpenMetrics 1.0 text exposition, failing on anything the specification
 * refuses: a line outside the ABNF, a line ending CRLF, an empty line, a comment, no `# EOF` at the end, a family
 * named twice or whose sample names another's could be, metadata after samples or twice or out of
 * TYPE, UNIT, HELP order, a UNIT that does not end the name, a sample its family cannot have,
 * interleaved metrics, a histogram's bucket without a canonical `le`, out of order, or without
 * `+Inf`, and a `_count` unlike the `+Inf` bucket.
 */
export function readOpenMetrics(text: string): OmFamily[] {
  assert.ok(
    text.endsWith("# EOF\n"),
    `does not end with # EOF: ${JSON.stringify(text.slice(-80))}`,
  );
  assert.ok(!text.includes("\r\n"), "a line ending in a carriage return");
  const lines = text.slice(0, -1).split("\n");
  assert.equal(lines.pop(), "# EOF");
  const families: OmFamily[] = [];
  const taken = new Map<string, string>();
  // `s`: a label value or a HELP may hold a carriage return or U+2028.
  const descriptor = new RegExp(`^# (TYPE|UNIT|HELP) (${NAME}) (.*)$`, "su");
  const sample = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (${NUMBER})(?: (${REAL}))?$`, "su");
  let current: (OmFamily & { type: string; unit?: string; help?: string }) | undefined;
  const open = (name: string, type: string) => {
    for (const taking of familyNames(name, type)) {
      const other = taken.get(taking);
      assert.ok(other === undefined, `family ${name} (${type}) and ${other} both take ${taking}`);
    }
    current = { name, type, samples: [] };
    families.push(current);
    // The type may still come in a TYPE line: the names are taken as the family is closed.
  };
  const close = () => {
    if (current === undefined) return;
    for (const taking of familyNames(current.name, current.type)) {
      const other = taken.get(taking);
      assert.ok(
        other === undefined,
        `family ${current.name} (${current.type}) and ${other} both take ${taking}`,
      );
      taken.set(taking, current.name);
    }
  };
  for (const line of lines) {
    assert.notEqual(line, "", "an empty line");
    const meta = descriptor.exec(line);
    if (meta !== null) {
      const [, kind, name, value] = meta;
      const order = ["TYPE", "UNIT", "HELP"];
      const fresh = current === undefined || current.name !== name || current.samples.length > 0 ||
        (kind === "TYPE" && (current.unit !== undefined || current.help !== undefined)) ||
        (kind === "UNIT" && current.help !== undefined);
      if (fresh) {
        close();
        assert.ok(
          !families.some((f) => f.name === name),
          `family ${name} twice, or its metadata after its samples or out of order`,
        );
        open(name, "unknown");
      }
      const family = current!;
      assert.ok(order.includes(kind));
      if (kind === "TYPE") {
        assert.ok(TYPES.includes(value), `unknown type: ${JSON.stringify(line)}`);
        assert.ok(!("typed" in family), `TYPE twice for ${name}`);
        Object.assign(family, { type: value, typed: true });
      } else if (kind === "UNIT") {
        assert.match(value, /^[a-zA-Z0-9_:]*$/, `a unit outside the ABNF: ${JSON.stringify(line)}`);
        assert.equal(family.unit, undefined, `UNIT twice for ${name}`);
        assert.ok(
          value === "" || (name.endsWith(`_${value}`) && name.length > value.length + 1),
          `unit ${value} does not end the name ${name}`,
        );
        Object.assign(family, { unit: value });
      } else {
        assert.match(value, new RegExp(`^${ESCAPED}$`, "su"), `HELP not escaped: ${line}`);
        assert.equal(family.help, undefined, `HELP twice for ${name}`);
        Object.assign(family, { help: unescapeOm(value) });
      }
      continue;
    }
    assert.ok(!line.startsWith("#"), `a comment: ${JSON.stringify(line)}`);
    const match = sample.exec(line);
    assert.ok(match, `not a sample line: ${JSON.stringify(line)}`);
    const [, name, labels, value, timestamp] = match;
    const belongs = current !== undefined &&
      SUFFIXES[current.type].some((suffix) => `${current!.name}${suffix}` === name);
    if (!belongs) {
      close();
      assert.ok(!families.some((f) => f.name === name), `family ${name} twice`);
      open(name, "unknown");
    }
    current!.samples.push({
      name,
      labels: parseLabels(labels ?? "", line),
      value,
      ...(timestamp === undefined ? {} : { timestamp }),
    });
  }
  close();
  for (const family of families) checkFamily(family);
  return families;
}

function metricKey(labels: Readonly<Record<string, string>>, without: string): string {
  return JSON.stringify(Object.entries(labels).filter(([k]) => k !== without).sort());
}

function checkFamily(family: OmFamily): void {
  // Metrics not interleaved: a metric's samples are together.
  const point = family.type === "histogram"
    ? "le"
    : family.type === "summary"
    ? "quantile"
    : family.type === "stateset"
    ? family.name
    : "";
  const done = new Set<string>();
  let last: string | undefined;
  for (const s of family.samples) {
    const key = metricKey(s.labels, point);
    if (key !== last) {
      assert.ok(!done.has(key), `metric ${key} of ${family.name} interleaved`);
      if (last !== undefined) done.add(last);
      last = key;
    }
  }
  if (family.type !== "histogram") return;
  const byMetric = new Map<string, OmSample[]>();
  for (const s of family.samples) {
    const key = metricKey(s.labels, "le");
    byMetric.set(key, [...byMetric.get(key) ?? [], s]);
  }
  for (const [key, samples] of byMetric) {
    const buckets = samples.filter((s) => s.name === `${family.name}_bucket`);
    let previous = -Infinity;
    for (const bucket of buckets) {
      const le = bucket.labels.le;
      assert.ok(le !== undefined, `a bucket of ${family.name} without le`);
      assert.match(le, CANONICAL, `le="${le}" of ${family.name} is no canonical number`);
      assert.ok(Number(le.replace("Inf", "Infinity")) > previous, `buckets of ${key} out of order`);
      previous = Number(le.replace("Inf", "Infinity"));
    }
    const inf = buckets.find((b) => b.labels.le === "+Inf");
    assert.ok(inf !== undefined, `no +Inf bucket in ${family.name}${key}`);
    for (const s of samples) {
      if (s.name !== `${family.name}_bucket`) assert.equal(s.labels.le, undefined);
    }
    const count = samples.find((s) => s.name === `${family.name}_count`);
    const sum = samples.find((s) => s.name === `${family.name}_sum`);
    assert.equal(count !== undefined, sum !== undefined, `_count and _sum of ${family.name}`);
    if (count !== undefined) assert.equal(Number(count.value), Number(inf.value));
  }
}
