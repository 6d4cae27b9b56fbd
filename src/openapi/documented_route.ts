import type { ApiResponseOptions, MiddlewareDocs } from "./api_docs.ts";
import type { RouteMethod } from "../web/compile.ts";
import type { MappedMethod } from "../web/route_table.ts";

/** A route as the document sees it. */
export interface DocumentedRoute {
  readonly httpMethod: MappedMethod;
  /** The declared path, prefix included: `/users/{id}`. */
  readonly path: string;
  /** Its variables, in order. */
  readonly variables: readonly string[];
  /** The controller method; routes the framework serves itself have none. */
  readonly method?: RouteMethod;
  /**
   * How a route the framework serves itself is documented (the health endpoints); a route with
   * neither this nor a method is left out (the document itself, the docs page).
   */
  readonly operation?: FrameworkOperation;
  /** `public`: a route of Thaw's own that any caller may reach with security on (health). */
  readonly access?: "public";
}

/** A route as a guard sees it in the document: its template as the route table parsed it. */
export interface GuardedRoute extends DocumentedRoute {
  /** The path less its variables' regexes: `/items/{id}` for `/items/{id:\d+}`. */
  readonly template: string;
}

/**
 * What a feature that guards every route (security) says of one route for the document, as a
 * middleware's `describe` does: its schemes and the route's requirement (`[]`: anyone may call it).
 */
export type DocumentedGuard = (route: GuardedRoute) => MiddlewareDocs | undefined;

/** The operation of a route the framework serves itself, as what serves it describes it. */
export interface FrameworkOperation {
  /** Made unique like a controller method's (`_2`). */
  readonly operationId: string;
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description?: string;
  /** Its answers by status, as `@ApiResponse` declares them. */
  readonly responses: ReadonlyMap<number, ApiResponseOptions>;
}
