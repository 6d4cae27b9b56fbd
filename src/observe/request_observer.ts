// What sees every request from outside the router: the request metrics, the server span and the
// access log. They wrap the app's fetch, so that Thaw's own answers (404, 405, OPTIONS, 413) pass
// them as a controller's do; only the route template comes from inside, marked by the route that
// answered (see `RouteMarks`).

/** One request on its way through the observers. */
export interface Exchange {
  readonly request: Request;
  /**
   * What the runtime handed the fetch beside the request: Deno's `info`, Bun's server, Node's
   * `{ incoming, outgoing }`, an edge runtime's bindings.
   */
  readonly env?: unknown;
  /** The method, as a bounded label: one of the HTTP methods, else `_OTHER`. */
  readonly method: string;
  /** The template of the route that took the request; a fixed value when none did. */
  route(): string;
  /** Whether a route took the request. */
  routed(): boolean;
  /** The W3C trace id of the request's span, set by the tracing observer when it records one. */
  traceId?: string;
}

/**
 * Runs around a request: calls `proceed` once and returns its answer (or rethrows), doing its own
 * work before and after. `idle`, where given, says that it would record nothing now (no tracer or
 * meter provider is registered): when every observer is idle, a request passes untouched.
 */
export type RequestObserver =
  & ((exchange: Exchange, proceed: () => Promise<Response>) => Promise<Response>)
  & { readonly idle?: () => boolean };

/**
 * What a request's handling threw that the app answered itself (the errorController's answer, a
 * 500), by the request: the server span records it as an `exception` event, as it does what escapes
 * the fetch. Only a failure the app logs is here, never an `HttpException` a handler chose. Keyed by
 * the request rather than the answer, which middleware may replace; a request that global
 * middleware replaced (Hono's `bodyLimit`, for a body of no stated length) is not found.
 */
export const answeredErrors: WeakMap<Request, unknown> = /* @__PURE__ */ new WeakMap();

/** The route value of a request no route took and that was answered 404 (Micrometer's). */
export const NOT_FOUND_ROUTE = "NOT_FOUND";
/** The route value of any other request no route took: 405, 501, `OPTIONS`, a refused path. */
export const UNKNOWN_ROUTE = "UNKNOWN";

// RFC 9110's methods and PATCH: anything else a client sends is one label, so that random methods
// cannot grow the series count (OpenTelemetry's `_OTHER`).
const KNOWN_METHODS = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "PATCH",
]);

/** A request's method as a label: itself when it is one of the HTTP methods, else `_OTHER`. */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : "_OTHER";
}

/**
 * Which route took each request: set by the route's first handler (after its path constraints
 * held), read by the observers once the answer is made. Keyed by the `Request` object, which the
 * app's fetch and Hono's context share.
 */
export class RouteMarks {
  readonly #routes = new WeakMap<Request, string>();
  /**
   * Whether the observers record now: while every one is idle, requests are not marked, so that
   * an app with nothing to report to pays for no mark. It follows the providers registered, which
   * change at start-up; a request under way when one is registered may go unmarked, and counts
   * under `UNKNOWN`.
   */
  recording = true;

  /** Records that `route` (its template) took `request`. */
  mark(request: Request, route: string): void {
    if (this.recording) this.#routes.set(request, route);
  }

  /** The template of the route that took `request`, if one did. */
  of(request: Request): string | undefined {
    return this.#routes.get(request);
  }
}

type Fetch<A extends unknown[]> = (
  request: Request,
  ...rest: A
) => Response | Promise<Response>;

/**
 * `fetch` with `observers` around every call, the first outermost. No observers: `fetch` itself,
 * at no cost.
 */
export function observeFetch<A extends unknown[]>(
  fetch: Fetch<A>,
  observers: readonly RequestObserver[],
  marks: RouteMarks,
): Fetch<A> {
  if (observers.length === 0) return fetch;
  const idle = observers.every((o) => o.idle !== undefined)
    ? () => observers.every((o) => o.idle?.() === true)
    : undefined;
  return (request, ...rest) => {
    if (idle !== undefined) {
      const skip = idle();
      marks.recording = !skip;
      if (skip) return fetch(request, ...rest);
    }
    let status = 0;
    const exchange: Exchange = {
      request,
      env: rest[0],
      method: methodLabel(request.method),
      route: () => marks.of(request) ?? (status === 404 ? NOT_FOUND_ROUTE : UNKNOWN_ROUTE),
      routed: () => marks.of(request) !== undefined,
    };
    const run = (i: number): Promise<Response> => {
      if (i === observers.length) {
        // A fetch that throws at once rejects as one that fails later does, so that every
        // observer sees the failure through `proceed` (a span ends, a log line is written).
        let answer: Response | Promise<Response>;
        try {
          answer = fetch(request, ...rest);
        } catch (error) {
          return Promise.reject(error);
        }
        return Promise.resolve(answer).then((response) => {
          status = response.status;
          return response;
        });
      }
      return observers[i](exchange, () => run(i + 1));
    };
    return run(0);
  };
}

/**
 * OpenTelemetry's `error.type` of a request: the class of what the fetch threw, else the status of
 * a 5xx answer as text, else none (a 4xx is the client's error, not the server's).
 */
export function errorType(status: number, thrown?: unknown): string | undefined {
  if (thrown !== undefined) return thrown instanceof Error ? thrown.constructor.name : "_OTHER";
  return status >= 500 ? String(status) : undefined;
}

/** The answer's body size in bytes, where its headers say it; `undefined` for a stream. */
export function responseBytes(response: Response): number | undefined {
  const length = response.headers.get("content-length");
  if (length === null || !/^\d{1,15}$/.test(length)) return undefined;
  return Number(length);
}
