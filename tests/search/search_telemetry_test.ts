// A search connection's client through OpenTelemetry's real SDK, against the real node: a CLIENT
// span per request under the caller's, the operations' histogram, a failing request with its
// error.type, nothing of a body, a query or a credential in any attribute, and no listener left
// once removed.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { Client } from "@opensearch-project/opensearch";
import { observeSearchClient } from "../../src/search/search_telemetry.ts";
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { search, SearchClient } from "../../search.ts";
import { closeSearchClient } from "./close_client.ts";
import { OPENSEARCH_URL, os } from "../migrate/search/cluster.ts";
import { CollectingReader, restoreMeterProviderAfter, valueOf } from "../metric_reader.ts";
import { freePort } from "../free_port.ts";
import { forward, serveLoopback } from "../migrate/search/loopback_server.ts";

restoreMeterProviderAfter();

describe("observeSearchClient on the real node", () => {
  const exporter = new InMemorySpanExporter();
  let reader: CollectingReader;
  const index = `thaw-telemetry-${crypto.randomUUID().slice(0, 8)}`;
  const SECRET = "s3cret-XYZ";
  const VALUE = "value-in-the-body";
  const node = new URL(OPENSEARCH_URL);

  before(() => {
    api.trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.metrics.disable();
    reader = new CollectingReader();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });
  after(async () => {
    api.trace.disable();
    api.context.disable();
    api.metrics.disable();
    await os("DELETE", `/${index}`);
  });

  it("gives each request a CLIENT span under the caller's and a duration", async () => {
    // The node takes no credentials; the header is sent, and must show nowhere.
    const client = new Client({
      node: OPENSEARCH_URL,
      headers: { "x-api-key": SECRET },
    });
    const stop = observeSearchClient(client, "catalog", api);
    try {
      exporter.reset();
      const tracer = api.trace.getTracer("test");
      await tracer.startActiveSpan("request", async (parent) => {
        await client.index({ index, id: "doc-1", body: { name: VALUE }, refresh: true });
        await client.search({ index, q: `name:${VALUE}` });
        await client.bulk({ body: [{ index: { _index: index } }, { name: VALUE }] });
        await assert.rejects(client.get({ index, id: "no-such-doc" }));
        parent.end();
      });
      const all = exporter.getFinishedSpans();
      const parent = all.find((s) => s.name === "request")!;
      const spans = all.filter((s) => s !== parent);
      assert.deepEqual(spans.map((s) => s.name), [
        `index ${index}`,
        `search ${index}`,
        "bulk",
        `get ${index}`,
      ]);
      for (const span of spans) {
        assert.equal(span.kind, api.SpanKind.CLIENT);
        assert.equal(span.parentSpanContext?.spanId, parent.spanContext().spanId);
        assert.equal(span.attributes["db.system.name"], "opensearch");
        assert.equal(span.attributes["db.client.connection.pool.name"], "catalog");
        assert.equal(span.attributes["server.address"], node.hostname);
        assert.equal(span.attributes["server.port"], Number(node.port || 80));
        const text = JSON.stringify(span.attributes);
        assert.ok(!text.includes(SECRET), text);
        assert.ok(!text.includes(VALUE), text);
        assert.ok(!text.includes("doc-1"), text);
      }
      const [indexed, searched, bulk, missing] = spans;
      assert.deepEqual(
        spans.map((s) => s.attributes["db.operation.name"]),
        ["index", "search", "bulk", "get"],
      );
      assert.equal(indexed.attributes["db.collection.name"], index);
      assert.equal(indexed.attributes["http.request.method"], "PUT");
      assert.equal(indexed.attributes["db.response.status_code"], "201");
      assert.equal(searched.attributes["db.collection.name"], index);
      assert.equal(searched.status.code, api.SpanStatusCode.UNSET);
      assert.equal(bulk.attributes["db.collection.name"], undefined);
      assert.equal(missing.status.code, api.SpanStatusCode.ERROR);
      assert.equal(missing.attributes["error.type"], "404");
      assert.equal(missing.attributes["db.response.status_code"], "404");

      const durations = await reader.points("db.client.operation.duration");
      const count = (attributes: api.Attributes) =>
        (valueOf(durations, attributes) as { count: number } | undefined)?.count;
      const own = { "db.system.name": "opensearch", "db.client.connection.pool.name": "catalog" };
      assert.equal(count({ ...own, "db.operation.name": "index" }), 1);
      for (const point of durations) {
        assert.equal(point.attributes["db.collection.name"], undefined);
      }
      assert.equal(count({ ...own, "db.operation.name": "search" }), 1);
      assert.equal(count({ ...own, "db.operation.name": "bulk" }), 1);
      assert.equal(count({ ...own, "db.operation.name": "get", "error.type": "404" }), 1);
      for (const point of durations) {
        const text = JSON.stringify(point.attributes);
        assert.ok(!text.includes(SECRET) && !text.includes(VALUE), text);
      }
    } finally {
      stop();
      await closeSearchClient(client);
    }
  });

  it("reports the requests of search()'s bean, named after its connection", async () => {
    const app = await bootstrap({
      config: { search: [{ name: "shop", hosts: OPENSEARCH_URL }] },
      search: search(),
    });
    try {
      exporter.reset();
      await app.getBean(SearchClient).cluster.health();
      const spans = exporter.getFinishedSpans().filter((s) =>
        s.attributes["db.client.connection.pool.name"] === "shop"
      );
      assert.deepEqual(spans.map((s) => s.attributes["db.operation.name"]), ["cluster.health"]);
      assert.equal(spans[0].kind, api.SpanKind.CLIENT);
      const durations = await reader.points("db.client.operation.duration");
      assert.ok(
        durations.some((p) => p.attributes["db.client.connection.pool.name"] === "shop"),
        JSON.stringify(durations.map((p) => p.attributes)),
      );
    } finally {
      await app.close();
    }
  });

  it("names a request nothing answered by the client's error, its credentials nowhere", async () => {
    const port = await freePort();
    const client = new Client({
      node: `http://user:${SECRET}@127.0.0.1:${port}`,
      maxRetries: 1,
    });
    const stop = observeSearchClient(client, "gone", api, "elasticsearch");
    try {
      exporter.reset();
      await assert.rejects(client.search({ index, body: { query: { term: { name: VALUE } } } }));
      const spans = exporter.getFinishedSpans();
      // Retried once: one span, ended by the last attempt.
      assert.equal(spans.length, 1);
      const [span] = spans;
      assert.equal(span.name, `search ${index}`);
      assert.equal(span.attributes["db.system.name"], "elasticsearch");
      assert.equal(span.attributes["error.type"], "ConnectionError");
      assert.equal(span.attributes["server.port"], port);
      assert.equal(span.attributes["db.response.status_code"], undefined);
      assert.equal(span.status.code, api.SpanStatusCode.ERROR);
      const text = JSON.stringify(span.attributes);
      assert.ok(!text.includes(SECRET) && !text.includes(VALUE), text);
      const durations = await reader.points("db.client.operation.duration");
      const failed = valueOf(durations, {
        "db.client.connection.pool.name": "gone",
        "error.type": "ConnectionError",
      }) as { count: number } | undefined;
      assert.equal(failed?.count, 1);
    } finally {
      stop();
      await closeSearchClient(client);
    }
  });

  it("says elasticsearch where the node's answers say they are Elasticsearch's", async () => {
    // The real node behind a proxy that marks each answer as Elasticsearch 7.14 and later do.
    const elastic = await serveLoopback(async (req, res, body) => {
      const answer = await forward(OPENSEARCH_URL, req, body, {
        "content-type": String(req.headers["content-type"] ?? "application/json"),
      });
      res.writeHead(answer.status, {
        "content-type": "application/json",
        "x-elastic-product": "Elasticsearch",
      });
      res.end(answer.text);
    });
    const client = new Client({ node: elastic.url });
    const stop = observeSearchClient(client, "elastic", api);
    try {
      exporter.reset();
      await client.cluster.health();
      await client.count({ index: "*" });
      const spans = exporter.getFinishedSpans();
      assert.deepEqual(spans.map((s) => s.name), ["cluster.health", "count *"]);
      // The first answer already tells: its own span says so too.
      for (const span of spans) assert.equal(span.attributes["db.system.name"], "elasticsearch");
      const durations = await reader.points("db.client.operation.duration");
      const own = { "db.client.connection.pool.name": "elastic" };
      assert.equal(valueOf(durations, { ...own, "db.system.name": "opensearch" }), undefined);
      const health = valueOf(durations, { ...own, "db.operation.name": "cluster.health" });
      assert.equal((health as { count: number }).count, 1);
      const points = durations.filter((p) =>
        p.attributes["db.client.connection.pool.name"] === "elastic"
      );
      for (const point of points) assert.equal(point.attributes["db.system.name"], "elasticsearch");
    } finally {
      stop();
      await closeSearchClient(client);
      await elastic.close();
    }
  });

  it("keeps the index out of the duration's series: 1,000 indices make one series", async () => {
    const client = new Client({ node: OPENSEARCH_URL });
    const stop = observeSearchClient(client, "tenants", api);
    const names = Array.from({ length: 1000 }, (_, i) => `${index}-tenant-${i}`);
    try {
      exporter.reset();
      // An index per tenant or per day, none of which exists: HEAD answers 404 for each.
      for (let i = 0; i < names.length; i += 50) {
        await Promise.all(
          names.slice(i, i + 50).map((name) => client.indices.exists({ index: name })),
        );
      }
      const durations = await reader.points("db.client.operation.duration");
      const own = durations.filter((p) =>
        p.attributes["db.client.connection.pool.name"] === "tenants"
      );
      assert.equal(own.length, 1, `${own.length} series`);
      assert.equal(own[0].attributes["db.collection.name"], undefined);
      assert.equal(own[0].attributes["db.operation.name"], "indices.exists");
      assert.equal((own[0].value as { count: number }).count, names.length);
      // The spans, one per request, still say which index each asked for.
      const spans = exporter.getFinishedSpans();
      assert.deepEqual(
        new Set(spans.map((s) => s.attributes["db.collection.name"])),
        new Set(names),
      );
    } finally {
      stop();
      await closeSearchClient(client);
    }
  });

  it("shows a bean's credentials in no error, span, point, health answer or log line", async () => {
    const token = "s3cret-bean-TOKEN-1";
    const password = "s3cret-bean-PASS-2";
    // A node that refuses every request, quoting the Authorization header it was sent.
    const echo = await serveLoopback((req, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `refused ${req.headers.authorization}`, status: 401 }));
      return Promise.resolve();
    });
    const lines: string[] = [];
    const methods = ["log", "info", "warn", "error", "debug"] as const;
    const saved = methods.map((m) => console[m]);
    for (const m of methods) {
      console[m] = (...args: unknown[]) => lines.push(args.map((a) => String(a)).join(" "));
    }
    const app = await bootstrap({
      config: {
        search: [
          { name: "orders", hosts: echo.url, bearer_token: token, primary: true },
          { name: "logs", hosts: echo.url, username: "user", password },
        ],
        management: { endpoint: { health: { "show-details": "always" } } },
      },
      search: search(),
      actuator: actuator({ health: { showDetails: "always", timeout: 10_000 } }),
    });
    const secrets = [token, password, btoa(`user:${password}`)];
    const hidden = (text: string, where: string) => {
      for (const secret of secrets) assert.ok(!text.includes(secret), `${where}: ${text}`);
    };
    try {
      exporter.reset();
      for (const name of ["orders", "logs"]) {
        const client = app.getBean(name) as SearchClient;
        const error = await client.info().then(
          () => assert.fail("the echo answered 200"),
          (e: Error) => e,
        );
        hidden(`${error.message} ${error.stack} ${JSON.stringify(error)}`, `${name}'s error`);
      }
      const response = await app.fetch(new Request("http://x/actuator/health"));
      const text = await response.text();
      assert.equal(response.status, 503, text);
      assert.match(text, /search connection \\"orders\\"/);
      hidden(text, "the health answer");
      const spans = exporter.getFinishedSpans();
      assert.ok(spans.length >= 2, `${spans.length} spans`);
      for (const span of spans) {
        hidden(JSON.stringify([span.name, span.attributes, span.status, span.events]), "a span");
      }
      const durations = await reader.points("db.client.operation.duration");
      for (const point of durations) hidden(JSON.stringify(point.attributes), "a point");
    } finally {
      await app.close();
      methods.forEach((m, i) => (console[m] = saved[i]));
      await echo.close();
    }
    for (const line of lines) hidden(line, "a log line");
  });

  it("reports nothing once its listeners are removed", async () => {
    const client = new Client({ node: OPENSEARCH_URL });
    const stop = observeSearchClient(client, "quiet", api);
    stop();
    try {
      exporter.reset();
      await client.cluster.health();
      assert.deepEqual(exporter.getFinishedSpans(), []);
      const durations = await reader.points("db.client.operation.duration");
      assert.equal(valueOf(durations, { "db.client.connection.pool.name": "quiet" }), undefined);
    } finally {
      await closeSearchClient(client);
    }
  });
});
