import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { metrics } from "@opentelemetry/api";
import { bootstrap, GetMapping, PathVariable, PostMapping, RestController } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { propertyOptions } from "../property.ts";
import { readOpenMetrics } from "./openmetrics_check.ts";
import { type Sample, samples } from "./prometheus_samples.ts";

@RestController()
class PromItemController {
  @GetMapping("/prom/items/{id}", PathVariable("id", Number))
  get(id: number) {
    return { id };
  }

  @PostMapping("/prom/items")
  create(): string {
    return "made";
  }

  @GetMapping("/prom/fail")
  fail(): string {
    throw new Error("broken");
  }

  @GetMapping("/prom/orders/{id:\\d+}/lines/{line:[a-z]{2,3}}", PathVariable("id", Number))
  order(id: number) {
    return { id };
  }
}

const TEMPLATES = ["/prom/items/{id}", "/prom/items", "/prom/fail"];

function exposing(include: string) {
  return { management: { endpoints: { web: { exposure: { include } } } } };
}

async function promApp() {
  return await bootstrap({
    controllers: [PromItemController],
    config: exposing("prometheus"),
    actuator: actuator(),
    logger: { error: () => {} },
  });
}

async function scrape(app: { fetch(r: Request): Response | Promise<Response> }) {
  const res = await app.fetch(new Request("http://localhost/actuator/prometheus"));
  assert.equal(res.status, 200);
  return { type: res.headers.get("content-type"), samples: samples(await res.text()) };
}

// What Prometheus 2.42 sends when it scrapes (its default scrape protocols).
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75," +
  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

function scrapeAs(app: { fetch(r: Request): Response | Promise<Response> }, accept?: string) {
  return app.fetch(
    new Request("http://localhost/actuator/prometheus", {
      headers: accept === undefined ? {} : { accept },
    }),
  );
}

// A sample as a key, `le` compared as a number: OpenMetrics writes `1` as `1.0`.
function sampleKey(s: Sample): string {
  const labels = Object.entries(s.labels).map(([k, v]) =>
    k === "le" ? [k, String(Number(v.replace("Inf", "Infinity")))] : [k, v]
  ).sort();
  return JSON.stringify([s.name, labels, s.value]);
}

function count(all: Sample[], labels: Record<string, string>): number {
  return all.find((s) =>
    s.name === "http_server_request_duration_seconds_count" &&
    Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  )?.value ?? 0;
}

