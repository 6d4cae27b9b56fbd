// What a search connection's client reports through OpenTelemetry's API, by the database client
// conventions (Elasticsearch's, which OpenSearch's API shares): a CLIENT span per request while a
// tracer provider is registered, its duration in `db.client.operation.duration` while a meter
// provider is, read from the events the client emits. A provider registered after the client is
// followed, as the datasources' telemetry follows it. Nothing of a request's body, query string,
// headers or document ids is read: only its method, the endpoint and index its path names, the
// node's host and port, and of the response its status and whether it says it is Elasticsearch.
import type { Attributes, Histogram, Span, Tracer } from "@opentelemetry/api";
import type { Client } from "@opensearch-project/opensearch";
import { type OtelApi, registeredTracer } from "../actuator/opentelemetry.ts";
import type { DistributionName } from "../migrate/search/distribution.ts";
import { DbClientMeter } from "../observe/db_client_meter.ts";
import { searchOperation } from "./search_operation.ts";

/** What the client's `request` and `response` events carry, as far as this reads it. */
interface EventResult {
  readonly statusCode?: unknown;
  readonly headers?: { readonly [name: string]: unknown } | null;
  readonly meta?: {
    readonly request?: { readonly params?: { readonly method?: unknown; readonly path?: unknown } };
    readonly connection?: { readonly url?: unknown } | null;
  };
}

type Listener = (error: unknown, result: EventResult | null | undefined) => void;

/** The client's event emitter, as this uses it. */
interface ClientEvents {
  on(event: "request" | "response", listener: Listener): unknown;
  off(event: "request" | "response", listener: Listener): unknown;
}

/** One request under way: its span, where a tracer was registered, and when it began. */
interface Pending {
  readonly span: Span | undefined;
  readonly histogram: Histogram | undefined;
  readonly attributes: Attributes;
  readonly start: number;
}

/**
 * Reports each request `client` sends as connection `name`: a CLIENT span
 * named `{operation} {index}` (`search products`, `bulk`, `cluster.health`) under the caller's
 * active span, and a point of the `db.client.operation.duration` histogram (seconds), both with
 * `db.system.name`, `db.operation.name` (the API's endpoint name, read from the method and path),
 * `server.address`, `server.port`, `db.client.connection.pool.name` (the connection's name, as a
 * datasource's pool is named), `db.response.status_code` where the node answered, and `error.type`
 * (the status, or the client's error class where nothing answered) on failure; the span also has
 * `http.request.method` and `db.collection.name` (the index the path names, where it names one),
 * which the histogram leaves out so that its series stay as few as the connection's operations. A
 * retried request is one span, ended by its last attempt.
 *
 * Listens to the client's `request` and `response` events: call it only where the API is installed
 * (`optionalApi()`), so that an app without OpenTelemetry attaches no listener at all. While no
 * provider is registered, a request costs two look-ups.
 *
 * @param client the connection's client
 * @param name the connection's name
 * @param api OpenTelemetry's API
 * @param system `opensearch` or `elasticsearch`, where known (the runner's `distributionOf` of
 *   the cluster's `GET /`); `opensearch` when not given. A response saying
 *   `x-elastic-product: Elasticsearch` (every answer of Elasticsearch 7.14 and later) makes it
 *   `elasticsearch` from that request on, that request's span and point included.
 * @returns a function that removes the listeners
 */
