// A handler's outgoing call as a CLIENT span under the request's SERVER span, through
// OpenTelemetry's undici instrumentation, which reads undici's diagnostics channels. Which fetch
// publishes them depends on the runtime, and docs/observability.md says so: Node's global fetch
// is undici; Deno's is its own, but the undici package's fetch publishes them there too; Bun
// answers the undici package with its own fetch, so that neither is seen. Each runtime's run
// asserts its own line, so that a runtime that changes shows up here.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { context, propagation, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { fetch as undiciFetch } from "undici";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { RUNTIME } from "../runtime.ts";

let downstream = "";

@RestController()
class CallingController {
  @GetMapping("/calls-out")
  async callOut() {
    const res = await fetch(`${downstream}/stock`);
    return { status: res.status, body: await res.text() };
  }

  @GetMapping("/calls-out-through-undici")
  async callOutThroughUndici() {
    const res = await undiciFetch(`${downstream}/stock`);
    return { status: res.status, body: await res.text() };
  }
}

describe("a handler's outgoing fetch, with OpenTelemetry's undici instrumentation", () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const received: (string | undefined)[] = [];
  let server: Server;
  let undici: UndiciInstrumentation;
  let app: Awaited<ReturnType<typeof bootstrap>>;

  before(async () => {
    assert.ok(trace.setGlobalTracerProvider(provider), "another tracer provider is registered");
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    undici = new UndiciInstrumentation();
    undici.setTracerProvider(provider);
    // Its client histogram in a provider of its own, not in the process's Prometheus registry.
    undici.setMeterProvider(new MeterProvider());
    server = createServer((req, res) => {
      received.push(req.headers.traceparent as string | undefined);
      res.end("12");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    downstream = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    app = await bootstrap({
      controllers: [CallingController],
      actuator: actuator(),
      logger: { error: () => {} },
    });
  });

  after(async () => {
    undici.disable();
    trace.disable();
    propagation.disable();
    context.disable();
    await new Promise((resolve) => server.close(resolve));
  });

  // Calls `path` with a caller's traceparent and asserts the SERVER span continues it; gives the
  // CLIENT span, if the instrumentation made one.
  async function call(path: string, client: boolean) {
    exporter.reset();
    received.length = 0;
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerId = "00f067aa0ba902b7";
    const res = await app.fetch(
      new Request(`http://localhost${path}`, {
        headers: { traceparent: `00-${traceId}-${callerId}-01` },
      }),
    );
    assert.deepEqual(await res.json(), { status: 200, body: "12" });
    // The CLIENT span ends as undici reports the answer's end, which may come after the handler's:
    // waited for, up to a give-up only a span that never comes pays (a loaded machine may take
    // seconds). Where none is made, a moment's wait shows none came late.
    let spans = exporter.getFinishedSpans();
    const giveUp = Date.now() + 60_000;
    const waiting = (i: number) => client ? Date.now() < giveUp : i < 5;
    for (let i = 0; waiting(i) && !spans.some((s) => s.kind === SpanKind.CLIENT); i++) {
      await new Promise((r) => setTimeout(r, 10));
      spans = exporter.getFinishedSpans();
    }
    const serverSpan = spans.find((s) => s.kind === SpanKind.SERVER);
    assert.ok(serverSpan !== undefined, "no SERVER span");
    assert.equal(serverSpan.spanContext().traceId, traceId);
    assert.equal(serverSpan.parentSpanContext?.spanId, callerId);
    const clientSpan = spans.find((s) => s.kind === SpanKind.CLIENT);
    assert.equal(clientSpan !== undefined, client, `a CLIENT span on ${RUNTIME}: ${!client}`);
    if (clientSpan === undefined) return;
    assert.equal(clientSpan.spanContext().traceId, traceId);
    assert.equal(clientSpan.parentSpanContext?.spanId, serverSpan.spanContext().spanId);
    assert.equal(clientSpan.attributes["url.full"], `${downstream}/stock`);
    assert.equal(clientSpan.attributes["http.response.status_code"], 200);
    // The call carried the CLIENT span on to the next service.
    assert.deepEqual(received, [`00-${traceId}-${clientSpan.spanContext().spanId}-01`]);
  }

  it("is a CLIENT span, child of the request's SERVER span, through Node's global fetch", async () => {
    await call("/calls-out", RUNTIME === "node");
  });

  it("is one through the undici package's fetch on Node and Deno, not on Bun", async () => {
    await call("/calls-out-through-undici", RUNTIME !== "bun");
  });
});
