import type { PathPattern } from "./path_pattern.ts";

/** The methods a mapping can serve. */
export type MappedMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";

/**
 * The methods Thaw answers: RFC 9110's and PATCH, less CONNECT (a proxy's method). Any other
 * method is not implemented (501), whatever the path.
 */
export const IMPLEMENTED_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "OPTIONS",
  "TRACE",
  "PATCH",
]);

// `Allow` lists methods in this order, whatever order the routes were declared in.
const ALLOW_ORDER = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"];

/**
 * The order routes are tried in: segment by segment, a literal before a variable; a pattern that
 * is a prefix of another before it; then by text. It is a total order, so a sort gives the same
 * table whatever the declaration order, and two patterns that can match one path (same number of
 * segments) are decided by the first segment where one has a literal and the other a variable.
 */
export function compareSpecificity(a: PathPattern, b: PathPattern): number {
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const av = a.segments[i].variable !== undefined;
    const bv = b.segments[i].variable !== undefined;
    if (av !== bv) return av ? 1 : -1;
  }
  if (a.segments.length !== b.segments.length) return a.segments.length - b.segments.length;
  return a.shape < b.shape ? -1 : a.shape > b.shape ? 1 : 0;
}

interface Node {
  readonly literals: Map<string, Node>;
  variable: Node | undefined;
  readonly methods: Set<string>;
}

const node = (): Node => ({ literals: new Map(), variable: undefined, methods: new Set() });

/** A route as the table sees it: a method on a pattern. */
export interface TableRoute {
  readonly httpMethod: MappedMethod;
  readonly pattern: PathPattern;
}

/** The routes in the order they are tried, and the methods each path allows. */
export interface RouteTable<R extends TableRoute> {
  /** Most specific first: the order to add them to a first-match router. */
  readonly routes: readonly R[];
  /**
   * The `Allow` value for a path (`GET, HEAD, OPTIONS`), or `undefined` when no route's pattern
   * matches it. `path` is the decoded path the router matched.
   */
  allowed(path: string): string | undefined;
}

/** Orders routes and indexes their patterns by segment, for 405 and `OPTIONS`. */
export function routeTable<R extends TableRoute>(routes: readonly R[]): RouteTable<R> {
  const ordered = [...routes].sort((a, b) => compareSpecificity(a.pattern, b.pattern));
  const root = node();
  for (const { pattern, httpMethod } of ordered) {
    let at = root;
    for (const segment of pattern.segments) {
      if (segment.variable !== undefined) at = at.variable ??= node();
      else {
        let next = at.literals.get(segment.literal);
        if (next === undefined) at.literals.set(segment.literal, next = node());
        at = next;
      }
    }
    at.methods.add(httpMethod);
    if (httpMethod === "GET") at.methods.add("HEAD");
  }

  const collect = (at: Node, parts: readonly string[], i: number, into: Set<string>): void => {
    if (i === parts.length) {
      for (const method of at.methods) into.add(method);
      return;
    }
    const part = parts[i];
    if (part === "") return; // `[^/]+`: no segment is empty
    const literal = at.literals.get(part);
    if (literal !== undefined) collect(literal, parts, i + 1, into);
    if (at.variable !== undefined) collect(at.variable, parts, i + 1, into);
  };

  return {
    routes: ordered,
    allowed(path) {
      if (!path.startsWith("/")) return undefined;
      const methods = new Set<string>();
      collect(root, path === "/" ? [] : path.slice(1).split("/"), 0, methods);
      if (methods.size === 0) return undefined;
      return [...ALLOW_ORDER.filter((m) => methods.has(m)), "OPTIONS"].join(", ");
    },
  };
}
