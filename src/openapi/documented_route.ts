import type { ApiResponseOptions } from "./api_docs.ts";
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
}

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
