import type { Context } from "hono";
import type { FormBody } from "../http/form_body.ts";
import type { HttpRequest } from "../http/http_request.ts";
import type { ServerRequest } from "../http/server_request.ts";
import type { readFormBody } from "./form_reader.ts";
import type { PathReader } from "./path_variables.ts";

/** Produces one argument of a handler for a request. */
export interface ArgumentResolver {
  readonly resolve: (c: Context, request: HttpRequest | undefined) => unknown;
  /** `resolve` returns a promise (only the body does). */
  readonly async: boolean;
  /** `resolve` needs the request's `HttpRequest` (it is made once per request and shared). */
  readonly needsRequest: boolean;
  /**
   * For an argument a form body may hold (`RequestParam`, `RequestPart`): its reading from that
   * body, when `resolve` returned {@linkcode FROM_BODY}.
   */
  readonly fromBody?: FormArgument;
}

/** How an argument is read from a form body, which the handler reads once for all of them. */
export interface FormArgument {
  readonly resolve: (form: FormBody) => unknown;
  /** Only a `multipart/form-data` body will do (a `RequestPart`). */
  readonly partsOnly: boolean;
  /**
   * Reads the form body. Carried by the argument rather than imported by the handler, so that an
   * app with no `RequestParam` or `RequestPart` bundles no form or multipart parser.
   */
  readonly read: typeof readFormBody;
}

/**
 * What `resolve` returns for an argument that waits for the form body: the handler then reads the
 * body once and asks `fromBody`. A request that needs no body gets its arguments synchronously.
 */
export const FROM_BODY: unique symbol = Symbol("from the form body");

/**
 * Compiles a binder into the closure that reads its argument from each request; `server` is how
 * a body is read from what the server parsed already, `rest` the route's `{*name}`, whose value
 * Hono does not give.
 */
export type ResolverFactory<B> = (
  binder: B,
  server: ServerRequest,
  rest: PathReader["rest"] | undefined,
) => ArgumentResolver;

/**
 * Where a binder keeps its {@linkcode ResolverFactory}: a symbol, out of its keys and its JSON, but
 * enumerable, so that a copy (`{ ...RequestParam("q"), required: false }`) keeps it and reads as
 * the copy says.
 */
export const RESOLVER: unique symbol = Symbol("thaw.resolver");

/**
 * A binder descriptor, frozen, carrying the code that reads its kind of argument. Each binder
 * function hands its own: the route compiler imports none, so a bundle holds the readers of the
 * binders the app calls and no other (no multipart parser in an app without `RequestPart`).
 */
export function withResolver<T extends object>(descriptor: T, factory: ResolverFactory<T>): T {
  Object.defineProperty(descriptor, RESOLVER, { value: factory, enumerable: true });
  return Object.freeze(descriptor);
}

/** A resolver that answers synchronously. */
export function sync(
  resolve: ArgumentResolver["resolve"],
  needsRequest = false,
): ArgumentResolver {
  return { resolve, async: false, needsRequest };
}
