// What src/web hands a route guard (security's): the facts of the routes and the one way to answer
// early, so that the guard reads no module of the controllers' and the two change apart.
import type { Context } from "hono";
import { earlyAnswer } from "./middleware.ts";
import { REFUSED_PATHS } from "./request_path.ts";
import { IMPLEMENTED_METHODS, routeTable, type TableRoute } from "./route_table.ts";

/** The routes' facts a guard reads, and how it answers before the route runs. */
export interface GuardHost {
  /**
   * The route table of `routes`: the `Allow` it gives a path a request no route takes (405 and
   * `OPTIONS`), `undefined` where none of them takes it.
   */
  readonly routeTable: (routes: readonly TableRoute[]) => {
    allowed(path: string): string | undefined;
  };
  /** The methods Thaw implements: another is answered 501 before any guard. */
  readonly implementedMethods: { has(method: string): boolean };
  /** The paths no request may have: answered 400 before any guard. */
  readonly refusedPaths: { has(path: string): boolean };
  /** Answers `c` at once with `response` (a refusal), with the headers set before it. */
  readonly earlyAnswer: (c: Context, response: Response) => Response;
}

/** The host every guard of an app is handed. */
export const GUARD_HOST: GuardHost = {
  routeTable,
  implementedMethods: IMPLEMENTED_METHODS,
  refusedPaths: REFUSED_PATHS,
  earlyAnswer,
};
