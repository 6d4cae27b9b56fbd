import { bodyAbandoned } from "../http/read_body.ts";

/**
 * The largest body Bun reads by itself (its `maxRequestBodySize`, set to this by `serve`, or to
 * `server.multipart.max-request-size` when that is larger): a larger declared length it refuses
 * before any code runs, on most methods.
 */
export const BUN_MAX_BODY = 128 * 1024 * 1024;

/**
 * Whether an answer leaves behind a request body that Bun would read without a bound: chunked (no
 * declared length), or declared over {@linkcode BUN_MAX_BODY} (a GET's, which Bun lets through,
 * or an upload's where the app takes larger ones), and not read to its end by the app (never
 * touched, or given up over the body limit).
 */
export function unboundedBodyLeft(request: Request): boolean {
  // The framing headers say whether there is a body (RFC 9112, 6.3); `request.body` does not, as
  // Bun makes a stream on every read of it.
  const declared = request.headers.get("content-length");
  if (declared === null) {
    if (request.headers.get("transfer-encoding") === null) return false;
  } else if (!(Number(declared) > BUN_MAX_BODY)) return false;
  return !request.bodyUsed || bodyAbandoned(request);
}
