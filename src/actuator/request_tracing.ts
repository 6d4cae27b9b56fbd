// One SERVER span per request through OpenTelemetry's API, continuing an incoming `traceparent`
// through the global propagator, active while the handler runs. With no tracer provider
// registered, a request costs one look-up and nothing else.
import type { Attributes, Span, TextMapGetter } from "@opentelemetry/api";
import { errorType, type RequestObserver } from "../observe/request_observer.ts";
import { type OtelApi, registeredTracer } from "./opentelemetry.ts";

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
  const observe: RequestObserver = (exchange, proceed) => {
    const tracer = registeredTracer(api);
    if (tracer === undefined) return proceed();
    const { request, method } = exchange;
    const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers, headerGetter);
    // OpenTelemetry's name for a method it does not know.
    const name = method === "_OTHER" ? "HTTP" : method;
    const span: Span = tracer.startSpan(name, {
      kind: api.SpanKind.SERVER,
      attributes: requestAttributes(request, method),
    }, parent);
    const spanContext = span.spanContext();
    if (api.isSpanContextValid(spanContext)) exchange.traceId = spanContext.traceId;
    const finish = (status: number, failure: string | undefined) => {
      if (exchange.routed()) {
        span.setAttribute("http.route", exchange.route());
        span.updateName(`${name} ${exchange.route()}`);
      }
      if (status > 0) span.setAttribute("http.response.status_code", status);
      if (failure !== undefined) {
        span.setAttribute("error.type", failure);
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      span.end();
    };
    return api.context.with(api.trace.setSpan(parent, span), proceed).then(
      (response) => {
        finish(response.status, errorType(response.status));
        return response;
      },
      (error) => {
        if (error instanceof Error) span.recordException(error);
        finish(0, errorType(0, error));
        throw error;
      },
    );
  };
  return Object.assign(observe, { idle: () => registeredTracer(api) === undefined });
}