// What Prometheus's text parser refuses that a serializer can make: a family twice, a label twice
// in one sample, one series twice.
function assertValidExposition(text: string): void {
  const families = new Set<string>();
  const series = new Set<string>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) /.exec(line);
    if (type !== null) {
      assert.ok(!families.has(type[1]), `family ${type[1]} twice`);
      families.add(type[1]);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const sample = samples(line)[0];
    const names = [...line.matchAll(/[{,]([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1]);
    assert.equal(new Set(names).size, names.length, `a label twice: ${line}`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    assert.ok(!series.has(key), `series twice: ${line}`);
    series.add(key);
  }
}

describe("/actuator/prometheus", () => {
  it("is not served unless exposed", async () => {
    const app = await bootstrap({ actuator: actuator() });
    const res = await app.fetch(new Request("http://localhost/actuator/prometheus"));
    assert.equal(res.status, 404);
  });

  it("counts each request by method, route template and status, in seconds", async () => {
    const app = await promApp();
    const before = (await scrape(app)).samples;
    const send = (method: string, path: string) =>
      app.fetch(new Request(`http://localhost${path}`, { method }));
    await send("GET", "/prom/items/1");
    await send("GET", "/prom/items/2");
    await send("POST", "/prom/items");
    await send("GET", "/prom/fail");
    const { type, samples: after } = await scrape(app);
    assert.equal(type, "text/plain; version=0.0.4; charset=utf-8");
    const delta = (labels: Record<string, string>) => count(after, labels) - count(before, labels);
    assert.equal(
      delta({
        http_request_method: "GET",
        http_route: "/prom/items/{id}",
        http_response_status_code: "200",
      }),
      2,
    );
    assert.equal(
      delta({
        http_request_method: "POST",
        http_route: "/prom/items",
        http_response_status_code: "200",
      }),
      1,
    );
    assert.equal(
      delta({ http_route: "/prom/fail", http_response_status_code: "500", error_type: "500" }),
      1,
    );
    const bucket = after.find((s) =>
      s.name === "http_server_request_duration_seconds_bucket" &&
      s.labels.http_route === "/prom/items/{id}" && s.labels.le === "+Inf"
    );
    assert.ok(bucket !== undefined && bucket.value >= 2);
  });

  it("labels a route with a regex by its template as OpenAPI writes it: {id}, no regex", async () => {
    const app = await promApp();
    const before = (await scrape(app)).samples;
    assert.equal(
      (await app.fetch(new Request("http://localhost/prom/orders/7/lines/ab"))).status,
      200,
    );
    const after = (await scrape(app)).samples;
    const route = "/prom/orders/{id}/lines/{line}";
    assert.equal(count(after, { http_route: route }) - count(before, { http_route: route }), 1);
    assert.ok(!after.some((s) => s.labels.http_route?.includes(":")), "no regex in a label");
    const { openApiDocument } = await import("../../openapi.ts");
    const documented = Object.keys((await openApiDocument(app)).paths as object);
    assert.ok(documented.includes(route), documented.join(", "));
  });

  it("counts Thaw's own answers under fixed routes: 404, 405, 501, OPTIONS", async () => {
    const app = await promApp();
    const before = (await scrape(app)).samples;
    await app.fetch(new Request("http://localhost/prom/nothing/here"));
    await app.fetch(new Request("http://localhost/prom/items/1", { method: "DELETE" }));
    await app.fetch(new Request("http://localhost/prom/items/1", { method: "OPTIONS" }));
    await app.fetch(new Request("http://localhost/prom/items/1", { method: "BREW" }));
    const after = (await scrape(app)).samples;
    const delta = (labels: Record<string, string>) => count(after, labels) - count(before, labels);
    assert.equal(delta({ http_route: "NOT_FOUND", http_response_status_code: "404" }), 1);
    assert.equal(
      delta({
        http_request_method: "DELETE",
        http_route: "UNKNOWN",
        http_response_status_code: "405",
      }),
      1,
    );
    assert.equal(
      delta({
        http_request_method: "OPTIONS",
        http_route: "UNKNOWN",
        http_response_status_code: "204",
      }),
      1,
    );
    // Bun's Request turns a method it does not know into GET: there, no 501 is made.
    const kept = new Request("http://localhost/", { method: "BREW" }).method === "BREW";
    assert.equal(
      delta({
        http_request_method: "_OTHER",
        http_route: "UNKNOWN",
        http_response_status_code: "501",
      }),
      kept ? 1 : 0,
    );
  });

  it("shows the app's own meters made through OpenTelemetry's API, with no set-up", async () => {
    const app = await promApp();
    const name = `orders.created.t${Date.now()}`;
    metrics.getMeter("shop").createCounter(name, { description: "Orders placed." }).add(3);
    const found = (await scrape(app)).samples.find((s) =>
      s.name === `${name.replaceAll(".", "_")}_total`
    );
    assert.equal(found?.value, 3);
  });

  it("keeps attributes named like Object's own members (constructor, toString, __proto__)", async () => {
    const app = await promApp();
    const name = `proto.keys.t${Date.now()}`;
    metrics.getMeter("shop").createCounter(name).add(1, {
      constructor: "a",
      toString: "b",
      ["__proto__"]: "c",
      ok: "z",
    });
    const found = (await scrape(app)).samples.find((s) =>
      s.name === `${name.replaceAll(".", "_")}_total`
    );
    assert.deepEqual(
      { ...found?.labels },
      // `__proto__` as OpenTelemetry sanitizes it: a leading `__` is Prometheus's own.
      { constructor: "a", toString: "b", _proto_: "c", ok: "z", otel_scope_name: "shop" },
    );
  });

  it("loses no family to OpenMetrics when a counter's name is another family's, in either order", async () => {
    const app = await promApp();
    for (const [first, second] of [["counter", "histogram"], ["histogram", "counter"]]) {
      const base = `clash.${first}.t${Date.now()}`;
      const meter = metrics.getMeter(`clash-${first}`);
      const make = (kind: string) =>
        kind === "counter"
          ? meter.createCounter(`${base}.total`).add(1)
          : meter.createHistogram(base).record(1);
      make(first);
      make(second);
      const family = base.replaceAll(".", "_");
      const text = samples(await (await scrapeAs(app)).text())
        .filter((s) => s.name.startsWith(family)).map(sampleKey).sort();
      const om = samples(
        (await (await scrapeAs(app, PROMETHEUS_ACCEPT)).text()).replace(/# EOF\n$/, ""),
      )
        .filter((s) => s.name.startsWith(family)).map(sampleKey).sort();
      assert.ok(
        text.some((k) => k.startsWith(JSON.stringify([`${family}_bucket`]).slice(0, -1))),
        `${first} first: no histogram`,
      );
      assert.deepEqual(om, text, `${first} first`);
    }
  });

  it("answers OpenMetrics 1.0 when the Accept prefers it, Prometheus's text otherwise", async () => {
    const app = await promApp();
    await app.fetch(new Request("http://localhost/prom/items/1"));
    const name = `om.busy.t${Date.now()}`;
    metrics.getMeter("shop").createCounter(name, { unit: "s", description: 'Time "busy".' }).add(2);
    const family = `${name.replaceAll(".", "_")}_seconds`;

    const plain = await scrapeAs(app);
    assert.equal(plain.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    assert.match(plain.headers.get("vary") ?? "", /\baccept\b/i);
    const text = await plain.text();
    assert.match(text, new RegExp(`^# TYPE ${family}_total counter$`, "m"));
    assert.doesNotMatch(text, /# EOF/);

    const open = await scrapeAs(app, PROMETHEUS_ACCEPT);
    assert.equal(
      open.headers.get("content-type"),
      "application/openmetrics-text; version=1.0.0; charset=utf-8",
    );
    assert.match(open.headers.get("vary") ?? "", /\baccept\b/i);
    assert.equal(open.headers.get("cache-control"), "no-store");
    const om = await open.text();
    const families = readOpenMetrics(om);
    const counter = families.find((f) => f.name === family);
    assert.deepEqual(
      { type: counter?.type, unit: counter?.unit, help: counter?.help },
      { type: "counter", unit: "seconds", help: 'Time "busy".' },
    );
    assert.deepEqual(counter?.samples.map((s) => [s.name, s.value]), [[`${family}_total`, "2"]]);
    const duration = families.find((f) => f.name === "http_server_request_duration_seconds");
    assert.deepEqual([duration?.type, duration?.unit], ["histogram", "seconds"]);
    assert.ok(om.endsWith("\n# EOF\n"));
    // The same samples, but those of the scrapes themselves (each is a request, counted) and the
    // process's, read anew at each scrape.
    const mine = (all: Sample[]) =>
      all.filter((s) =>
        s.labels.http_route !== "/actuator/prometheus" && !/^(process|v8js|nodejs)_/.test(s.name)
      ).map(sampleKey).sort();
    assert.deepEqual(mine(samples(om.replace(/# EOF\n$/, ""))), mine(samples(text)));

    for (const accept of ["*/*", "text/plain", "application/openmetrics-text;version=0.0.1"]) {
      const res = await scrapeAs(app, accept);
      assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
      await res.body?.cancel();
    }
  });

  it("writes each family once, whatever names, units and kinds meters give (property)", async () => {
    const app = await promApp();
    await app.fetch(new Request("http://localhost/prom/items/1"));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("a", "b"),
        fc.constantFrom(
          "pt.wait",
          "pt_wait_seconds",
          "pt.wait.seconds",
          "pt.jobs",
          "pt.jobs_total",
          "pt-jobs",
          // Not Thaw's own `http.server.request.duration`: the registry is the process's, and a
          // gauge of that name with unit `s` would take the family from the request histogram
          // for every test after this one in the process (the clash is by design: Prometheus
          // takes a name once). prometheus_scrape_test checks a histogram of that name.
          "pt.http.server.request.duration",
        ),
        fc.constantFrom("", "s", "{job}", "By"),
        fc.constantFrom("counter", "histogram", "updown", "gauge"),
        fc.constantFrom({}, { "k.a": "1" }, { k_a: "2", "k.a": "3" }, { otel_scope_name: "x" }),
        async (meterName, name, unit, kind, attributes) => {
          const meter = metrics.getMeter(`pt-${meterName}`);
          if (kind === "counter") meter.createCounter(name, { unit }).add(1, attributes);
          else if (kind === "histogram") {
            meter.createHistogram(name, { unit }).record(1, attributes);
          } else if (kind === "updown") {
            meter.createUpDownCounter(name, { unit }).add(1, attributes);
          } else meter.createGauge(name, { unit }).record(1, attributes);
          const res = await app.fetch(new Request("http://localhost/actuator/prometheus"));
          assertValidExposition(await res.text());
          readOpenMetrics(await (await scrapeAs(app, PROMETHEUS_ACCEPT)).text());
        },
      ),
      propertyOptions(60),
    );
  });

  it("never takes a raw path or method as a label value; series stay bounded (property)", async () => {
    const app = await promApp();
    const before = new Set((await scrape(app)).samples.map((s) => JSON.stringify(s.labels)));
    const sent = new Set<string>();
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "XYZ", "get"),
        fc.oneof(
          fc.webPath(),
          fc.integer().map((n) => `/prom/items/${n}`),
          fc.string().map((s) => `/prom/${encodeURIComponent(s)}`),
        ),
        async (method, path) => {
          sent.add(path);
          const res = await app.fetch(new Request(`http://localhost${path || "/"}`, { method }));
          statuses.add(res.status);
          await res.body?.cancel();
        },
      ),
      propertyOptions(200),
    );
    const fresh = (await scrape(app)).samples.filter((s) =>
      s.name === "http_server_request_duration_seconds_count" &&
      !before.has(JSON.stringify(s.labels))
    );
    for (const sample of fresh) {
      const route = sample.labels.http_route;
      assert.ok(
        TEMPLATES.includes(route) || route === "NOT_FOUND" || route === "UNKNOWN" ||
          route === "/actuator/prometheus",
        `a route label that is no template: ${JSON.stringify(route)}`,
      );
      assert.ok(
        ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "_OTHER"].includes(
          sample.labels.http_request_method,
        ),
      );
      for (const value of Object.values(sample.labels)) {
        assert.ok(!sent.has(value) || TEMPLATES.includes(value), `raw path ${value} as a label`);
      }
    }
    // Routes (and the two fixed values) x methods x statuses.
    assert.ok(fresh.length <= (TEMPLATES.length + 3) * 8 * statuses.size);
  });
});
