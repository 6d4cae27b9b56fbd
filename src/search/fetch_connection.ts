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
import type {
  Outgoing,
  Reading,
  Transport,
  WholeAnswer,
} from "../migrate/search/http/transport.ts";
import {
  bodyLimit,
  type Bounds,
  boundsOf,
  decoded,
  stillEncoded,
  type TooLarge,
} from "./answer_bounds.ts";
import { readThroughFetch } from "./fetch_reading.ts";
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
  /** Those headers, once `fixedAuth` has settled: no request waits for them again. */
  fixedHeaders?: Readonly<Record<string, string>>;
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
      return new Attempt(this, context, params, built, sendable, callback).start(built.headers);
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
  given: GivenUp | undefined,
): Error {
  const { ConnectionError, TimeoutError, RequestAbortedError } = context.errors;
  if (given === "timeout") return new TimeoutError("Request timed out", params as never);
  // An answer over a bound: the request's own, no fault of the node's.
  if (error instanceof RequestAbortedError) return error;
  if (given === "abort") return new RequestAbortedError("Request aborted");
  return new ConnectionError(
    `search connection "${context.way.name}": ${connection.url.origin}: ${
      reason(context.way, error)
    }`,
  );
}

/** Why a request was given up. */
type GivenUp = "timeout" | "abort";

/**
 * One attempt of a request: sent, its answer read whole within its bounds and handed to the
 * client's callback once, or the error the client reads (a timeout, an abort, or the connection's
 * failure).
 */
class Attempt {
  readonly #connection: BaseConnection;
  readonly #context: Context;
  readonly #params: RequestParams;
  readonly #sendable: Sendable;
  readonly #tooLarge: TooLarge;
  readonly #callback: Callback;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #reading: Reading | undefined;
  #given: GivenUp | undefined;
  #settled = false;

  constructor(
    connection: BaseConnection,
    context: Context,
    params: RequestParams,
    built: Built,
    sendable: Sendable,
    callback: Callback,
  ) {
    this.#connection = connection;
    this.#context = context;
    this.#params = params;
    this.#sendable = sendable;
    this.#tooLarge = tooLargeOf(context, sendable.method, built.path);
    this.#callback = callback;
  }

