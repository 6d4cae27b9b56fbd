// The OpenSearch client's own extension point, its `Connection` class, over the runner's transport:
// one way out for every runtime. The transport is the runner's (`runtimeTransport`: the runtime's
// `fetch`, or `node:http(s)` where a setting needs it, with `ssl_verification`, the proxy and the
// connect timeout as each runtime honours them), and so are the authentication headers
// (`authorize`: basic, API key, bearer, SigV4 signed for each attempt on each host). The client's
// own Connection is `node:http`'s, which fetch-only runtimes (workerd) lack, and knows no SigV4 of
// the runner's settings.
import { Buffer } from "node:buffer";
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import type { Connection as BaseConnection, errors } from "@opensearch-project/opensearch";
import type { Mask } from "../config/secrets_mask.ts";
import { authorize } from "../migrate/search/auth/authorize.ts";
import { sendablePath } from "./dot_segments.ts";
import type { SearchAuth } from "../migrate/search/auth/search_auth.ts";
import type { Transport } from "../migrate/search/http/transport.ts";
import {
  bodyLimit,
  type Bounds,
  boundsOf,
  decoded,
  stillEncoded,
  type TooLarge,
  wholeAnswer,
} from "./answer_bounds.ts";
import { readsByPost } from "./reads_by_post.ts";

/** What a connection's requests go through. */
export interface ConnectionWay {
  /** The `search:` entry's name, for messages. */
  readonly name: string;
  readonly transport: Transport;
  /**
   * What a request the client sends no more than once (`maxRetries: 0`) goes through, on a
   * connection of its own: one that never sends a request again by itself. `transport` where
   * not given.
   */
  readonly once?: Transport;
  readonly auth: SearchAuth | undefined;
  /** Hides the connection's secrets in what an answer or an error says. */
  readonly mask: Mask;
  /** The headers of a method that signs nothing per request (basic, API key, bearer), once made. */
  fixedAuth?: Promise<Readonly<Record<string, string>>>;
}

/** The parts of the client's module this file uses. */
export interface ClientModule {
  readonly Connection: typeof BaseConnection;
  readonly errors: typeof errors;
}

type RequestParams = Parameters<BaseConnection["request"]>[0] & {
  timeout?: number;
  /** The request's own bounds on its answer, as `sizedTransportClass` passes them on. */
  maxResponseSize?: unknown;
  maxCompressedResponseSize?: unknown;
  /** Set by `sizedTransportClass` where the client will not send the request again. */
  sentOnce?: boolean;
};
// The client reads the answer as a node:http response: a stream with a status and headers.
type Callback = Parameters<BaseConnection["request"]>[1];

// Unescaped characters in a path, which the client's own Connection refuses too.
const INVALID_PATH = /[^\u0021-\u00ff]/;

/** The client's errors and the way out: what each request of one `search:` entry needs. */
interface Context {
  readonly way: ConnectionWay;
  readonly errors: typeof errors;
}

/** A request that can be sent: its path as sent, its method, and the bounds on its answer. */
interface Sendable {
  readonly path: string;
  readonly method: string;
  readonly bounds: Bounds;
}

/** What `buildRequestObject` gives, as far as this reads it. */
interface Built {
  path: string;
  headers: Record<string, unknown>;
  method?: string;
}

/** The Connection class of one `search:` entry, over `way`. */
export function fetchConnectionClass(
  module: ClientModule,
  way: ConnectionWay,
): typeof BaseConnection {
  const context: Context = { way, errors: module.errors };
  const Base = module.Connection;
  class FetchConnection extends Base {
    // deno-lint-ignore no-explicit-any -- the client's own options type, passed on as it is
    constructor(options: any) {
      // No node:http agent: requests go through the runner's transport.
      super({ ...options, agent: false });
    }

    // deno-lint-ignore no-explicit-any -- the client reads only abort() of what this returns
    override request(params: RequestParams, callback: Callback): any {
      const built = this.buildRequestObject(params) as Built;
      const sendable = sendableOf(context, params, built.path);
      if (sendable instanceof Error) {
        callback(sendable, null);
        return { abort() {} };
      }
      return start(this, context, params, built, sendable, callback);
    }
  }
  return FetchConnection;
}

