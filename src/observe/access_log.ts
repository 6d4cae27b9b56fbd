// The access log (`logging.access.enabled`, with the logging feature): one entry per request, and
// one per event stream or WebSocket at its end. Only `@thaw/thaw/logging` imports it: an app
// without that feature does not carry it.
import { unicodeEscape } from "../shown_value.ts";
import { knownBodyLength, recordBodyLengths } from "../http/body_length.ts";
import { type RequestObserver, responseBytes } from "./request_observer.ts";
import type { StreamKind, StreamLog } from "./open_streams.ts";
import type { ForwardHeadersStrategy } from "../runtime/client_address.ts";
import { clientSource } from "./client_source.ts";
import { requestHeader } from "../runtime/node_incoming.ts";

/** What the access log says of one request. */
export interface AccessLogEntry {
  /** When the request came in, ISO 8601. */
  readonly time: string;
  /** The method as the client sent it. */
  readonly method: string;
  /** The route template that took it, or `NOT_FOUND` / `UNKNOWN`. */
  readonly route: string;
  /** The path as the client sent it, without the query. */
  readonly path: string;
  readonly status: number;
  /** Milliseconds until the answer's head was ready, to the microsecond. */
  readonly duration_ms: number;
  /**
   * The body's length in bytes, where it is known before it is sent: an answer made from text or
   * bytes, or one whose `Content-Length` gives it (not a stream).
   */
  readonly bytes?: number | undefined;
  /** The W3C trace id, where the request was traced. */
  readonly trace_id?: string | undefined;
  /**
   * The client's address: the socket's peer, or what a proxy says by
   * `server.forward-headers-strategy`; absent where nothing tells it (workerd by default).
   */
  readonly client_address?: string | undefined;
  /** The `User-Agent` the client sent, cut at 512 characters. */
  readonly user_agent?: string | undefined;
}

// JSON.stringify escapes C0 controls, `"` and `\` and lone surrogates; these it leaves as they
// are, and each breaks a line, or hides text, in some log viewer: DEL, the C1 controls (NEL,
// U+0085, is a line break to some), U+2028 and U+2029, and the bidirectional overrides.
const UNSAFE = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * One entry as one line of JSON, every byte a client sent in it (method, path, user agent, a
 * forwarded address) escaped so that it can neither end the line nor forge another.
 */
export function accessLogLine(entry: AccessLogEntry): string {
  return JSON.stringify(entry).replace(UNSAFE, unicodeEscape);
}

/**
 * The path of `url` as the client sent it (Node's adapter and the others keep it so, percent-
 * encoding aside), without the query, cut at 2,048 characters so that one request cannot fill the
 * log.
 */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.indexOf("?", start);
  return cut(end < 0 ? url.slice(start) : url.slice(start, end), 2048);
}

// What a client sends, cut so that one request cannot fill the log.
const cut = (text: string, most: number) => text.length > most ? `${text.slice(0, most)}…` : text;

/**
 * The access log: one entry per request to `write`, the client's address by `strategy`
 * (`server.forward-headers-strategy`).
 */
export function accessLogObserver(
  write: (entry: AccessLogEntry) => void,
  strategy?: ForwardHeadersStrategy,
): RequestObserver {
  recordBodyLengths();
  return async (exchange, proceed) => {
    const time = new Date().toISOString();
    const start = performance.now();
    const { request, env } = exchange;
    // Asked before the answer: once it is sent, Bun may no longer know the socket.
    const address = clientSource.address?.(request, env, strategy);
    const agent = requestHeader(request, env, "user-agent");
    const log = (status: number, bytes: number | undefined) => {
      try {
        write({
          time,
          method: cut(request.method, 32),
          route: exchange.route(),
          path: pathOf(request.url),
          status,
          duration_ms: since(start),
          // What is unknown is `undefined`, which JSON leaves out.
          bytes,
          trace_id: exchange.traceId,
          client_address: address,
          user_agent: agent === null ? undefined : cut(agent, 512),
        });
      } catch {
        // A logger that throws does not fail the request it logs.
      }
    };
    let response: Response;
    try {
      response = await proceed();
    } catch (error) {
      // What the server answers a fetch that threw.
      log(500, undefined);
      throw error;
    }
    log(response.status, knownBodyLength(response) ?? responseBytes(response));
    return response;
  };
}

/** The access-log entry of a stream or socket at its end. */
export interface StreamLogEntry extends AccessLogEntry {
  readonly stream: StreamKind;
  /** Events or messages sent. */
  readonly sent: number;
  /** Messages received (a socket). */
  readonly received?: number;
  /** Bytes received (a socket). */
  readonly bytes_received?: number;
}

/**
 * The access log of the streams and sockets that stay open: one entry each to `write` at its end,
 * with how long it ran and what it carried (the request's own entry says only how its head went).
 * Only the path is kept, not the request: a socket may stay open for days.
 */
export function streamAccessLog(write: (entry: StreamLogEntry) => void): StreamLog {
  return (stream, route, url, status) => {
    const time = new Date().toISOString();
    const start = performance.now();
    const path = pathOf(url);
    return (carried) => {
      try {
        write({
          time,
          method: "GET",
          route,
          path,
          status,
          duration_ms: since(start),
          bytes: carried.sent.bytes,
          stream,
          sent: carried.sent.messages,
          ...(carried.received === undefined ? {} : {
            received: carried.received.messages,
            bytes_received: carried.received.bytes,
          }),
        });
      } catch {
        // A logger that throws does not fail the stream it logs.
      }
    };
  };
}

// Milliseconds since `start`, to the microsecond.
const since = (start: number): number => Math.round((performance.now() - start) * 1000) / 1000;
