// What a response may carry in its head. `Headers` takes values no HTTP peer may send: C0
// control characters (but tab, CR, LF and NUL) and DEL. Deno's server panics on them (the process
// is gone), Node's `writeHead` throws, Bun writes them raw; a handler that echoes a client's text
// into a header would hand a client any of the three. Characters from U+0080 to U+00FF (RFC 9110's
// obs-text) are refused too: Deno writes them as one byte each, Node as two (UTF-8, whenever the
// body is text) and Bun either way, so no value outside ASCII means the same on every runtime.
// What is left is tab, space and visible ASCII: RFC 9110 (5.5) asks new fields for no more.
const INVALID_FIELD_VALUE = /[^\t\x20-\x7e]/;

// The headers that frame the message on the connection. The server writes them from the body it
// sends; an app's own would contradict it (Node sends an app's `Content-Length: 0` before a
// 1-byte body, and the byte is read as the start of the next response) or close what the server
// keeps open. RFC 9110 (7.6.1) lists the connection-specific fields.
// `Trailer` announces trailers a fetch `Response` cannot carry (Node refuses it beside a length);
// `X-Hono-Already-Sent` is the Node adapter's private signal that the app wrote the answer itself,
// after which it waits for an answer no one writes.
const FRAMING = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "upgrade",
  "trailer",
  "x-hono-already-sent",
]);

/** A header value HTTP does not allow: the error names the header and the character, not the value. */
function invalidValue(name: string, value: string): TypeError {
  const at = value.search(INVALID_FIELD_VALUE);
  const code = value.charCodeAt(at).toString(16).toUpperCase().padStart(4, "0");
  return new TypeError(
    `Response header "${name}" holds U+${code} at index ${at}; a header value may hold tab, ` +
      "space and visible ASCII only (encode anything else), so the response was not sent",
  );
}

/**
 * Checks one header value as `Headers` would store it (trimmed of tab, space, CR and LF at both
 * ends, as the fetch standard has it): a character other than tab, space and visible ASCII throws
 * the `TypeError` {@linkcode checkResponseHeaders} throws. Checked before `Headers` sees the value,
 * so that every runtime refuses the same values: Deno's `Headers` stores `"\t\0\n\0"` as an
 * empty value where the others throw.
 */
export function checkHeaderValue(name: string, value: string): void {
  const stored = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (INVALID_FIELD_VALUE.test(stored)) throw invalidValue(name, stored);
}

/**
 * Checks the headers a response is about to be sent with, in place: a value HTTP does not allow
 * throws a `TypeError` naming the header (never quoting the value, which may be a client's), and
 * the headers only a server may write (`Content-Length`, `Transfer-Encoding`, `Connection`,
 * `Keep-Alive`, `Proxy-Connection`, `Upgrade`, `Trailer`, and the Node adapter's
 * `X-Hono-Already-Sent`) are removed. Returns whether any was removed.
 */
export function checkResponseHeaders(headers: Headers): boolean {
  let framing: string[] | undefined;
  // `forEach`, not `for...of`: Deno's iterator sorts the list again at every step (about ten
  // times the cost with the dozen headers `secureHeaders()` adds).
  headers.forEach((value, name) => {
    if (INVALID_FIELD_VALUE.test(value)) throw invalidValue(name, value);
    if (FRAMING.has(name)) (framing ??= []).push(name);
  });
  if (framing === undefined) return false;
  for (const name of framing) headers.delete(name);
  return true;
}

/**
 * Whether a value is a fetch `Response`. `instanceof Response` is not enough: on Node, Hono's
 * adapter replaces the global `Response` once a server starts, and a response the runtime made
 * (`Response.json`, `Response.redirect`, a `fetch` answer) is no instance of the replacement.
 */
export function isResponse(value: object): value is Response {
  return value instanceof Response || Object.prototype.toString.call(value) === "[object Response]";
}

/**
 * A `Response` a handler returned, as it may be sent: itself, less the headers only a server may
 * write (removed in place; from a copy when its headers are immutable, as a redirect's are); the
 * runtime's answer to a WebSocket upgrade (a 101 without a body) as it is. A
 * header value HTTP does not allow (see {@linkcode checkResponseHeaders}), or another status outside
 * 200-599 (Node and Bun would send a 1xx as the answer, and the real one after it), throws a
 * `TypeError`.
 */
export function sendableResponse(response: Response): Response {
  const status = response.status;
  // A WebSocket upgrade's answer, the runtime's: no body, and its `Upgrade` and `Connection` are
  // its own. (Bun's `Response` takes a 101 from a handler too: one with a body is refused.)
  if (status === 101 && !response.body) return response;
  if (!(status >= 200 && status <= 599)) {
    throw new TypeError(`A handler returned a Response with status ${status}; give 200-599`);
  }
  // In place, the body stays what it was (a Blob keeps the length the server writes from it). A
  // value HTTP does not allow throws again from the copy.
  try {
    checkResponseHeaders(response.headers);
    return response;
  } catch {
    const headers = new Headers(response.headers);
    checkResponseHeaders(headers);
    return new Response(response.body, { status, statusText: response.statusText, headers });
  }
}
