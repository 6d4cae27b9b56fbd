import type { Context } from "hono";
import { routePath } from "hono/route";
import { splitRoutingPath, tryDecodeURIComponent } from "hono/utils/url";
import { HttpException } from "../http/http_exception.ts";
import { HttpStatus } from "../http/http_status.ts";
import { type PathPattern, restOfPath } from "./path_pattern.ts";
import { REFUSED_PATHS, requestPath, requestPathAllowingEncodedSlash } from "./request_path.ts";

/** The 400's message for a catch-all whose rest holds a dot segment the parent app left. */
export const DOT_SEGMENT = "Request path holds a '.' or '..' segment";

/**
 * How a route reads what Hono's router does not give as it is: its `{name:regex}` constraints
 * (Hono routes them as plain `:name`) and its `{*name}` (a `*` there, with no value). A route
 * without either has no reader, and reads `c.req.param()` alone, as before they existed.
 */
export interface PathReader {
  /**
   * Whether every constraint holds, each regex tested on the decoded value the handler gets;
   * `undefined` for a route without constraints. A route whose constraints fail passes the
   * request on to the next route that matches.
   */
  readonly holds?: ((c: Context) => boolean) | undefined;
  /**
   * The catch-all's name and its value; `undefined` for a route without one. `read` throws a 400
   * `HttpException` for a path that Thaw refuses but a mounting app routed.
   */
  readonly rest?: { readonly name: string; readonly read: (c: Context) => string };
  /** Every variable's decoded value, the catch-all's included, for `HttpRequest`. */
  readonly all: (c: Context) => Record<string, string>;
}

/**
 * The reader of a pattern's variables, or `undefined` for one that `c.req.param()` serves;
 * `allowEncodedSlash` as the app was built with it.
 */
export function pathReader(
  pattern: PathPattern,
  allowEncodedSlash = false,
): PathReader | undefined {
  const constraints = pattern.segments.flatMap((s) =>
    s.kind === "variable" && s.constraint !== undefined
      ? [[s.name, s.constraint.regex] as const]
      : []
  );
  const name = pattern.rest;
  if (constraints.length === 0 && name === undefined) return undefined;
  const holds = constraints.length === 0 ? undefined : (c: Context) => {
    for (const [name, regex] of constraints) {
      if (!regex.test(c.req.param(name) as string)) return false;
    }
    return true;
  };
  if (name === undefined) return { holds, all: (c) => c.req.param() };
  // The segments ahead of `*` in the route as Hono has it: more than the pattern's own when the
  // app is mounted under a prefix (`hono.route("/api", app.hono)`). One route path per route
  // but for mounts, so the last one read is kept.
  const own = pattern.segments.length - 1;
  const checkedPath = allowEncodedSlash ? requestPathAllowingEncodedSlash : requestPath;
  let route = "";
  let ahead = 0;
  const read = (c: Context): string => {
    const path = routePath(c);
    if (path !== route) {
      ahead = splitRoutingPath(path).length - 1;
      route = path;
    }
    const rest = restOfPath(c.req.path, ahead);
    // Mounted, the parent routed by its own reading of the path, with none of Thaw's checks: the
    // value, a path itself (`../x` would name a file), meets them here.
    if (ahead > own) refuseUnchecked(c.req.raw, rest, checkedPath);
    // The routed path: decoded but for what Hono keeps encoded (`%2F`, `%3F`, `%25`...), which is
    // decoded as a variable's value is.
    return tryDecodeURIComponent(rest);
  };
  return {
    holds,
    rest: { name, read },
    all: (c) => ({ ...c.req.param(), [name]: read(c) }),
  };
}

// What Thaw's own reading refuses (an encoded `/` or control, bytes that are not UTF-8, a hostile
// `Host`) is refused with the same 400; and a dot segment, which Thaw's reading resolves before
// routing but a parent's may leave in the rest. Each segment as routed: a `%2F` inside one (taken
// with `allowEncodedSlash`) ends no segment, as unmounted.
function refuseUnchecked(
  request: Request,
  rest: string,
  checkedPath: (request: Request) => string,
): void {
  const refused = REFUSED_PATHS.get(checkedPath(request));
  if (refused !== undefined) throw new HttpException(HttpStatus.BAD_REQUEST, refused);
  if (!rest.includes(".")) return;
  for (const segment of rest.split("/")) {
    const value = segment.includes("%") ? tryDecodeURIComponent(segment) : segment;
    if (value === "." || value === "..") {
      throw new HttpException(HttpStatus.BAD_REQUEST, DOT_SEGMENT);
    }
  }
}
