import { Agent as HttpsAgent, request } from "node:https";
import {
  Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
  request as httpRequest,
} from "node:http";
import { Buffer } from "node:buffer";
import type { Socket } from "node:net";
import { CONNECT_TIMEOUT_CODE } from "./send_failure.ts";
import { BoundedBody } from "./bounded_body.ts";
import type { BodyLimit, ReadingTransport, TransportOptions, WholeAnswer } from "./transport.ts";

/**
 * A transport on `node:http` / `node:https`: Node's for every connection without a proxy, and on
 * Deno and Bun for what their `fetch` cannot do for one connection alone:
 * `Deno.createHttpClient` has no switch to skip certificate checks (only the process-wide
 * `--unsafely-ignore-certificate-errors` flag) and always honours `HTTP(S)_PROXY`; Deno's and
 * Bun's `fetch` give no connect timeout. This transport does all three and never reads the proxy
 * variables. It cannot go through a proxy itself.
 */
export function nodeHttpTransport(options: TransportOptions): ReadingTransport {
  if (options.proxy) {
    throw new Error("proxy cannot be combined with ssl_verification: false on this runtime");
  }
  // Pools of its own: Node's global agents go through HTTP(S)_PROXY when the process was started
  // with NODE_USE_ENV_PROXY=1 (Node 24 and later), which `proxy: false` must not, and which the
  // requests sent on a connection of their own (`agent: false`) would not either.
  const pools = {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true }),
  };
  const agentOf = (url: URL, fresh: boolean | undefined) =>
    fresh ? false : url.protocol === "https:" ? pools.https : pools.http;
  return {
    sendsGetBodies: true,
    fetch: async (url, init, via) => {
      // A body given as a stream is one that must not be sent twice (see search_client.ts): it
      // goes on a connection of its own, which Deno's node:http never replays (a reused one it
      // may, denoland/deno#36786). Bytes stay bytes: a compressed body is no text.
      const once = init.body instanceof ReadableStream;
      const body = once
        ? new Uint8Array(await new Response(init.body).arrayBuffer())
        : init.body as string | Uint8Array | undefined;
      const request: NodeRequest = {
        origin: url,
        path: `${url.pathname}${url.search}`,
        method: init.method ?? "GET",
        headers: init.headers as Record<string, string> | undefined,
        body,
        ...(init.signal ? { signal: init.signal } : {}),
      };
      return await sendOnNode<Response>(
        request,
        agentOf(url, once || via?.fresh),
        options,
        (res, answered, fail) => responseOf(res, request.method, answered, fail),
      ).answer;
    },
    read: (out, limit) =>
      sendOnNode<WholeAnswer>(
        out,
        agentOf(out.origin, out.via?.fresh),
        options,
        (res, answered, fail) => readWhole(res, out.method, limit, answered, fail),
      ),
    close() {
      pools.http.destroy();
      pools.https.destroy();
    },
  };
}

/** One request as node:http sends it. */
interface NodeRequest {
  readonly origin: URL;
  readonly path: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly body: string | Uint8Array | undefined;
  readonly signal?: AbortSignal;
}

/** What an answer's head is turned into: `answered` once, or `fail`. */
type Answering<T> = (
  res: IncomingMessage,
  answered: (value: T) => void,
  fail: (error: unknown) => void,
) => void;

// One request on node:http(s), settled once: node:http can end a request with neither
// "response" nor "error" (a 101 answer with no upgrade listener destroys the socket and only
// emits "close"). The request's target is given as its parts: node:http would take a URL apart
// again.
function sendOnNode<T>(
  out: NodeRequest,
  agent: HttpAgent | HttpsAgent | false,
  options: TransportOptions,
  answering: Answering<T>,
): { answer: Promise<T>; cancel(): void } {
  // Unset where node:http refused the request before making it (a header it will not write): the
  // answer has failed then.
  let req: ClientRequest | undefined;
  let fail!: (error: unknown) => void;
  const answer = new Promise<T>((resolve, reject) => {
    let settled = false;
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      fn();
    };
    fail = (error: unknown) => settle(() => reject(error));
    const https = out.origin.protocol === "https:";
    const hostname = out.origin.hostname;
    req = (https ? request : httpRequest)({
      protocol: out.origin.protocol,
      // node:http takes an IPv6 address without its brackets.
      hostname: hostname.startsWith("[") ? hostname.slice(1, -1) : hostname,
      port: out.origin.port === "" ? undefined : out.origin.port,
      path: out.path,
      method: out.method,
      headers: withLength(out.headers, out.body),
      rejectUnauthorized: options.sslVerification,
      agent,
      ...(out.signal === undefined ? {} : { signal: out.signal }),
    }, (res) => {
      // Response() takes 200-599 only: anything else is not an answer this client reads.
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 599) {
        res.destroy();
        return fail(new Error(`HTTP status ${status} from the host`));
      }
      answering(res, (value) => settle(() => resolve(value)), fail);
    });
    const made = req;
    made.on("socket", (socket) => {
      // A request given up before it had a socket needs no deadline (nothing would clear it).
      if (!settled) deadline = connectDeadline(made, socket, https, options.connectTimeoutMs);
    });
    made.on("error", fail);
    made.on("close", () => {
      // After any "end" still queued (a body delimited by the close itself ends after "close").
      if (!settled) setImmediate(() => fail(new Error("the connection closed without an answer")));
    });
  });
  // As the official client does: a request goes out whole at once, not held back by Nagle's
  // algorithm until the last segment is acknowledged.
  req?.setNoDelay(true);
  req?.end(out.body);
  return {
    answer,
    cancel() {
      fail(new Error("the request was given up"));
      req?.destroy();
    },
  };
}

