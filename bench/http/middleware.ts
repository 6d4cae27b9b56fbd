// The middleware of the benchmark's "with middleware" servers: the same two Hono middlewares, in
// the same order, given to Thaw as `bootstrap({ middleware })` and to bare Hono as
// `app.use("*", ...)`. `cors()` answers with `Access-Control-Allow-Origin: *`; `secureHeaders()`
// adds its eleven headers after the route has answered.
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { secureHeaders } from "hono/secure-headers";

/** Fresh instances of `cors()` and `secureHeaders()`, in that order. */
export function benchMiddleware(): MiddlewareHandler[] {
  return [cors(), secureHeaders()];
}