// The request as it can be sent, or the error it is refused with before anything is sent.
function sendableOf(context: Context, params: RequestParams, path: string): Sendable | Error {
  const { way, errors: { RequestAbortedError } } = context;
  if (INVALID_PATH.test(path)) return new TypeError(`ERR_UNESCAPED_CHARACTERS: ${path}`);
  // A URL reads a segment `.` or `..` (`%2e` too) as a step up: `DELETE /products/_doc/..`
  // would be sent as `DELETE /products/`, which deletes the index. The package's own
  // connection sends the path as written; `fetch` cannot, so such a path is refused, and as
  // an abort, which the client neither retries nor counts against the node.
  const sent = sendablePath(path);
  if (sent === undefined) {
    return new RequestAbortedError(
      `search connection "${way.name}": ${
        (params.method ?? "GET").toUpperCase()
      } ${path} has a path segment . or .. (a document id or an index name), which the URL would read as a step up to another resource: not sent`,
    );
  }
  const method = methodOf(context, params, path);
  if (method instanceof Error) return method;
  try {
    return { path: sent, method, bounds: boundsOf(params) };
  } catch (error) {
    return new RequestAbortedError(`search connection "${way.name}": ${(error as Error).message}`);
  }
}

// `fetch` refuses a GET or a HEAD with a body before anything is sent. A read that POST answers
// the same goes as POST (the client's own API does so for them); any other is refused here, as an
// abort: no node is to blame for it.
function methodOf(context: Context, params: RequestParams, path: string): string | Error {
  const method = (params.method ?? "GET").toUpperCase();
  if (
    (method !== "GET" && method !== "HEAD") || context.way.transport.sendsGetBodies === true ||
    params.body === undefined || params.body === null || params.body === ""
  ) {
    return method;
  }
  if (method === "GET" && readsByPost(params.path ?? "/")) return "POST";
  return new context.errors.RequestAbortedError(
    `search connection "${context.way.name}": ${method} ${path} has a body, which this runtime's fetch cannot send (and POST is another request there): not sent`,
  );
}

// Sends the request, and answers `callback` once: with the answer, or the error the client reads
// (a timeout, an abort, or the connection's failure).
function start(
  connection: BaseConnection,
  context: Context,
  params: RequestParams,
  built: Built,
  sendable: Sendable,
  callback: Callback,
): { abort(): void } {
  const { way } = context;
  connection._openRequests++;
  const abort = new AbortController();
  // A timer of its own, cleared with the answer: cheaper than AbortSignal.timeout and any().
  let timedOut = false;
  const timer = typeof params.timeout === "number" && params.timeout > 0
    ? setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, params.timeout)
    : undefined;
  let settled = false;
  const settle = (error: Error | null, response: Answer | Readable | null) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    connection._openRequests--;
    callback(error, response as Parameters<Callback>[1]);
    if (response instanceof Answer) response.flush();
  };
  // Joined as text: resolved against the host, a path starting with `//` (an empty index name
  // makes one) would name another host, and the credentials would go there.
  const target = new URL(`${connection.url.origin}${sendable.path}`);
  const { method, bounds } = sendable;
  const tooLarge = tooLargeOf(context, method, built.path);
  send(way, target, method, params, built.headers, abort, bounds, tooLarge).then(
    (response) => settle(null, response),
    (error) => settle(failure(context, connection, params, error, timedOut, abort.signal), null),
  );
  return { abort: () => abort.abort() };
}

// The error of an answer over one of the request's bounds.
function tooLargeOf(context: Context, method: string, path: string): TooLarge {
  return (bound, bytes) =>
    new context.errors.RequestAbortedError(
      `search connection "${context.way.name}": the answer to ${method} ${path} is over ${bound} (${bytes} bytes): not read`,
    );
}

// The error the client reads of a request that got no answer.
function failure(
  context: Context,
  connection: BaseConnection,
  params: RequestParams,
  error: unknown,
  timedOut: boolean,
  signal: AbortSignal,
): Error {
  const { ConnectionError, TimeoutError, RequestAbortedError } = context.errors;
  if (timedOut) return new TimeoutError("Request timed out", params as never);
  // An answer over a bound: the request's own, no fault of the node's.
  if (error instanceof RequestAbortedError) return error;
  if (signal.aborted) return new RequestAbortedError("Request aborted");
  return new ConnectionError(
    `search connection "${context.way.name}": ${connection.url.origin}: ${
      reason(context.way, error)
    }`,
  );
}

