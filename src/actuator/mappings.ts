// `mappings`' answer: every route the app serves, its handler and its middleware.
import type { CompiledRoute } from "../web/compile.ts";

/** One route, as `mappings` lists it. */
export interface Mapping {
  /** The HTTP method: `GET`, `POST`... */
  readonly method: string;
  /** The path template: `/items/{id}`. */
  readonly path: string;
  /** `Class.method`, or `Thaw` for a route the framework serves itself. */
  readonly handler: string;
  /** The global middleware, then the controller's and the method's, by name. */
  readonly middleware: readonly string[];
  /** What request bodies it reads; empty when it reads none. */
  readonly consumes: readonly string[];
}

/** `GET {base}/mappings`: every route the app serves. */
export function mappings(
  routes: readonly CompiledRoute[],
  globalMiddleware: readonly string[],
): Mapping[] {
  return routes.map((route) => {
    const binders = route.method?.binders ?? [];
    const kinds = new Set(binders.map((b) => (b as { kind?: string }).kind));
    return {
      method: route.httpMethod,
      path: route.pattern.source,
      handler: route.method === undefined
        ? "Thaw"
        : `${route.method.type.name}.${route.method.methodName}`,
      middleware: [...globalMiddleware, ...(route.middlewareNames ?? [])],
      consumes: kinds.has("part")
        ? ["multipart/form-data"]
        : kinds.has("body")
        ? ["application/json"]
        : [],
    };
  });
}
