import type { Context } from "hono";
import type { ServerRequest } from "../http/server_request.ts";

/**
 * Whether a request without a Content-Type has no body. The framing headers decide (RFC 9112:
 * neither Content-Length nor Transfer-Encoding means none), except for a request built in code,
 * which has neither even with a body, and a server that hands every request a stream (Deno): then
 * the first chunk decides. Only a request a body binding cannot read gets here.
 */
export async function hasNoBody(c: Context, server: ServerRequest): Promise<boolean> {
  const length = server.header(c.req.raw, c.env, "content-length");
  // `0`, or `0, 0` where a server joined two fields of the same length.
  if (length !== null) return /^\s*0+\s*(,\s*0+\s*)*$/.test(length);
  if (server.header(c.req.raw, c.env, "transfer-encoding") !== null) return false;
  const stream = c.req.raw.body;
  if (stream === null) return true;
  try {
    const reader = stream.getReader(); // throws when the body was read already
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      if (value.byteLength > 0) {
        reader.cancel().catch(() => {});
        return false;
      }
    }
  } catch {
    return false; // bytes were on their way: a body, cut short
  }
}
