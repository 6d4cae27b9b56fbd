import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cors } from "hono/cors";
import * as api from "@opentelemetry/api";
import * as sdkMetrics from "@opentelemetry/sdk-metrics";
import * as serializerModule from "@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import {
  bootstrap,
  Component,
  ConfigError,
  GetMapping,
  type Middleware,
  PathVariable,
  PostMapping,
  RequestBody,
  RequestPart,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { loadConfig } from "../../config.ts";
import type { ConfigValues } from "../../src/config/config_values.ts";
import { withYaml } from "../config/yaml_file.ts";

@Component()
class Audit implements Middleware {
  async handle(_c: unknown, next: () => Promise<void>): Promise<void> {
    await next();
  }
}

@RestController()
@UseMiddleware(Audit)
class ItemController {
  @GetMapping("/items/{id}", PathVariable("id", Number))
  get(id: number) {
    return { id };
  }

  @PostMapping("/items", RequestBody())
  create(body: unknown) {
    return body;
  }

  @PostMapping("/items/upload", RequestPart("file"))
  upload(file: unknown) {
    return String(file);
  }
}

function exposing(web: Record<string, unknown>, rest: ConfigValues = {}): ConfigValues {
  return { ...rest, management: { endpoints: { web } } };
}

async function get(app: { fetch(r: Request): Response | Promise<Response> }, path: string) {
  const response = await app.fetch(new Request(`http://localhost${path}`));
  return { status: response.status, body: response.status === 200 ? await response.json() : null };
}

