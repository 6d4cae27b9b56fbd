import { isBodyInit } from "../http/body.ts";
import { ResponseEntity } from "../http/response_entity.ts";
import { isResponse, sendableResponse } from "../http/response_headers.ts";

// Each response gets headers of its own: @hono/node-server's Response keeps the object it is given
// and writes Content-Length into it, so a shared object would give every later response the first
// one's length (honojs/node-server#400).

/**
 * A handler's return value as a response: a `ResponseEntity` as it says, a `Response` as it is
 * (less the framing headers the server writes), a string as text, `undefined` as 204, bytes and
 * streams as they are, anything else as JSON. A header value HTTP does not allow throws.
 */
export function toResponse(value: unknown): Response {
  if (typeof value === "object" && value !== null) {
    // A plain object or array, the common case, is JSON without asking the classes below.
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === Array.prototype) return json(value);
    if (value instanceof ResponseEntity) return value.toResponse();
    if (isResponse(value)) return sendableResponse(value);
    if (value instanceof Blob) {
      // Its length is known: Deno would otherwise stream it without one.
      return new Response(value, { headers: { "content-length": String(value.size) } });
    }
    if (isBodyInit(value)) return new Response(value);
  } else if (typeof value === "string") {
    return new Response(value, { headers: { "content-type": "text/plain; charset=utf-8" } });
  } else if (value === undefined) return new Response(null, { status: 204 });
  else if (typeof value === "function" || typeof value === "symbol") {
    throw new TypeError(`A handler returned a ${typeof value}, which cannot be sent`);
  }
  return json(value);
}

function json(value: unknown): Response {
  return new Response(JSON.stringify(value), { headers: { "content-type": "application/json" } });
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
