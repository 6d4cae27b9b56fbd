import type { Context } from "hono";
import { HttpRequest } from "../http/http_request.ts";
import type { ServerRequest } from "../http/server_request.ts";
import type { ArgumentResolver } from "./arguments.ts";
import type { ErrorResponder } from "./error_responder.ts";
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
}

/**
 * Compiles a route's handler. Everything that does not depend on the request is decided here, so
 * that a request only reads its arguments, calls the method and converts the result: one promise
 * for a body, one for a method that returns one, none otherwise, and no `HttpRequest` unless an
 * argument needs one.
 */
export function compileHandler(spec: HandlerSpec): RouteHandler {
  const { bean, method, resolvers, errors, label, maxBodySize, server, hasPathVariables } = spec;
  const count = resolvers.length;
  const resolve = resolvers.map((r) => r.resolve);
  const isAsync = resolvers.map((r) => r.async);
  const needsRequest = resolvers.some((r) => r.needsRequest);
  const makeRequest = (c: Context): HttpRequest | undefined =>
    needsRequest
      ? new HttpRequest(c.req.raw, {
        pathVariables: hasPathVariables ? c.req.param() : undefined,
        maxBodySize,
        rawBody: server.body(c.env),
      })
      : undefined;

  // HEAD is served by the GET handler (Hono routes it so), and its answer goes without the body.
  const answer = (c: Context, value: unknown): Response => {
    const response = toResponse(value);
    return c.req.method === "HEAD" ? headAnswer(response) : response;
  };
  const settle = (c: Context, request: HttpRequest | undefined, result: unknown) => {
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

  // The body is the one argument read asynchronously (compile.ts refuses a second RequestBody()),
  // so a route with a body waits on that one promise and nothing else: no async function.
  const bodyIndex = isAsync.indexOf(true);
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
