// The sample lines of a scrape of /actuator/prometheus, as Prometheus reads them, for the tests
// of the series.
import assert from "node:assert/strict";

/** One sample: its name, its labels (values unescaped), its value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The text format's sample lines (comments and blank lines left out). */
export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = Object.create(null);
    const pairs = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
    for (const [, key, value] of (match[2] ?? "").matchAll(pairs)) {
      labels[key] = value.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    out.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return out;
}

/** The value of the sample `name` whose labels include `labels`, if there is one. */
export function sampleValue(
  all: readonly Sample[],
  name: string,
  labels: Record<string, string>,
): number | undefined {
  return all.find((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  )?.value;
}

/** The configuration that exposes `/actuator/prometheus`. */
export const PROMETHEUS = {
  management: { endpoints: { web: { exposure: { include: "prometheus" } } } },
};

/** The text of `GET /actuator/prometheus`, which must answer 200. */
export async function scrape(
  app: { fetch(r: Request): Response | Promise<Response> },
): Promise<string> {
  const res = await app.fetch(new Request("http://localhost/actuator/prometheus"));
  assert.equal(res.status, 200);
  return await res.text();
}