// One attempt: the body read whole (a SigV4 signature covers it), signed for this host and this
// time, sent, and the answer read whole into the stream the client reads, within its bounds.
async function send(
  way: ConnectionWay,
  target: URL,
  method: string,
  params: RequestParams,
  given: Record<string, unknown>,
  abort: AbortController,
  bounds: Bounds,
  tooLarge: TooLarge,
): Promise<Answer | Readable> {
  const body = await bodyOf(params.body);
  const { url, headers: auth } = way.auth?.method === "aws_sigv4"
    ? await authorize(way.auth, { method, url: target, body })
    // Headers that depend on nothing but the connection: made once.
    : {
      url: target,
      headers:
        await (way.fixedAuth ??= authorize(way.auth, { method, url: target, body }).then((a) =>
          a.headers
        )),
    };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    // The runtime counts the body itself; a stale count would cut or hang it.
    if (value === undefined || value === null || name.toLowerCase() === "content-length") continue;
    headers[name.toLowerCase()] = String(value);
  }
  // A request sent once goes on a fresh connection, through a transport that never repeats it:
  // Deno's fetch and node:http, and Bun's fetch, send a request again by themselves when its
  // connection closes before any byte of an answer (a used one for Bun, any for Deno's fetch),
  // which would apply a write twice while the client counts one attempt.
  const once = params.sentOnce === true;
  const transport = once ? way.once ?? way.transport : way.transport;
  const init: RequestInit = {
    method,
    headers: { ...headers, ...auth },
    ...(body === undefined ? {} : { body: body as BodyInit }),
    redirect: "manual",
    signal: abort.signal,
  };
  const via = once ? { fresh: true } : undefined;
  const limit = bodyLimit(bounds, tooLarge);
  const whole = transport.read !== undefined
    ? await transport.read(url, init, limit, via)
    : await wholeAnswer(await transport.fetch(url, init, via), limit, abort);
  const encoding = whole.headers["content-encoding"]?.trim().toLowerCase();
  let bytes = whole.body;
  // `fetch` decodes gzip itself (deflate not on every runtime); node:http decodes nothing. What is
  // still encoded is decoded here, within the bound.
  if (encoding !== undefined && stillEncoded(bytes, encoding)) {
    bytes = await decoded(bytes, encoding, bounds, tooLarge);
  }
  // An error answer may echo a header (a proxy's page, AWS's message): masked before anyone reads it.
  if (whole.status >= 400 && bytes.length > 0) {
    bytes = new TextEncoder().encode(way.mask(new TextDecoder().decode(bytes)));
  }
  const answer: Record<string, string> = {};
  for (const [name, value] of Object.entries(whole.headers)) {
    // The body is decoded now: the client must not decode it again, nor trust the length it had
    // on the wire.
    if (name !== "content-encoding" && name !== "content-length") answer[name] = value;
  }
  const status = whole.status;
  if (params.asStream !== true) return new Answer(status, answer, bytes);
  // The caller reads the body as a stream of its own.
  const stream = Readable.from(bytes.length === 0 ? [] : [Buffer.from(bytes)], {
    objectMode: false,
  });
  return Object.assign(stream, { statusCode: status, headers: answer });
}

/**
 * An answer read whole, as the client reads a node:http response that is not asked for as a
 * stream: `setEncoding`, then `data` and `end` once its listeners are on. Lighter than a stream.
 */
class Answer extends EventEmitter {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly #bytes: Uint8Array;
  #encoding: string | undefined;
  #destroyed = false;

  constructor(status: number, headers: Readonly<Record<string, string>>, bytes: Uint8Array) {
    super();
    this.statusCode = status;
    this.headers = headers;
    this.#bytes = bytes;
  }

  setEncoding(encoding: string): this {
    this.#encoding = encoding;
    return this;
  }

  destroy(): this {
    this.#destroyed = true;
    return this;
  }

  /** Emits the body, once the client has put its listeners on. */
  flush(): void {
    queueMicrotask(() => {
      if (this.#destroyed) return;
      if (this.#bytes.length > 0) {
        const chunk = Buffer.from(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.length);
        this.emit("data", this.#encoding === undefined ? chunk : chunk.toString("utf8"));
      }
      this.emit("end");
    });
  }
}

// The body as it is sent: text stays text, and bytes (a body compressed with gzip) stay bytes.
async function bodyOf(body: unknown): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null || body === "") return undefined;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return body.length === 0 ? undefined : body;
  if (typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") {
    const chunks: Uint8Array[] = [];
    for await (const chunk of body as AsyncIterable<string | Uint8Array>) {
      chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    }
    return chunks.length === 0 ? undefined : Buffer.concat(chunks);
  }
  return String(body);
}

// What the runtime said, with the cause it wraps (Deno and undici put the socket's error there),
// the connection's secrets masked.
function reason(way: ConnectionWay, error: unknown): string {
  const e = error as { message?: unknown; cause?: { message?: unknown; code?: unknown } };
  const own = String(e?.message ?? error);
  const cause = e?.cause?.message ?? e?.cause?.code;
  const text = cause === undefined || own.includes(String(cause)) ? own : `${own} (${cause})`;
  return way.mask(text);
}
