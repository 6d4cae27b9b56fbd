import { utf8Length } from "./utf8_length.ts";
/**
 * The length of a body Thaw made a response from (text, bytes), kept beside the response for the
 * access log: such a response has no `Content-Length` until the server writes one, and the log is
 * written before that. Kept aside rather than written as a header: a middleware that replaces the
 * body and copies the headers (`c.res = new Response(other, c.res)`, as Hono's own docs show)
 * would send a stale length with the new body, where here the new response is simply not known.
 * A stream's length is never known: it is not read to count it.
 *
 * @module
 */

// By response: its text, measured only when asked (most requests are not logged), or the length
// of its bytes, taken at once (a buffer may be transferred once sent).
const bodies = new WeakMap<Response, string | number>();
let recording = false;

/** Starts keeping bodies: called once something will ask (the access log is on). */
export function recordBodyLengths(): void {
  recording = true;
}

/**
 * `response`, noted as made from `body` when it is text or bytes (a stream, a form or nothing is
 * not noted).
 */
export function withKnownBody(response: Response, body: unknown): Response {
  if (!recording) return response;
  if (typeof body === "string") bodies.set(response, body);
  else if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
    bodies.set(response, body.byteLength);
  } else if (body instanceof Blob) bodies.set(response, body.size);
  return response;
}

/** Notes `copy`, made from `original`'s body as it is, as having the same body. */
export function sameKnownBody(original: Response, copy: Response): Response {
  const body = bodies.get(original);
  if (body !== undefined) bodies.set(copy, body);
  return copy;
}

/** The body's length in bytes, where `response` was noted as made from text or bytes. */
export function knownBodyLength(response: Response): number | undefined {
  const body = bodies.get(response);
  return typeof body === "string" ? utf8Length(body) : body;
}
