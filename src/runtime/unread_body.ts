import { bodyAbandoned } from "../http/read_body.ts";

/**
 * Whether an answer leaves behind a chunked request body (no declared length, so no bound) that
 * the app did not read to its end: it never touched it, or gave up over the body limit.
 */
export function unreadChunkedBody(request: Request): boolean {
  // The framing headers say whether there is a body (RFC 9112, 6.3); `request.body` does not, as
  // Bun makes a stream on every read of it.
  if (request.headers.get("content-length") !== null) return false;
  if (request.headers.get("transfer-encoding") === null) return false;
  return !request.bodyUsed || bodyAbandoned(request);
}
