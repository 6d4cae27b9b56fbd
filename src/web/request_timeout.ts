// `server.request-timeout`: the app's own bound on a request, so that it holds wherever the app
// runs (`listen`, `app.fetch`, workerd). A request still unanswered then is answered 503 through
// the error path; what its handler or middleware still does runs on, and its answer is unread
// (JavaScript cannot stop a promise). An upload it reads is abandoned: the read stops, its
// temporary files are deleted, and a handler that waited on it does not start.
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { HttpException } from "../http/http_exception.ts";
import { HttpStatus } from "../http/http_status.ts";
import { abandonRequest } from "../http/request_abandon.ts";
import { withDefaultHeaders } from "./default_headers.ts";
import { type ErrorResponder, type Logger, requestLabel } from "./error_responder.ts";
import { headersBeforeRoute, setAnswer } from "./middleware.ts";

const TIMED_OUT = Symbol("timed out");

/**
 * The outermost middleware of an app with a request timeout: races the rest of the chain against
 * `ms`; past it, logs the route (method and template) and answers what `errors` makes of a 503,
 * with the headers middleware set before the route ran. `templateOf` gives the template of a
 * route's handler as Hono holds it.
 */
export function requestTimeout(
  ms: number,
  errors: ErrorResponder,
  templateOf: (handler: unknown) => string | undefined,
  logger: Logger,
): MiddlewareHandler {
  return async (c, next) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMED_OUT), ms);
    });
    let outcome: unknown;
    try {
      // A later failure of the chain is caught by the race too: it is reported where it happens
      // (the route's error path logs it), not as an unhandled rejection.
      outcome = await Promise.race([next(), late]);
    } finally {
      clearTimeout(timer);
    }
    if (outcome !== TIMED_OUT) return;
    // An upload still read stops, its temporary files go, and a handler waiting on it never runs.
    await abandonRequest(c.req.raw);
    const where = routeOf(c, templateOf);
    try {
      logger.error(
        `[thaw] ${where} did not answer within ${ms} ms (server.request-timeout): answered 503, ` +
          "and what it still does is left to run, unread",
      );
    } catch {
      // A logger that throws must not keep the answer from going.
    }
    const defaults = headersBeforeRoute(c);
    const error = new HttpException(HttpStatus.SERVICE_UNAVAILABLE, `No answer within ${ms} ms`);
    const response = await errors(error, c, undefined, where);
    setAnswer(c, defaults === undefined ? response : withDefaultHeaders(response, defaults));
  };
}

// The route the request got to: the one whose handler runs now, or, while middleware ahead of
// every route runs, the first that matched (the one it would reach).
function routeOf(c: Context, templateOf: (handler: unknown) => string | undefined): string {
  const routes = matchedRoutes(c);
  for (let i = c.req.routeIndex; i < routes.length; i++) {
    const template = templateOf(routes[i].handler);
    if (template !== undefined) return `${c.req.method} ${template}`;
  }
  return `${requestLabel(c)} (no route)`;
}