  /** Sends it, with `given` (the client's headers); what the client may call to abort it. */
  start(given: Record<string, unknown>): { abort(): void } {
    this.#connection._openRequests++;
    const timeout = this.#params.timeout;
    // A timer of its own, cleared with the answer: cheaper than AbortSignal.timeout and any().
    if (typeof timeout === "number" && timeout > 0) {
      this.#timer = setTimeout(() => this.#giveUp("timeout"), timeout);
    }
    try {
      const out = outgoing(
        this.#context.way,
        this.#connection.url,
        this.#sendable,
        this.#params,
        given,
      );
      if (out instanceof Promise) {
        out.then((ready) => this.#send(ready), (error) => this.#fail(error));
      } else this.#send(out);
    } catch (error) {
      // A header with no text: the client reads it as any other failure, never as a throw, and
      // not before request() has returned (its Transport keeps what request() returns as the
      // handle of the attempt, a retry's too).
      queueMicrotask(() => this.#fail(error));
    }
    return { abort: () => this.#giveUp("abort") };
  }

  #send(out: Outgoing): void {
    // Given up before it went out (while it was being signed): it does not go.
    if (this.#given !== undefined) return this.#fail(new Error("given up before it was sent"));
    const { way } = this.#context;
    // A request sent once goes through a transport that never repeats it (see outgoing()).
    const transport = out.via?.fresh ? way.once ?? way.transport : way.transport;
    const limit = bodyLimit(this.#sendable.bounds, this.#tooLarge);
    try {
      this.#reading = transport.read !== undefined
        ? transport.read(out, limit)
        : readThroughFetch(transport, out, limit);
    } catch (error) {
      // A URL or headers the runtime will not make: nothing was sent. Told later, as above.
      return queueMicrotask(() => this.#fail(error));
    }
    this.#reading.answer.then((whole) => this.#answered(whole), (error) => this.#fail(error));
  }

  #answered(whole: WholeAnswer): void {
    const encoding = whole.headers["content-encoding"]?.trim().toLowerCase();
    // `fetch` decodes gzip itself (deflate not on every runtime); node:http decodes nothing. What
    // is still encoded is decoded here, within the bound.
    if (encoding === undefined || !stillEncoded(whole.body, encoding)) {
      return this.#answer(whole, whole.body);
    }
    decoded(whole.body, encoding, this.#sendable.bounds, this.#tooLarge).then(
      (bytes) => this.#answer(whole, bytes),
      (error) => this.#fail(error),
    );
  }

  #answer(whole: WholeAnswer, bytes: Uint8Array): void {
    let answer: Answer | Readable;
    try {
      answer = answerOf(this.#context.way, whole, bytes, this.#params);
    } catch (error) {
      return this.#fail(error);
    }
    this.#settle(null, answer);
  }

  #giveUp(why: GivenUp): void {
    this.#given ??= why;
    this.#reading?.cancel();
    // Not sent yet (being signed): there is nothing to cancel, and nothing more to wait for.
    if (this.#reading === undefined) this.#fail(new Error("given up"));
  }

  #fail(error: unknown): void {
    let told: Error;
    try {
      told = failure(this.#context, this.#connection, this.#params, error, this.#given);
    } catch {
      // The mask itself failed: the call still ends, and no unmasked text leaves.
      told = new this.#context.errors.ConnectionError(
        `search connection "${this.#context.way.name}": ${this.#connection.url.origin}: the request failed and its reason could not be masked`,
      );
    }
    this.#settle(told, null);
  }

  #settle(error: Error | null, response: Answer | Readable | null): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#connection._openRequests--;
    this.#callback(error, response as Parameters<Callback>[1]);
    if (response instanceof Answer) response.flush();
  }
}

/**
 * The request as it goes out to `origin`: the body read whole (a SigV4 signature covers it), the
 * authentication headers added (signed for this host and this time). A promise only where
 * something must be waited for: a SigV4 signature, a body given as an iterable, the first request's
 * fixed headers.
 */
function outgoing(
  way: ConnectionWay,
  origin: URL,
  sendable: Sendable,
  params: RequestParams,
  given: Record<string, unknown>,
): Outgoing | Promise<Outgoing> {
  const headers: Record<string, string> = {};
  for (const name in given) {
    const value = given[name];
    if (value === undefined || value === null) continue;
    const lower = name.toLowerCase();
    // The runtime counts the body itself; a stale count would cut or hang it.
    if (lower !== "content-length") headers[lower] = String(value);
  }
  // A request sent once goes on a fresh connection, through a transport that never repeats it:
  // Deno's fetch and node:http, and Bun's fetch, send a request again by themselves when its
  // connection closes before any byte of an answer (a used one for Bun, any for Deno's fetch),
  // which would apply a write twice while the client counts one attempt.
  const via = params.sentOnce === true ? { via: { fresh: true } } : {};
  const { path, method } = sendable;
  const out = (body: string | Uint8Array | undefined, sent = path): Outgoing => ({
    origin,
    path: sent,
    method,
    headers,
    body,
    ...via,
  });
  if (isText(params.body) && way.auth?.method !== "aws_sigv4" && way.fixedHeaders !== undefined) {
    Object.assign(headers, way.fixedHeaders);
    return out(bodyText(params.body));
  }
  return (async () => {
    const body = isText(params.body) ? bodyText(params.body) : await bodyOf(params.body);
    if (way.auth?.method !== "aws_sigv4") {
      Object.assign(headers, await fixedHeaders(way, origin, method, body));
      return out(body);
    }
    // Joined as text: resolved against the host, a path starting with `//` (an empty index name
    // makes one) would name another host, and the credentials would go there.
    const url = new URL(`${origin.origin}${path}`);
    const signed = await authorize(way.auth, { method, url, body });
    Object.assign(headers, signed.headers);
    return out(body, `${signed.url.pathname}${signed.url.search}`);
  })();
}

// The headers of a method that signs nothing per request (basic, API key, bearer), made once and
// kept on the way out.
async function fixedHeaders(
  way: ConnectionWay,
  origin: URL,
  method: string,
  body: string | Uint8Array | undefined,
): Promise<Readonly<Record<string, string>>> {
  way.fixedAuth ??= authorize(way.auth, { method, url: origin, body }).then((a) => a.headers);
  const headers = await way.fixedAuth;
  way.fixedHeaders = headers;
  return headers;
}

// An answer read whole as the client reads it, `bytes` its body as decoded: an error answer's
// text masked, and no header that speaks of the body as it was on the wire.
function answerOf(
  way: ConnectionWay,
  whole: WholeAnswer,
  bytes: Uint8Array,
  params: RequestParams,
): Answer | Readable {
  // An error answer may echo a header (a proxy's page, AWS's message): masked before anyone reads it.
  const body = whole.status >= 400 && bytes.length > 0
    ? new TextEncoder().encode(way.mask(new TextDecoder().decode(bytes)))
    : bytes;
  const headers: Record<string, string> = {};
  for (const name in whole.headers) {
    // The body is decoded now: the client must not decode it again, nor trust the length it had
    // on the wire.
    if (name !== "content-encoding" && name !== "content-length") {
      headers[name] = whole.headers[name];
    }
  }
  const status = whole.status;
  if (params.asStream !== true) return new Answer(status, headers, body);
  // The caller reads the body as a stream of its own.
  const stream = Readable.from(body.length === 0 ? [] : [Buffer.from(body)], {
    objectMode: false,
  });
  return Object.assign(stream, { statusCode: status, headers });
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

// Whether `body` is sent as it is: no body, text or bytes.
function isText(body: unknown): body is string | Uint8Array | undefined | null {
  return body === undefined || body === null || typeof body === "string" ||
    body instanceof Uint8Array;
}

// The body as it is sent: text stays text, and bytes (a body compressed with gzip) stay bytes.
function bodyText(body: string | Uint8Array | undefined | null): string | Uint8Array | undefined {
  return body === undefined || body === null || body.length === 0 ? undefined : body;
}

// Any other body: an iterable read whole, or anything else as its text.
async function bodyOf(body: unknown): Promise<string | Uint8Array | undefined> {
  if (typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") {
    const chunks: Uint8Array[] = [];
    for await (const chunk of body as AsyncIterable<string | Uint8Array>) {
      chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    }
    return chunks.length === 0 ? undefined : Buffer.concat(chunks);
  }
  return bodyText(String(body));
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