describe("the actuator's endpoints", () => {
  it("serve health alone unless exposure says otherwise, and 404 for the rest", async () => {
    const app = await bootstrap({ actuator: actuator() });
    assert.equal((await get(app, "/actuator/health")).status, 200);
    assert.equal((await get(app, "/actuator/info")).status, 404);
    assert.equal((await get(app, "/actuator/mappings")).status, 404);
    assert.deepEqual((await get(app, "/actuator")).body, {
      _links: {
        self: { href: "http://localhost/actuator" },
        health: { href: "http://localhost/actuator/health" },
      },
    });
  });

  it("expose what include names (a list, a comma-separated text or *), less exclude", async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [{ exposure: { include: ["info", "mappings"] } }, ["info", "mappings"]],
      [{ exposure: { include: "health, info" } }, ["health", "info"]],
      [{ exposure: { include: "*" } }, ["health", "info", "mappings"]],
      [{ exposure: { include: "*", exclude: "mappings" } }, ["health", "info"]],
      [{ exposure: { include: [] } }, []],
    ];
    for (const [web, served] of cases) {
      const app = await bootstrap({ config: exposing(web), actuator: actuator() });
      for (const id of ["health", "info", "mappings"]) {
        assert.equal(
          (await get(app, `/actuator/${id}`)).status,
          served.includes(id) ? 200 : 404,
          `${JSON.stringify(web)}: ${id}`,
        );
      }
      assert.equal((await get(app, "/actuator")).status, served.length > 0 ? 200 : 404);
    }
  });

  it("expose with * the endpoints there are: migrations where it has a source", async () => {
    const without = await bootstrap({
      config: exposing({ exposure: { include: "*" } }),
      actuator: actuator(),
    });
    assert.equal((await get(without, "/actuator/migrations")).status, 404);
    const links = (await get(without, "/actuator")).body._links;
    assert.equal(links.migrations, undefined);
    const source = () => Promise.resolve({ connections: [] });
    const withSource = await bootstrap({
      config: exposing({ exposure: { include: "*" } }),
      actuator: actuator({ migrations: source }),
    });
    assert.deepEqual(await get(withSource, "/actuator/migrations"), {
      status: 200,
      body: { connections: [] },
    });
  });

  it("serve under management.endpoints.web.base-path", async () => {
    const app = await bootstrap({
      config: exposing({ "base-path": "/manage/", exposure: { include: "*" } }),
      actuator: actuator(),
    });
    assert.equal((await get(app, "/manage/health")).status, 200);
    assert.equal((await get(app, "/manage/health/readiness")).status, 200);
    assert.equal((await get(app, "/manage/info")).status, 200);
    assert.equal((await get(app, "/actuator/health")).status, 404);
  });

  it("refuse an unknown endpoint and a base path that is not a fixed path, naming the key", async () => {
    await withYaml(
      "management:\n  endpoints:\n    web:\n      exposure:\n        include: helth\n",
      async (file) => {
        const config = await loadConfig(file, { env: {} });
        await assert.rejects(bootstrap({ config, actuator: actuator() }), {
          name: "ConfigError",
          message: `${file}:5: management.endpoints.web.exposure.include: no endpoint "helth"; ` +
            "the endpoints are caches, configprops, env, health, info, loggers, mappings, " +
            "migrations, prometheus, scheduledtasks (or * for all)",
        });
      },
    );
    for (const base of ["/", "/a/{id}", "manage", "/a//b"]) {
      await assert.rejects(
        bootstrap({ config: exposing({ "base-path": base }), actuator: actuator() }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message.includes("management.endpoints.web.base-path must be a fixed path"),
        base,
      );
    }
  });

  it("info: the info section with secrets masked, Thaw's version and the runtime", async () => {
    const app = await bootstrap({
      config: exposing({ exposure: { include: "info" } }, {
        info: {
          app: { name: "shop" },
          db: { url: "postgres://u:pw-123@db/x", password: "pw-123" },
        },
      }),
      actuator: actuator(),
    });
    const { body } = await get(app, "/actuator/info");
    assert.deepEqual(body.app, { name: "shop" });
    assert.deepEqual(body.db, { url: "postgres://***@db/x", password: "***" });
    assert.equal(typeof body.thaw.version, "string");
    assert.ok(["deno", "bun", "node"].includes(body.runtime.name), body.runtime.name);
  });

  it("mappings: every route, its handler, its middleware and what it consumes", async () => {
    const app = await bootstrap({
      controllers: [ItemController],
      components: [Audit],
      middleware: [cors()],
      config: exposing({ exposure: { include: "mappings" } }),
      actuator: actuator(),
    });
    const { body } = await get(app, "/actuator/mappings");
    const routes = body.routes as { method: string; path: string }[];
    const mine = routes.filter((r) => r.path.startsWith("/items"));
    assert.deepEqual(mine, [
      {
        method: "GET",
        path: "/items/{id}",
        handler: "ItemController.get",
        middleware: ["cors", "Audit"],
        consumes: [],
      },
      {
        method: "POST",
        path: "/items",
        handler: "ItemController.create",
        middleware: ["cors", "Audit"],
        consumes: ["application/json"],
      },
      {
        method: "POST",
        path: "/items/upload",
        handler: "ItemController.upload",
        middleware: ["cors", "Audit"],
        consumes: ["multipart/form-data"],
      },
    ]);
    // The actuator's own routes are listed too, as the framework's.
    assert.ok(routes.some((r) => r.path === "/actuator/mappings"));
  });

  it("refuse management keys without the actuator, naming the import; false turns it off", async () => {
    await withYaml(
      "management:\n  endpoint:\n    health:\n      show-details: always\n",
      async (file) => {
        const config = await loadConfig(file, { env: {} });
        await assert.rejects(bootstrap({ config }), {
          name: "ConfigError",
          message: `${file}:1: management: these keys configure the actuator, which lives in its ` +
            'own entry point: import { actuator } from "@thaw/thaw/actuator" and pass ' +
            "bootstrap({ actuator: actuator() })",
        });
        const off = await bootstrap({ config, actuator: false });
        assert.equal((await get(off, "/actuator/health")).status, 404);
      },
    );
  });

  it("refuse a value actuator() did not make, and options it does not know", async () => {
    await assert.rejects(
      bootstrap({ actuator: actuator as unknown as ReturnType<typeof actuator> }),
      /got the function actuator: call it, actuator\(\)/,
    );
    assert.throws(
      () => actuator({ helth: {} } as never),
      /actuator\(\): unknown option "helth"; the options are health, migrations, opentelemetry/,
    );
  });

  it("info: masks any value under a secret key, numbers too, and refuses what is no JSON", async () => {
    const app = await bootstrap({
      config: exposing({ exposure: { include: "info" } }, {
        info: { db: { password: 123456, pin: 1 }, "api-key": 987654321, token: "x1", thaw: 1 },
      }),
      actuator: actuator(),
    });
    const { body } = await get(app, "/actuator/info");
    assert.deepEqual(body.db, { password: "***", pin: 1 });
    assert.equal(body["api-key"], "***");
    assert.equal(body.token, "***");
    // The app's own keys win over Thaw's.
    assert.equal(body.thaw, 1);
    await assert.rejects(
      bootstrap({
        config: exposing({ exposure: { include: "info" } }, { info: { big: 1n } }),
        actuator: actuator(),
      }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.startsWith("config: info: the info section cannot be served as JSON"),
    );
  });

  it("take ids in any case, an empty include as none, and no index when discovery is off", async () => {
    const app = await bootstrap({
      config: exposing({}),
      env: { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: " Info , MAPPINGS" },
      actuator: actuator(),
    });
    assert.equal((await get(app, "/actuator/info")).status, 200);
    assert.equal((await get(app, "/actuator/mappings")).status, 200);
    const none = await bootstrap({
      config: exposing({ exposure: { include: "" } }),
      actuator: actuator(),
    });
    assert.equal((await get(none, "/actuator/health")).status, 404);

    @RestController()
    class Own {
      @GetMapping("/actuator")
      index(): string {
        return "mine";
      }
    }
    const own = await bootstrap({
      controllers: [Own],
      config: exposing({ discovery: { enabled: false } }),
      actuator: actuator(),
    });
    const res = await own.fetch(new Request("http://localhost/actuator"));
    assert.equal(await res.text(), "mine");
    assert.equal((await get(own, "/actuator/health")).status, 200);
    await assert.rejects(
      bootstrap({ config: exposing({ "base-path": "/ops " }), actuator: actuator() }),
      /base-path must be a fixed path/,
    );
  });

  it("leave management variables of the environment alone without the actuator, but the moved key", async () => {
    const app = await bootstrap({
      config: { app: { name: "demo" } },
      env: { MANAGEMENT_HEALTH_TIMEOUT: "2000", MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: "*" },
    });
    assert.equal((await get(app, "/actuator/health")).status, 404);
    await assert.rejects(
      bootstrap({ config: { app: { name: "demo" } }, env: { MANAGEMENT_HEALTH_ENABLED: "true" } }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.startsWith(
          "environment variable MANAGEMENT_HEALTH_ENABLED: management.health.enabled: Thaw no " +
            "longer reads this key",
        ),
    );
  });
});

describe("actuator({ opentelemetry }): OpenTelemetry's modules handed in by the app", () => {
  const { PrometheusSerializer } = serializerModule;

  it("refuses what is not OpenTelemetry's modules, naming the option and what is wrong", () => {
    const cases: [unknown, string][] = [
      [
        null,
        "actuator() option opentelemetry: the options must be an object, got null; give " +
        "OpenTelemetry's modules, { api, sdkMetrics, PrometheusSerializer }",
      ],
      [
        {},
        'actuator() option opentelemetry.api is missing: import * as api from "@opentelemetry/api"',
      ],
      // The API module itself, where an object holding it was meant.
      [
        api,
        'actuator() option opentelemetry.api is missing: import * as api from "@opentelemetry/api"',
      ],
      [
        { api, tracing: api },
        'actuator() option opentelemetry: unknown option "tracing"; the options are api, ' +
        "sdkMetrics, PrometheusSerializer",
      ],
      [
        { api: { metrics: api.metrics } },
        "actuator() option opentelemetry.api must be OpenTelemetry's API module, " +
        'import * as api from "@opentelemetry/api", got an object without context, ' +
        "propagation, trace, createNoopMeter, ROOT_CONTEXT, SpanKind, SpanStatusCode, " +
        "isSpanContextValid",
      ],
      [
        { api, sdkMetrics },
        "actuator() option opentelemetry: sdkMetrics and PrometheusSerializer go together (the " +
        "prometheus endpoint needs both), got sdkMetrics alone",
      ],
      [
        { api, PrometheusSerializer },
        "actuator() option opentelemetry: sdkMetrics and PrometheusSerializer go together (the " +
        "prometheus endpoint needs both), got PrometheusSerializer alone",
      ],
      [
        { api, sdkMetrics: api, PrometheusSerializer },
        "actuator() option opentelemetry.sdkMetrics must be the module of " +
        '@opentelemetry/sdk-metrics, import * as sdkMetrics from "@opentelemetry/sdk-metrics", ' +
        "got an object without MeterProvider, MetricReader, AggregationTemporality, DataPointType",
      ],
      [
        { api, sdkMetrics, PrometheusSerializer: serializerModule },
        "actuator() option opentelemetry.PrometheusSerializer must be the class, " +
        "import { PrometheusSerializer } from " +
        '"@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js", got its module',
      ],
      [
        { api, sdkMetrics, PrometheusSerializer: "PrometheusSerializer" },
        "actuator() option opentelemetry.PrometheusSerializer must be the class, " +
        "import { PrometheusSerializer } from " +
        '"@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js", ' +
        'got "PrometheusSerializer"',
      ],
      // A getter that throws is said as the rest are, not thrown as it is.
      [
        {
          get api() {
            throw new Error("no API here");
          },
        },
        "actuator() option opentelemetry could not be read: no API here",
      ],
    ];
    for (const [opentelemetry, message] of cases) {
      assert.throws(
        () => actuator({ opentelemetry } as never),
        (e: unknown) => e instanceof ConfigError && e.message === message,
        message,
      );
    }
  });

  it("serves prometheus through the modules given", async () => {
    const app = await bootstrap({
      controllers: [ItemController],
      components: [Audit],
      config: exposing({ exposure: { include: "prometheus" } }),
      actuator: actuator({ opentelemetry: { api, sdkMetrics, PrometheusSerializer } }),
    });
    await app.fetch(new Request("http://localhost/items/7"));
    const scrape = await app.fetch(new Request("http://localhost/actuator/prometheus"));
    assert.equal(scrape.status, 200);
    assert.match(
      await scrape.text(),
      /http_server_request_duration_seconds_count\{http_request_method="GET",http_route="\/items\/\{id\}"/,
    );
  });

  it("observes through the API given, not the one it would import", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    // OpenTelemetry's API but for the tracer provider, which is this test's alone.
    const own: typeof api = {
      ...api,
      trace: Object.assign(Object.create(api.trace), { getTracerProvider: () => provider }),
    };
    const app = await bootstrap({
      controllers: [ItemController],
      components: [Audit],
      actuator: actuator({ opentelemetry: { api: own } }),
    });
    await (await app.fetch(new Request("http://localhost/items/7"))).text();
    assert.deepEqual(exporter.getFinishedSpans().map((span) => span.name), ["GET /items/{id}"]);
  });

  it("without sdkMetrics: prometheus named stops bootstrap naming the option, * leaves it out", async () => {
    await assert.rejects(
      bootstrap({
        config: exposing({ exposure: { include: "health,prometheus" } }),
        actuator: actuator({ opentelemetry: { api } }),
      }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message ===
          "management.endpoints.web.exposure.include: prometheus: actuator() option " +
            "opentelemetry has no sdkMetrics and PrometheusSerializer: pass them too",
    );
    const all = await bootstrap({
      config: exposing({ exposure: { include: "*" } }),
      actuator: actuator({ opentelemetry: { api } }),
    });
    assert.equal((await get(all, "/actuator/prometheus")).status, 404);
    assert.equal((await get(all, "/actuator/health")).status, 200);
  });
});
