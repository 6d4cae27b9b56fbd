import type { Context } from "hono";
import { routePath } from "hono/route";
import { splitRoutingPath, tryDecodeURIComponent } from "hono/utils/url";
import { type PathPattern, restOfPath } from "./path_pattern.ts";

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
  readonly holds?: (c: Context) => boolean;
  /** The catch-all's name and its value; `undefined` for a route without one. */
  readonly rest?: { readonly name: string; readonly read: (c: Context) => string };
  /** Every variable's decoded value, the catch-all's included, for `HttpRequest`. */
  readonly all: (c: Context) => Record<string, string>;
}

/** The reader of a pattern's variables, or `undefined` for one that `c.req.param()` serves. */
export function pathReader(pattern: PathPattern): PathReader | undefined {
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
  let route = "";
  let ahead = 0;
  const read = (c: Context): string => {
    const path = routePath(c);
    if (path !== route) {
      ahead = splitRoutingPath(path).length - 1;
      route = path;
    }
    // The routed path: decoded but for what Hono keeps encoded (`%2F`, `%3F`, `%25`...), which is
    // decoded as a variable's value is.
    return tryDecodeURIComponent(restOfPath(c.req.path, ahead));
  };
  return {
    holds,
    rest: { name, read },
    all: (c) => ({ ...c.req.param(), [name]: read(c) }),
  };
}
