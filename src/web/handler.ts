import type { Context } from "hono";
import { HttpException } from "../http/http_exception.ts";
import { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import { isAbandoned } from "../http/request_abandon.ts";
import type { ServerRequest } from "../http/server_request.ts";
import { type ArgumentResolver, type FormArgument, FROM_BODY } from "./argument_resolver.ts";
import { EMPTY_FORM_BODY } from "../http/form_body.ts";
import { type ErrorResponder, lastResortResponse } from "./error_responder.ts";
import { answerWithDefaults } from "./middleware.ts";
import { headAnswer, toResponse } from "./return_value.ts";

/** A Hono handler that answers with a response (Thaw's never call `next`). */
export type RouteHandler = (c: Context) => Response | Promise<Response>;

/** What a route's handler is compiled from. */
export interface HandlerSpec {
  readonly bean: unknown;
  readonly method: (...args: unknown[]) => unknown;
  readonly resolvers: readonly ArgumentResolver[];
  readonly errors: ErrorResponder;
  /** `UserController.get (GET /users/{id})`, for logs. */
  readonly label: string;
  readonly maxBodySize: number;
  /** How to read what the server parsed already (Node's pre-read body). */
  readonly server: ServerRequest;
  /** The route has `{var}` segments, so an `HttpRequest` needs them. */
  readonly hasPathVariables: boolean;
  /** How to read them when `c.req.param()` lacks one (a `{*name}`); else `c.req.param()`. */
  readonly pathVariables: ((c: Context) => Record<string, string>) | undefined;
  /**
   * Middleware runs around the route: a HEAD answer keeps its body for it (`etag` hashes it; the
   * end of the chain drops it), and a body a middleware read through `c.req` is read from Hono.
   */
  readonly behindMiddleware: boolean;
  /** The names of the middleware that run before the handler, for an error that one caused. */
  readonly middlewareNames: readonly string[];
  /** Its `@ResponseStatus`: the status of an answer made from what it returns. */
  readonly status: number | undefined;
}

/**
 * Compiles a route's handler. Everything that does not depend on the request is decided here, so
 * that a request only reads its arguments, calls the method and converts the result: one promise
 * for a body (JSON, or a form body some argument turned out to need), one for a method that
 * returns one, none otherwise, and no `HttpRequest` unless an argument or a body needs one.
 */
export function compileHandler(spec: HandlerSpec): RouteHandler {
  const { bean, method, resolvers, errors, label } = spec;
  const count = resolvers.length;
  const bodyIndex = resolvers.findIndex((r) => r.async);
  const resolve = argumentReaders(resolvers, bodyIndex);
  const newRequest = requestMaker(spec);
  const needsRequest = resolvers.some((r) => r.needsRequest);
  const makeRequest = (c: Context) => needsRequest ? newRequest(c) : undefined;
  const settle = settler(spec);
  // The body is the one argument read asynchronously (compile.ts refuses a second RequestBody()),
  // so a route with a body waits on that one promise and nothing else: no async function.
  if (bodyIndex >= 0) {
    return (c) => {
      let request: HttpRequest | undefined;
      try {
        request = makeRequest(c);
        const args = new Array(count);
        for (let i = 0; i < count; i++) if (i !== bodyIndex) args[i] = resolve[i](c, request);
        return (resolve[bodyIndex](c, request) as Promise<unknown>).then(
          (body) => {
            try {
              args[bodyIndex] = body;
              return settle(c, request, method.apply(bean, args));
            } catch (error) {
              return errors(error, c, request, label);
            }
          },
          (error) => errors(error, c, request, label),
        );
      } catch (error) {
        return errors(error, c, request, label);
      }
    };
  }
  const readForm = resolvers.find((r) => r.fromBody !== undefined)?.fromBody?.read;
  if (readForm !== undefined) {
    return formHandler(spec, resolve, readForm, newRequest, makeRequest, settle);
  }
  if (count === 0) {
    return (c) => {
      try {
        return settle(c, undefined, method.call(bean));
      } catch (error) {
        return errors(error, c, undefined, label);
      }
    };
  }
  return (c) => {
    let request: HttpRequest | undefined;
    try {
      request = makeRequest(c);
      const args = new Array(count);
      for (let i = 0; i < count; i++) args[i] = resolve[i](c, request);
      return settle(c, request, method.apply(bean, args));
    } catch (error) {
      return errors(error, c, request, label);
    }
  };
}

// What reads a route's arguments from a request.
type Readers = readonly ArgumentResolver["resolve"][];

// The request's HttpRequest when an argument needs one, else undefined.
type RequestMaker = (c: Context) => HttpRequest | undefined;

type Settle = (
  c: Context,
  request: HttpRequest | undefined,
  result: unknown,
) => Response | Promise<Response>;

// Arguments a form body may hold (RequestParam, RequestPart) say so by returning FROM_BODY; only
// then is the body read, once for all of them, and the request waits on that one promise. A
// request whose arguments all came from elsewhere (every GET, a query holding every parameter)
// is answered synchronously, as on a route without them.
function formHandler(
  spec: HandlerSpec,
  resolve: Readers,
  readForm: FormArgument["read"],
  newRequest: (c: Context) => HttpRequest,
  makeRequest: RequestMaker,
  settle: Settle,
): RouteHandler {
  const { bean, method, errors, label, server } = spec;
  const count = resolve.length;
  const fromBody = spec.resolvers.map((r) => r.fromBody);
  const partsOnly = fromBody.some((f) => f?.partsOnly === true);
  return (c) => {
    let request: HttpRequest | undefined;
    try {
      request = makeRequest(c);
      const args = new Array(count);
      let waiting = false;
      for (let i = 0; i < count; i++) {
        const value = resolve[i](c, request);
        if (value === FROM_BODY) waiting = true;
        args[i] = value;
      }
      if (!waiting) return settle(c, request, method.apply(bean, args));
      // The form is read through the request's own reader, so that a handler given the
      // HttpRequest reads the same bytes again.
      const withBody = request ??= newRequest(c);
      return readForm(c, server, withBody, partsOnly).then(
        (form) => {
          // The request timed out while its body was read: no one reads the answer.
          if (isAbandoned(c.req.raw)) {
            void form.release?.();
            return lastResortResponse(HttpStatus.SERVICE_UNAVAILABLE);
          }
          let answer: Response | Promise<Response>;
          try {
            for (let i = 0; i < count; i++) {
              if (args[i] === FROM_BODY) args[i] = (fromBody[i] as FormArgument).resolve(form);
            }
            answer = settle(c, withBody, method.apply(bean, args));
          } catch (error) {
            answer = errors(error, c, withBody, label);
          }
          // An upload's temporary files go once the answer is made, whatever it is.
          return form.release === undefined ? answer : releasedAfter(answer, form.release);
        },
        (error) =>
          isAbandoned(c.req.raw)
            ? lastResortResponse(HttpStatus.SERVICE_UNAVAILABLE)
            : errors(error, c, withBody, label),
      );
    } catch (error) {
      return errors(error, c, request, label);
    }
  };
}

// On a route with RequestBody() the body is JSON: a parameter the query lacks is missing.
function argumentReaders(
  resolvers: readonly ArgumentResolver[],
  bodyIndex: number,
): ArgumentResolver["resolve"][] {
  return resolvers.map(({ resolve, fromBody }) =>
    bodyIndex >= 0 && fromBody !== undefined
      ? (c: Context, request: HttpRequest | undefined) => {
        const value = resolve(c, request);
        return value === FROM_BODY ? fromBody.resolve(EMPTY_FORM_BODY) : value;
      }
      : resolve
  );
}

// Makes the route's HttpRequest: for every request when an argument needs it, or when a form
// body is read.
function requestMaker(spec: HandlerSpec): (c: Context) => HttpRequest {
  const { label, maxBodySize, server, hasPathVariables, behindMiddleware, middlewareNames } = spec;
  const readVariables = spec.pathVariables;
  return (c) =>
    new HttpRequest(c.req.raw, {
      pathVariables: !hasPathVariables
        ? undefined
        : readVariables === undefined
        ? c.req.param()
        : readVariables(c),
      maxBodySize,
      rawBody: server.body(c.env),
      // Only middleware reads a body ahead of the route: no question asked without it.
      readEarlier: behindMiddleware ? () => earlierBody(c, label, middlewareNames) : undefined,
    });
}

// The answer made of what the method returned, or of the error its promise rejected with.
function settler(spec: HandlerSpec): Settle {
  const { errors, label, status, behindMiddleware } = spec;
  // HEAD is served by the GET handler (Hono routes it so), and its answer goes without the body.
  const answer = (c: Context, value: unknown): Response => {
    if (behindMiddleware) return answerWithDefaults(c, value, status);
    const response = toResponse(value, undefined, status);
    return c.req.method === "HEAD" ? headAnswer(response) : response;
  };
  return (c, request, result) => {
    if (result instanceof Promise) {
      return result.then(
        (value) => {
          try {
            return answer(c, value);
          } catch (error) {
            return errors(error, c, request, label);
          }
        },
        (error) => errors(error, c, request, label),
      );
    }
    return answer(c, result);
  };
}

// The answer, once `release` is done: the client that has it knows the files are gone.
async function releasedAfter(
  answer: Response | Promise<Response>,
  release: () => Promise<void>,
): Promise<Response> {
  try {
    return await answer;
  } finally {
    await release();
  }
}

// What Hono kept of a body a middleware read through `c.req`. Its bytes when it kept them; else
// bytes made again from the text it decoded leniently, where a U+FFFD may stand for bytes that were
// not UTF-8, so such a text is refused as those bytes would have been. A body read through
// `c.req.raw` is gone: no runtime keeps it (Node's adapter alone would hand the handler a copy),
// and a 400 would blame the client for the server's own doing. It is a 500 that names the
// middleware and says what to do instead, on every runtime.
async function earlierBody(
  c: Context,
  route: string,
  middleware: readonly string[],
): Promise<Uint8Array> {
  const kept = c.req.bodyCache.arrayBuffer;
  if (kept !== undefined) return new Uint8Array(await kept);
  if (Object.keys(c.req.bodyCache).length === 0) {
    throw new Error(
      `${route}: the request body was read through c.req.raw by a middleware before the handler ` +
        `(${middleware.join(", ")}), so the handler cannot read it. Read it in the middleware ` +
        "with c.req.json(), c.req.text() or c.req.arrayBuffer(), which Hono keeps for the " +
        "handler, or read a copy: c.req.raw.clone()",
    );
  }
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (lenient.decode(bytes).includes("\uFFFD")) {
    throw new HttpException(
      HttpStatus.BAD_REQUEST,
      "Request body is not valid UTF-8 (a middleware read it as text first, so a U+FFFD in it " +
        "cannot be told from bytes that were not UTF-8)",
    );
  }
  return bytes;
}

const lenient = new TextDecoder();
