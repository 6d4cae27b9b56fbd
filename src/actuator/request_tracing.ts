// One SERVER span per request through OpenTelemetry's API, continuing an incoming `traceparent`
// through the global propagator, active while the handler runs. With no tracer provider
// registered, a request costs one look-up and nothing else.
import type { Attributes, Span, TextMapGetter } from "@opentelemetry/api";
import {
  answeredErrors,
  errorType,
  type Exchange,
  type RequestObserver,
} from "../observe/request_observer.ts";
import { clientAddress, type ForwardHeadersStrategy } from "../runtime/client_address.ts";
import { type Mask, noMask } from "../config/secrets_mask.ts";
import { type OtelApi, registeredTracer } from "./opentelemetry.ts";
import { redactQuery } from "./query_redaction.ts";

const headerGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

// The HTTP version Node parsed ("2.0" is OpenTelemetry's "2"). Deno and Bun do not say: Deno
// speaks HTTP/1.0, 1.1 and, with prior knowledge, 2 on one port; Bun answers 1.0 and 1.1 alike.
function protocolVersion(env: unknown): string | undefined {
  const version = (env as { incoming?: { httpVersion?: unknown } } | null | undefined)?.incoming
    ?.httpVersion;
  return typeof version === "string" ? version === "2.0" ? "2" : version : undefined;
}

function requestAttributes(
  { request, method, env }: Exchange,
  strategy: ForwardHeadersStrategy,
  mask: Mask,
): Attributes {
  const url = new URL(request.url);
  const attributes: Attributes = {
    "http.request.method": method,
    "url.path": mask(url.pathname),
    "url.scheme": url.protocol.slice(0, -1),
    "server.address": url.hostname,
  };
  if (url.search !== "") attributes["url.query"] = redactQuery(mask(url.search.slice(1)));
  const client = clientAddress(request, env, strategy);
  if (client !== undefined) attributes["client.address"] = client;
  const version = protocolVersion(env);
  if (version !== undefined) attributes["network.protocol.version"] = version;
  if (method === "_OTHER") attributes["http.request.method_original"] = request.method;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  attributes["server.port"] = port;
  const agent = request.headers.get("user-agent");
  if (agent !== null) attributes["user_agent.original"] = mask(agent);
  return attributes;
}

/**
 * The server span of each request, where a tracer provider is registered; its `client.address` by
 * `strategy` (`server.forward-headers-strategy`). Its texts (the path, query and user agent as
 * sent, an exception's message and stack) go through `mask`, the mask of the log's lines: a span
 * is exported as a log line is, and a failure's message may quote a connection string or a
 * configured key.
 */
export function tracingObserver(
  api: OtelApi,
  strategy: ForwardHeadersStrategy = "none",
  mask: Mask = noMask,
): RequestObserver {
  const observe: RequestObserver = (exchange, proceed) => {
    const tracer = registeredTracer(api);
    if (tracer === undefined) return proceed();
    const { request, method } = exchange;
    const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers, headerGetter);
    // OpenTelemetry's name for a method it does not know.
    const name = method === "_OTHER" ? "HTTP" : method;
    const span: Span = tracer.startSpan(name, {
      kind: api.SpanKind.SERVER,
      attributes: requestAttributes(exchange, strategy, mask),
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
    // `recordException`'s event, but typed by the error's class, as `error.type` is: its `name` is
    // "Error" for every subclass that does not set its own.
    const exception = (error: unknown, type: string) =>
      span.addEvent("exception", {
        "exception.type": type,
        ...(error instanceof Error
          ? {
            "exception.message": mask(String(error.message)),
            ...(typeof error.stack === "string"
              ? { "exception.stacktrace": mask(error.stack) }
              : {}),
          }
          : typeof error === "string"
          ? { "exception.message": mask(error) }
          : {}),
      });
    return api.context.with(api.trace.setSpan(parent, span), proceed).then(
      (response) => {
        // A failure the app answered itself (its errorController's 500): the span's status says
        // 500, the event what was thrown.
        if (answeredErrors.has(request)) {
          const error = answeredErrors.get(request);
          exception(error, errorType(0, error) ?? "_OTHER");
        }
        finish(response.status, errorType(response.status));
        return response;
      },
      (error) => {
        const type = errorType(0, error) ?? "_OTHER";
        exception(error, type);
        finish(0, type);
        throw error;
      },
    );
  };
  return Object.assign(observe, { idle: () => registeredTracer(api) === undefined });
}
