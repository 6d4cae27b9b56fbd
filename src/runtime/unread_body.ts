import { bodyAbandoned } from "../http/read_body.ts";

/**
 * The largest body Bun reads by itself unless the app takes larger ones (its `maxRequestBodySize`,
 * set by `serve`): a larger declared length it refuses before any code runs, on most methods.
 */
export const BUN_MAX_BODY = 128 * 1024 * 1024;

/**
 * Whether an answer leaves behind a request body that Bun would read without a bound: chunked (no
 * declared length), or declared over `cap`, Bun's `maxRequestBodySize` (a GET's, which Bun lets
 * through), and not read to its end by the app (never touched, or given up over the body limit).
 */
export function unboundedBodyLeft(request: Request, cap: number = BUN_MAX_BODY): boolean {
  // The framing headers say whether there is a body (RFC 9112, 6.3); `request.body` does not, as
  // Bun makes a stream on every read of it.
  const declared = request.headers.get("content-length");
  if (declared === null) {
    if (request.headers.get("transfer-encoding") === null) return false;
  } else if (!(Number(declared) > cap)) return false;
  return !request.bodyUsed || bodyAbandoned(request);
}
