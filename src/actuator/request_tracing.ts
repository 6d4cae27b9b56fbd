// One SERVER span per request through OpenTelemetry's API, continuing an incoming `traceparent`
// through the global propagator, active while the handler runs. With no tracer provider
// registered, a request costs one look-up and nothing else.
import type { Attributes, Span, TextMapGetter } from "@opentelemetry/api";
import type { RequestObserver } from "../observe/request_observer.ts";
import { VERSION } from "../version.ts";
import type { OtelApi } from "./opentelemetry.ts";

const headerGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

function requestAttributes(request: Request, method: string): Attributes {
  const url = new URL(request.url);
  const attributes: Attributes = {
    "http.request.method": method,
    "url.path": url.pathname,
    "url.scheme": url.protocol.slice(0, -1),
    "server.address": url.hostname,
  };
  if (method === "_OTHER") attributes["http.request.method_original"] = request.method;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  attributes["server.port"] = port;
  const agent = request.headers.get("user-agent");
  if (agent !== null) attributes["user_agent.original"] = agent;
  return attributes;
}

/** The server span of each request, where a tracer provider is registered. */
export function tracingObserver(api: OtelApi): RequestObserver {
  return (exchange, proceed) => {
    const provider = api.trace.getTracerProvider() as
      & ReturnType<
        OtelApi["trace"]["getTracerProvider"]
      >
      & { getDelegateTracer?: (name: string, version?: string) => unknown };
    // The API's proxy has a delegate only once a provider is registered.
    const tracer = typeof provider.getDelegateTracer === "function"
      ? provider.getDelegateTracer("thaw", VERSION) as ReturnType<OtelApi["trace"]["getTracer"]>
      : provider.getTracer("thaw", VERSION);
    if (tracer === undefined) return proceed();
    const { request, method } = exchange;
    const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers, headerGetter);
    const span: Span = tracer.startSpan(method === "_OTHER" ? "HTTP" : method, {
      kind: api.SpanKind.SERVER,
      attributes: requestAttributes(request, method),
    }, parent);
    const spanContext = span.spanContext();
    if (api.isSpanContextValid(spanContext)) exchange.traceId = spanContext.traceId;
    const finish = (status: number, errorType: string | undefined) => {
      if (exchange.routed()) {
        span.setAttribute("http.route", exchange.route());
        span.updateName(`${method === "_OTHER" ? "HTTP" : method} ${exchange.route()}`);
      }
      if (status > 0) span.setAttribute("http.response.status_code", status);
      if (errorType !== undefined) {
        span.setAttribute("error.type", errorType);
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      span.end();
    };
    return api.context.with(api.trace.setSpan(parent, span), proceed).then(
      (response) => {
        finish(response.status, response.status >= 500 ? String(response.status) : undefined);
        return response;
      },
      (error) => {
        if (error instanceof Error) span.recordException(error);
        finish(0, error instanceof Error ? error.constructor.name : "_OTHER");
        throw error;
      },
    );
  };
}
