import { HttpRequest } from "../http/http_request.ts";
import type { ServerRequest } from "../http/server_request.ts";
import type { Binder, ParameterBinder } from "./binder.ts";
import {
  type ArgumentResolver,
  RESOLVER,
  type ResolverFactory,
  sync,
} from "./argument_resolver.ts";
import type { PathReader } from "./path_variables.ts";

/**
 * Compiles a binder into the closure that reads its argument from each request, through the
 * reader the binder carries; `server` is how the body binding reads what the server parsed
 * already, `rest` the route's `{*name}`, whose value Hono does not give.
 */
export function compileArgument(
  binder: ParameterBinder,
  server: ServerRequest,
  rest?: PathReader["rest"],
): ArgumentResolver {
  if (binder === HttpRequest) return sync((_c, request) => request, true);
  const factory = typeof binder === "object" && binder !== null
    ? (binder as { [RESOLVER]?: ResolverFactory<Binder> })[RESOLVER]
    : undefined;
  if (factory === undefined) {
    throw new TypeError(
      "a binder must be PathVariable(), RequestParam(), RequestHeader(), RequestBody(), " +
        "RequestPart() or HttpRequest",
    );
  }
  return factory(binder as Binder, server, rest);
}
