import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import {
  bootstrap,
  GetMapping,
  HttpException,
  HttpStatus,
  PathVariable,
  RestController,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { logging } from "../../logging.ts";
import { observeFetch, RouteMarks } from "../../src/observe/request_observer.ts";
import { tracingObserver } from "../../src/actuator/request_tracing.ts";
import * as api from "@opentelemetry/api";
import { listen } from "../../src/runtime/listen.ts";

@RestController()
class TracedController {
  @GetMapping("/traced/{id}", PathVariable("id"))
  get(id: string) {
    // What an outgoing call's instrumentation would take as its parent.
    const active = trace.getActiveSpan()?.spanContext();
    return { id, traceId: active?.traceId, spanId: active?.spanId };
  }

  @GetMapping("/traced-fail")
  fail(): string {
    throw new Error("broken");
  }

  @GetMapping("/traced-overdrawn")
  overdrawn(): string {
    throw new Overdrawn("balance below zero");
  }

  @GetMapping("/traced-missing")
  missing(): string {
    throw new HttpException(HttpStatus.NOT_FOUND, "no such account");
  }
}

class Overdrawn extends Error {}

// A configured secret, and a connection string with a password, as a failing handler may quote them.
const API_KEY = "sk-live-7f3a9c2e";

@RestController()
class LeakyController {
  @GetMapping("/leaky")
  fail(): string {
    throw new Error(`cannot reach postgres://admin:pw@db:5432/shop with key ${API_KEY}`);
  }
}

describe("request spans", () => {
  const exporter = new InMemorySpanExporter();
  let app: Awaited<ReturnType<typeof bootstrap>>;

  before(async () => {
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    app = await bootstrap({
      controllers: [TracedController],
      actuator: actuator(),
      logger: { error: () => {} },
    });
  });

  after(() => {
    trace.disable();
    propagation.disable();
    context.disable();
  });

  it("are one SERVER span per request, named by route, with HTTP attributes", async () => {
    exporter.reset();
    const res = await app.fetch(
      new Request("http://localhost:8080/traced/42", { headers: { "user-agent": "probe/1" } }),
    );
    const body = await res.json();
    const [span] = exporter.getFinishedSpans();
    assert.equal(exporter.getFinishedSpans().length, 1);
    assert.equal(span.name, "GET /traced/{id}");
    assert.equal(span.kind, SpanKind.SERVER);
    assert.deepEqual(span.attributes, {
      "http.request.method": "GET",
      "url.path": "/traced/42",
      "url.scheme": "http",
      "server.address": "localhost",
      "server.port": 8080,
      "user_agent.original": "probe/1",
      "http.route": "/traced/{id}",
      "http.response.status_code": 200,
    });
    assert.notEqual(span.status.code, SpanStatusCode.ERROR);
    // Active while the handler ran: a call it makes is this span's child.
    assert.equal(body.spanId, span.spanContext().spanId);
    assert.equal(body.traceId, span.spanContext().traceId);
  });

  it("continue an incoming traceparent", async () => {
    exporter.reset();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    await app.fetch(
      new Request("http://localhost/traced/1", {
        headers: { traceparent: `00-${traceId}-${parentId}-01` },
      }),
    );
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.spanContext().traceId, traceId);
    assert.equal(span.parentSpanContext?.spanId, parentId);
  });

  it("start a new trace for a malformed traceparent", async () => {
    exporter.reset();
    await app.fetch(
      new Request("http://localhost/traced/1", { headers: { traceparent: "00-zz-\u00e9-01" } }),
    );
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.parentSpanContext, undefined);
    assert.match(span.spanContext().traceId, /^[0-9a-f]{32}$/);
  });

  it("are ERROR on a thrown error (500), with error.type", async () => {
    exporter.reset();
    const res = await app.fetch(new Request("http://localhost/traced-fail"));
    assert.equal(res.status, 500);
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.name, "GET /traced-fail");
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.attributes["error.type"], "500");
  });

  it("record an exception event for a handler's error that the errorController answers", async () => {
    exporter.reset();
    const res = await app.fetch(new Request("http://localhost/traced-overdrawn"));
    assert.equal(res.status, 500);
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.attributes["error.type"], "500");
    assert.deepEqual(span.events.map((event) => event.name), ["exception"]);
    const [event] = span.events;
    assert.equal(event.attributes?.["exception.type"], "Overdrawn");
    assert.equal(event.attributes?.["exception.message"], "balance below zero");
    assert.match(String(event.attributes?.["exception.stacktrace"]), /balance below zero/);
    // Through middleware that adds a header to the answer, too.
    const framed = await bootstrap({
      controllers: [TracedController],
      actuator: actuator(),
      middleware: [async (c, next) => {
        await next();
        c.header("x-served-by", "thaw");
      }],
      logger: { error: () => {} },
    });
    exporter.reset();
    const answered = await framed.fetch(new Request("http://localhost/traced-overdrawn"));
    assert.equal(answered.headers.get("x-served-by"), "thaw");
    assert.equal(
      exporter.getFinishedSpans()[0].events[0]?.attributes?.["exception.type"],
      "Overdrawn",
    );
    // An HttpException is an answer the handler chose, not a failure: no event.
    exporter.reset();
    const missing = await app.fetch(new Request("http://localhost/traced-missing"));
    assert.equal(missing.status, 404);
    assert.deepEqual(exporter.getFinishedSpans()[0].events, []);
  });

  it("name a request no route took by its method alone, and a 404 is no error", async () => {
    exporter.reset();
    await app.fetch(new Request("http://localhost/nowhere/at/all"));
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.name, "GET");
    assert.equal(span.attributes["http.route"], undefined);
    assert.equal(span.attributes["http.response.status_code"], 404);
    assert.notEqual(span.status.code, SpanStatusCode.ERROR);
  });

  it("end, as ERROR, when the fetch throws at once rather than rejecting", async () => {
    exporter.reset();
    const fetch = observeFetch(
      () => {
        throw new RangeError("adapter broke");
      },
      [tracingObserver(api)],
      new RouteMarks(),
    );
    await assert.rejects(
      Promise.resolve().then(() => fetch(new Request("http://localhost/x"))),
      RangeError,
    );
    const [span] = exporter.getFinishedSpans();
    assert.equal(exporter.getFinishedSpans().length, 1);
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.attributes["error.type"], "RangeError");
  });

  it("give the access log the trace id", async () => {
    const lines: string[] = [];
    const logged = await bootstrap({
      controllers: [TracedController],
      actuator: actuator(),
      logging: logging(),
      config: { logging: { access: { enabled: true } } },
      logger: { error: () => {}, info: (line: string) => void lines.push(line) },
    });
    exporter.reset();
    await logged.fetch(new Request("http://localhost/traced/3"));
    const [span] = exporter.getFinishedSpans();
    assert.equal(JSON.parse(lines[0]).trace_id, span.spanContext().traceId);
  });

  // A span of one request to a real server on loopback, `strategy` its forward-headers-strategy.
  async function servedSpan(path: string, headers: Record<string, string>, strategy = "none") {
    const served = await bootstrap({
      controllers: [TracedController],
      actuator: actuator(),
      config: { server: { "forward-headers-strategy": strategy } },
      logger: { error: () => {} },
    });
    const server = await listen(served, {
      port: 0,
      hostname: "127.0.0.1",
      quiet: true,
      signals: false,
    });
    exporter.reset();
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { headers });
      await res.body?.cancel();
    } finally {
      await server.close();
    }
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.length, 1);
    return spans[0];
  }

  it("over a socket, name the client by its socket, the query redacted, and the HTTP version", async () => {
    const span = await servedSpan("/traced/1?page=2&X-Amz-Signature=abc&token=t0k", {
      "x-forwarded-for": "6.6.6.6, 203.0.113.7",
      forwarded: "for=6.6.6.6",
    });
    assert.equal(span.attributes["client.address"], "127.0.0.1");
    assert.equal(span.attributes["url.query"], "page=2&X-Amz-Signature=REDACTED&token=REDACTED");
    // Node says which version it parsed; Deno (which speaks 2 as well on one port) and Bun do not.
    const g = globalThis as { Deno?: unknown; Bun?: unknown };
    assert.equal(
      span.attributes["network.protocol.version"],
      g.Deno === undefined && g.Bun === undefined ? "1.1" : undefined,
    );
  });

  it("over a socket, name the client by the proxy's right-most entry with framework", async () => {
    const span = await servedSpan("/traced/1", {
      "x-forwarded-for": "6.6.6.6, 203.0.113.7",
    }, "framework");
    assert.equal(span.attributes["client.address"], "203.0.113.7");
    assert.equal(span.attributes["url.query"], undefined);
  });

  it("record an exception event typed by the error's class when the fetch throws", async () => {
    class QuotaExceeded extends Error {}
    exporter.reset();
    const fetch = observeFetch(
      () => Promise.reject(new QuotaExceeded("over quota")),
      [tracingObserver(api)],
      new RouteMarks(),
    );
    await assert.rejects(
      Promise.resolve().then(() => fetch(new Request("http://localhost/x"))),
      QuotaExceeded,
    );
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.attributes["error.type"], "QuotaExceeded");
    assert.equal(span.events.length, 1);
    const [event] = span.events;
    assert.equal(event.name, "exception");
    assert.equal(event.attributes?.["exception.type"], "QuotaExceeded");
    assert.equal(event.attributes?.["exception.message"], "over quota");
    assert.match(String(event.attributes?.["exception.stacktrace"]), /over quota/);
  });
  it("mask the secrets the log masks: exception message and stack, user agent, query", async () => {
    const leaky = await bootstrap({
      controllers: [LeakyController],
      actuator: actuator(),
      config: { payments: { "api-key": API_KEY } },
      logger: { error: () => {} },
    });
    exporter.reset();
    const res = await leaky.fetch(
      new Request(`http://localhost/leaky?k=${API_KEY}`, {
        headers: { "user-agent": `probe/1 (https://bot:hunter2@example.com) ${API_KEY}` },
      }),
    );
    assert.equal(res.status, 500);
    const [span] = exporter.getFinishedSpans();
    const [event] = span.events;
    const message = String(event.attributes?.["exception.message"]);
    const stack = String(event.attributes?.["exception.stacktrace"]);
    assert.equal(message, "cannot reach postgres://***@db:5432/shop with key ***");
    assert.match(stack, /^Error: cannot reach postgres:\/\/\*\*\*@db:5432\/shop with key \*\*\*/);
    assert.equal(span.attributes["user_agent.original"], "probe/1 (https://***@example.com) ***");
    assert.equal(span.attributes["url.query"], "k=***");
    const everything = JSON.stringify([span.attributes, span.events, span.name]);
    for (const secret of [API_KEY, "admin:pw", "hunter2"]) {
      assert.ok(!everything.includes(secret), `${secret} in ${everything}`);
    }
    // A fetch that throws, observed with the mask.
    exporter.reset();
    const fetch = observeFetch(
      () => Promise.reject(new Error(`token ${API_KEY} refused`)),
      [tracingObserver(api, "none", (text) => text.replaceAll(API_KEY, "***"))],
      new RouteMarks(),
    );
    await assert.rejects(Promise.resolve().then(() => fetch(new Request("http://localhost/x"))));
    const thrown = exporter.getFinishedSpans()[0].events[0];
    assert.equal(thrown.attributes?.["exception.message"], "token *** refused");
    assert.doesNotMatch(String(thrown.attributes?.["exception.stacktrace"]), /sk-live/);
  });
});

describe("request spans with no tracer provider registered", () => {
  it("are not made, and the handler sees no active span", async () => {
    const app = await bootstrap({ controllers: [TracedController], actuator: actuator() });
    const res = await app.fetch(new Request("http://localhost/traced/1"));
    assert.deepEqual(await res.json(), { id: "1" });
  });
});
