import { isBodyInit } from "../http/body.ts";
import { withKnownBody } from "../http/body_length.ts";
import { ResponseEntity } from "../http/response_entity.ts";
import { isResponse, sendableResponse } from "../http/response_headers.ts";
import { addDefaultHeaders, withDefaultHeaders } from "./default_headers.ts";

// Each response gets headers of its own: @hono/node-server's Response keeps the object it is given
// and writes Content-Length into it, so a shared object would give every later response the first
// one's length (honojs/node-server#400).

/**
 * A handler's return value as a response: a `ResponseEntity` as it says, a `Response` as it is
 * (less the framing headers the server writes), a string as text, `undefined` as 204, bytes and
 * streams as they are, anything else as JSON. A header value HTTP does not allow throws.
 *
 * `defaults` are the headers middleware set before the route ran, added as
 * {@linkcode withDefaultHeaders} adds them. A response this function makes is made with them
 * rather than copied: on Node, copying Hono's adapter's response turns a text body into a stream.
 * `status` (`@ResponseStatus`) is the status of a response it makes; with one that has no content
 * (`204`), the value is not sent.
 */
export function toResponse(value: unknown, defaults?: Headers, status?: number): Response {
  if (status !== undefined && NO_CONTENT.has(status)) value = withoutContent(value);
  if (typeof value === "object" && value !== null) {
    // A plain object or array, the common case, is JSON without asking the classes below.
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === Array.prototype) {
      return made(JSON.stringify(value), jsonHeaders(), defaults, status);
    }
    if (value instanceof ResponseEntity) return adopted(value.toResponse(), defaults);
    if (isResponse(value)) return adopted(sendableResponse(value), defaults);
    if (value instanceof Blob) {
      // Its length is known: Deno would otherwise stream it without one. Its type is its own
      // header, which a middleware's default must not replace, and which Node's adapter does not
      // take from the body.
      const own: Record<string, string> = { "content-length": String(value.size) };
      if (value.type !== "") own["content-type"] = value.type;
      return made(value, own, defaults, status);
    }
    // A form's type (a multipart boundary) is known only once the response is made.
    if (value instanceof FormData || value instanceof URLSearchParams) {
      return adopted(new Response(value, status === undefined ? {} : { status }), defaults);
    }
    if (isBodyInit(value)) return made(value, undefined, defaults, status);
  } else if (typeof value === "string") return made(value, textHeaders(), defaults, status);
  else if (value === undefined) return made(null, undefined, defaults, status ?? 204);
  else if (typeof value === "function" || typeof value === "symbol") {
    throw new TypeError(`A handler returned a ${typeof value}, which cannot be sent`);
  }
  return made(JSON.stringify(value), jsonHeaders(), defaults, status);
}

// The statuses a Response may not have a body with.
const NO_CONTENT: ReadonlySet<number> = new Set([204, 205, 304]);

// What a handler returned for an answer that carries none: an entity or a response keeps its own
// status, so stays; any other value goes, and a stream is cancelled rather than left open.
function withoutContent(value: unknown): unknown {
  if (
    value instanceof ResponseEntity ||
    (typeof value === "object" && value !== null && isResponse(value))
  ) {
    return value;
  }
  if (value instanceof ReadableStream) value.cancel().catch(() => {});
  return undefined;
}

// Made anew for each response (see above), as literals: a spread copy costs Bun's JIT more than
// the response it goes into.
const jsonHeaders = (): Record<string, string> => ({ "content-type": "application/json" });
const textHeaders = (): Record<string, string> => ({ "content-type": "text/plain; charset=utf-8" });

// `own` is the response's own object, made for it.
function made(
  body: BodyInit | null,
  own: Record<string, string> | undefined,
  defaults: Headers | undefined,
  status?: number,
): Response {
  let headers: Record<string, string> | Headers | undefined = own;
  if (defaults !== undefined) {
    headers = new Headers(own);
    addDefaultHeaders(headers, defaults);
  }
  const init: ResponseInit | undefined = headers === undefined
    ? (status === undefined ? undefined : { status })
    : (status === undefined ? { headers } : { status, headers });
  const response = new Response(body, init);
  return withKnownBody(response, body);
}

function adopted(response: Response, defaults: Headers | undefined): Response {
  return defaults === undefined ? response : withDefaultHeaders(response, defaults);
}

/**
 * A GET handler's answer to a HEAD request: its status and headers, without the body (cancelled).
 * Hono makes the HEAD answer from it with `new Response(null, answer)`, which Node's adapter fails
 * for a response made without options (bytes, a stream): this one always has them.
 */
export function headAnswer(response: Response): Response {
  response.body?.cancel().catch(() => {});
  return new Response(null, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
