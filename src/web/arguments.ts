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

const MAKERS: Readonly<Record<string, string>> = {
  path: "PathVariable()",
  param: "RequestParam()",
  header: "RequestHeader()",
  body: "RequestBody()",
  part: "RequestPart()",
};

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
    const kind = (binder as { kind?: unknown } | null)?.kind;
    const maker = typeof kind === "string" && Object.hasOwn(MAKERS, kind)
      ? MAKERS[kind]
      : undefined;
    if (maker !== undefined) {
      // A descriptor of the right shape, written by hand or cloned (structuredClone drops
      // symbols): the reader travels with the binder the function makes.
      throw new TypeError(
        `a binder of kind "${kind}" not made by ${maker}: call ${maker} for it (a copy made ` +
          "with spread or Object.assign works too, a structuredClone does not)",
      );
    }
    throw new TypeError(
      "a binder must be PathVariable(), RequestParam(), RequestHeader(), RequestBody(), " +
        "RequestPart() or HttpRequest",
    );
  }
  return factory(binder as Binder, server, rest);
}
