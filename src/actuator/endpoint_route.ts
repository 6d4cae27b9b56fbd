// One operation of an actuator endpoint as a route the app serves, labelled for the mappings and
// the errors that name it.
import type { CompiledRoute } from "../web/compile.ts";
import { parsePathPattern } from "../web/path_pattern.ts";

/** `httpMethod path` of an endpoint, answered by `handler`. */
export function endpointRoute(
  httpMethod: "GET" | "POST" | "DELETE",
  path: string,
  handler: CompiledRoute["handler"],
): CompiledRoute {
  return {
    httpMethod,
    pattern: parsePathPattern(path),
    label: `the actuator's endpoint (${httpMethod} ${path})`,
    handler,
  };
}