export function observeSearchClient(
  client: Client,
  name: string,
  api: OtelApi,
  system: DistributionName = "opensearch",
): () => void {
  // The datasources' histogram too (data_telemetry.ts), so that both describe it alike.
  const instruments = new DbClientMeter(api, (_meter, duration) => ({ value: duration }));
  // Keyed by the request's `meta`, the one object its events share, retries included.
  const pending = new WeakMap<object, Pending>();
  let base: Attributes = { "db.system.name": system, "db.client.connection.pool.name": name };
  const onRequest = (error: unknown, result: EventResult | null | undefined): void => {
    const meta = result?.meta;
    // An error here is one of serialization: nothing is sent, and no response event follows.
    if (error != null || meta == null || pending.has(meta)) return;
    const request = pendingOf(api, instruments, base, meta);
    if (request !== undefined) pending.set(meta, request);
  };
  const onResponse = (error: unknown, result: EventResult | null | undefined): void => {
    const meta = result?.meta;
    if (meta == null) return;
    const request = pending.get(meta);
    if (request === undefined) return;
    pending.delete(meta);
    const seconds = (performance.now() - request.start) / 1000;
    if (result?.headers?.["x-elastic-product"] === "Elasticsearch") {
      base = { ...base, "db.system.name": "elasticsearch" };
    }
    finish(api, request, seconds, base["db.system.name"], error, result);
  };
  // The package's types give its listeners its own result type; these read any shape safely.
  const events = client as unknown as ClientEvents;
  events.on("request", onRequest);
  events.on("response", onResponse);
  return () => {
    events.off("request", onRequest);
    events.off("response", onResponse);
  };
}

// What a request's response needs, where a provider is registered: its span, its histogram, its
// attributes and when it began.
function pendingOf(
  api: OtelApi,
  instruments: DbClientMeter<Histogram>,
  base: Attributes,
  meta: NonNullable<EventResult["meta"]>,
): Pending | undefined {
  const tracer = registeredTracer(api);
  const histogram = instruments.current();
  if (tracer === undefined && histogram === undefined) return undefined;
  const params = meta.request?.params;
  const method = typeof params?.method === "string" ? params.method : "GET";
  const { operation, index } = searchOperation(
    method,
    typeof params?.path === "string" ? params.path : "/",
  );
  const attributes: Attributes = { ...base, "db.operation.name": operation };
  addServer(attributes, meta.connection?.url);
  const span = tracer === undefined
    ? undefined
    : startSpan(api, tracer, attributes, method, operation, index);
  return { span, histogram, attributes, start: performance.now() };
}

// The node's host and port, where the connection's URL is known.
function addServer(attributes: Attributes, url: unknown): void {
  if (!(url instanceof URL)) return;
  attributes["server.address"] = url.hostname.replace(/^\[(.*)\]$/, "$1");
  attributes["server.port"] = url.port === ""
    ? (url.protocol === "https:" ? 443 : 80)
    : Number(url.port);
}

// The request's span, under the caller's active span.
function startSpan(
  api: OtelApi,
  tracer: Tracer,
  attributes: Attributes,
  method: string,
  operation: string,
  index: string | undefined,
): Span {
  return tracer.startSpan(
    index === undefined ? operation : `${operation} ${index}`,
    {
      kind: api.SpanKind.CLIENT,
      // The index on the span alone: as a label of the histogram, an index per day or per
      // tenant would make a series of each (the datasources' metrics name no table either).
      attributes: index === undefined
        ? { ...attributes, "http.request.method": method }
        : { ...attributes, "db.collection.name": index, "http.request.method": method },
    },
    api.context.active(),
  );
}

// Ends the request's span and records its point, with what its response (or its failure) says.
function finish(
  api: OtelApi,
  request: Pending,
  seconds: number,
  system: Attributes[string],
  error: unknown,
  result: EventResult | null | undefined,
): void {
  const status = typeof result?.statusCode === "number" ? String(result.statusCode) : undefined;
  const attributes: Attributes = { ...request.attributes, "db.system.name": system };
  if (status !== undefined) attributes["db.response.status_code"] = status;
  if (error != null) attributes["error.type"] = status ?? errorName(error);
  const { span } = request;
  if (span !== undefined) {
    span.setAttributes(attributes);
    if (error != null) span.setStatus({ code: api.SpanStatusCode.ERROR });
    span.end();
  }
  request.histogram?.record(seconds, attributes);
}

// The client's error class (`ConnectionError`, `TimeoutError`): its message may quote a URL.
function errorName(error: unknown): string {
  return error instanceof Error && error.name !== "" ? error.name : "_OTHER";
}