// Whether an answer has no body: a HEAD's, or a status that never has one.
function bodiless(status: number, method: string | undefined): boolean {
  return status === 204 || status === 205 || status === 304 || method === "HEAD";
}

// The answer as a Response once its head came; anything Response() cannot hold fails. Its body
// is read as it comes, not gathered first: the reader bounds it (a search connection's
// maxResponseSize), and an answer that is too large or never ends must not be held whole first.
function responseOf(
  res: IncomingMessage,
  method: string | undefined,
  answered: (response: Response) => void,
  fail: (error: unknown) => void,
): void {
  const status = res.statusCode!;
  const headers = new Headers();
  try {
    for (const [k, v] of Object.entries(res.headers)) {
      if (typeof v === "string") headers.set(k, v);
    }
  } catch (error) {
    res.destroy();
    return fail(error);
  }
  if (bodiless(status, method)) {
    // Read to its end, so that the connection goes back to the pool.
    res.resume();
    return answered(new Response(null, { status, headers }));
  }
  answered(new Response(bodyOf(res), { status, headers }));
}

// The answer read whole, its body no longer than `limit` allows: past it the connection is
// closed, so that an answer too large or never ending is not held.
function readWhole(
  res: IncomingMessage,
  method: string | undefined,
  limit: BodyLimit,
  answered: (answer: WholeAnswer) => void,
  fail: (error: unknown) => void,
): void {
  const status = res.statusCode!;
  const headers: Record<string, string> = {};
  const given = res.headers;
  for (const name in given) {
    const value = given[name];
    // As fetch gives them: the values of a header sent more than once, joined.
    if (value !== undefined) headers[name] = typeof value === "string" ? value : value.join(", ");
  }
  if (bodiless(status, method)) {
    res.resume();
    return answered({ status, headers, body: new Uint8Array(0) });
  }
  const declared = headers["content-length"];
  const body = new BoundedBody(
    limit,
    headers["content-encoding"]?.trim().toLowerCase(),
    declared === undefined ? undefined : Number(declared),
  );
  res.on("data", (chunk: Uint8Array) => {
    const over = body.add(chunk);
    if (over === undefined) return;
    res.destroy();
    fail(over);
  });
  res.on("end", () => {
    const bytes = body.bytes();
    if (bytes instanceof Error) fail(bytes);
    else answered({ status, headers, body: bytes });
  });
  const cut = (cause?: unknown) =>
    fail(new Error("the connection closed before the answer's end", { cause }));
  res.on("error", cut);
  res.on("close", () => {
    if (!res.complete) cut();
  });
}

// `res`'s body as a stream that holds at most a chunk ahead of its reader: a connection that
// ends before the body does is the stream's error, and a reader that cancels closes the
// connection.
function bodyOf(res: IncomingMessage): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const end = (error?: unknown) => {
        if (done) return;
        done = true;
        if (error === undefined) controller.close();
        else controller.error(error);
      };
      res.on("data", (chunk: Uint8Array) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.on("end", () => end());
      res.on("error", (error) => end(error));
      res.on("close", () => {
        if (!res.complete) end(new Error("the connection closed before the answer's end"));
      });
    },
    pull() {
      res.resume();
    },
    cancel() {
      done = true;
      res.destroy();
    },
  });
}

// No connection within connect_timeout counts as unreachable: the request never left. For https
// the connection is made when the TLS handshake is done, since the TLS socket holds the request
// back until then. A socket reused from the pool is connected already and gets no such deadline:
// its silence says nothing about the request (the request's own timeout still applies), and a
// request on it pays for no timer. A timer of its own, not the socket's idle timeout, which Bun
// never fires on a TLS socket whose handshake stalls.
function connectDeadline(
  req: ClientRequest,
  socket: Socket,
  https: boolean,
  connectTimeoutMs: number,
): ReturnType<typeof setTimeout> | undefined {
  if (req.reusedSocket || (!https && !socket.connecting)) return undefined;
  const deadline = setTimeout(() => {
    req.destroy(
      Object.assign(new Error(`no connection within ${connectTimeoutMs / 1000} s`), {
        code: CONNECT_TIMEOUT_CODE,
      }),
    );
  }, connectTimeoutMs);
  socket.once(https ? "secureConnect" : "connect", () => clearTimeout(deadline));
  return deadline;
}

/**
 * `headers` with the body's length. node:http frames a body it is not told the length of only for
 * the methods it sends chunked: a DELETE's or a GET's bytes would go with neither a length nor
 * chunks, the server would read the request as bodiless, and the bytes as the start of the next
 * request on the connection.
 */
function withLength(
  headers: Readonly<Record<string, string>> | undefined,
  body: string | Uint8Array | undefined,
): Readonly<Record<string, string>> {
  if (body === undefined) return headers ?? {};
  const sent = { ...headers };
  for (const name of Object.keys(sent)) {
    if (name.toLowerCase() === "content-length") delete sent[name];
  }
  sent["content-length"] = String(Buffer.byteLength(body));
  return sent;
}
