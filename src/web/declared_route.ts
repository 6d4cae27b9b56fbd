// What the streaming mappings, which compile their own handlers, say of their route in labels,
// metrics and logs: its whole path, and its template.
import type { Class } from "../context/class_record.ts";
import { joinPaths } from "./path_pattern.ts";
import { controllerRecordChain } from "./route_record.ts";

/** A mapping's whole path: its class's `@RequestMapping` prefix (the nearest in the chain) joined. */
export function declaredPath(type: Class, path: string): string {
  let prefix = "";
  for (const record of controllerRecordChain(type)) prefix = record.prefix ?? prefix;
  return joinPaths(prefix, path);
}

/**
 * A declared path as metrics and logs name its route, as the route compiler does: `/rooms/{id}`
 * for `/rooms/{id:\\d{1,3}}` (a regex's own braces one level deep, as the regex subset allows).
 */
export function routeTemplate(path: string): string {
  return path.replace(/\{(\*?[^{}:]+):(?:[^{}]|\{[^{}]*\})*\}/g, "{$1}");
}
