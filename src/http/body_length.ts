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
// Module-level as `bodies` is: a response is made before anyone knows its app (in a handler's
// `new Response`); turned on by the first app with an access log, for the process.
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

/**
 * What a string takes as UTF-8, as the runtimes encode it (a lone surrogate as U+FFFD, 3 bytes),
 * counted rather than encoded: no copy of a large text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf8Length } from "./body_length.ts";
 *
 * assert.equal(utf8Length("hé"), 3);
 * assert.equal(utf8Length("🍵"), 4);
 * assert.equal(utf8Length("\ud800"), 3);
 * ```
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A pair: 4 bytes for 2 units.
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2;
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}
