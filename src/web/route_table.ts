import { tryDecodeURIComponent } from "hono/utils/url";
import type { PathPattern, Segment } from "./path_pattern.ts";

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

// How specific a segment is: a literal, then a constrained variable, a plain one, a catch-all.
const RANK = { literal: 0, constrained: 1, variable: 2, rest: 3 } as const;

function rank(segment: Segment): number {
  return segment.kind === "variable" && segment.constraint !== undefined
    ? RANK.constrained
    : RANK[segment.kind];
}

// What orders two segments of one rank: a literal's text, a constraint's regex as written.
function text(segment: Segment): string {
  return segment.kind === "literal"
    ? segment.text
    : segment.kind === "variable"
    ? segment.constraint?.source ?? ""
    : "";
}

/**
 * The order routes are tried in. Segment by segment, a literal before a `{name:regex}`, before a
 * `{name}`, before a `{*name}`; a pattern that is a prefix of another before it; then, segment by
 * segment, by text (a literal's, a regex's as written). It is a total order, equal only for one
 * shape, so a sort gives the same table whatever the declaration order. Two patterns that match
 * one path are decided by the first segment where their kinds differ, else (both constrained
 * there) by the first regex that differs, the smaller text first.
 */
export function compareSpecificity(a: PathPattern, b: PathPattern): number {
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const order = rank(a.segments[i]) - rank(b.segments[i]);
    if (order !== 0) return order;
  }
  if (a.segments.length !== b.segments.length) return a.segments.length - b.segments.length;
  for (let i = 0; i < n; i++) {
    const x = text(a.segments[i]);
    const y = text(b.segments[i]);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

interface Node {
  readonly literals: Map<string, Node>;
  /** By regex, as written: `/a/{x:\d+}` and `/a/{y:\d+}` share one. */
  readonly constrained: Map<string, { readonly regex: RegExp; readonly next: Node }>;
  variable: Node | undefined;
  /** The pattern that ends here (one shape per node), with its methods. */
  ends: Shape | undefined;
  /** The pattern whose `{*name}` starts here, with its methods: any rest of the path matches. */
  rest: Shape | undefined;
}

/** The routes of one shape: the path from the root to a node holds it whole. */
interface Shape {
  readonly pattern: PathPattern;
  readonly methods: Set<string>;
}

const node = (): Node => ({
  literals: new Map(),
  constrained: new Map(),
  variable: undefined,
  ends: undefined,
  rest: undefined,
});

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
   * The `Allow` value for a path (`GET, HEAD, OPTIONS`): the methods of the most specific pattern
   * that matches it, or `undefined` when none does. `path` is the decoded path the router matched.
   */
  allowed(path: string): string | undefined;
}

/** Orders routes and indexes their patterns by segment, for 405 and `OPTIONS`. */
export function routeTable<R extends TableRoute>(routes: readonly R[]): RouteTable<R> {
  const ordered = [...routes].sort((a, b) => compareSpecificity(a.pattern, b.pattern));
  const root = node();
  for (const { pattern, httpMethod } of ordered) {
    let at = root;
    let rest = false;
    for (const segment of pattern.segments) {
      if (segment.kind === "rest") {
        rest = true;
        break;
      }
      if (segment.kind === "literal") {
        let next = at.literals.get(segment.text);
        if (next === undefined) at.literals.set(segment.text, next = node());
        at = next;
      } else if (segment.constraint !== undefined) {
        const { source, regex } = segment.constraint;
        let child = at.constrained.get(source);
        if (child === undefined) at.constrained.set(source, child = { regex, next: node() });
        at = child.next;
      } else at = at.variable ??= node();
    }
    const shape = rest ? at.rest ??= { pattern, methods: new Set() } : at.ends ??= {
      pattern,
      methods: new Set(),
    };
    shape.methods.add(httpMethod);
    if (httpMethod === "GET") shape.methods.add("HEAD");
  }

  // The most specific of the shapes that match, as the router and the handlers match: a literal
  // against the path as routed, a regex against the segment decoded as Hono decodes a variable.
  // Specificity weighs every segment's kind before any regex's text, so no walk order can stop
  // at the first match: each match is weighed against the best so far.
  const best = (
    at: Node,
    parts: readonly string[],
    i: number,
    found: Shape | undefined,
  ): Shape | undefined => {
    const better = (shape: Shape | undefined) =>
      shape !== undefined &&
        (found === undefined || compareSpecificity(shape.pattern, found.pattern) < 0)
        ? shape
        : found;
    found = better(at.rest);
    if (i === parts.length) return better(at.ends);
    const part = parts[i];
    if (part === "") return found; // `[^/]+`: no segment is empty
    const literal = at.literals.get(part);
    if (literal !== undefined) found = best(literal, parts, i + 1, found);
    if (at.constrained.size > 0) {
      const value = tryDecodeURIComponent(part);
      for (const { regex, next } of at.constrained.values()) {
        if (regex.test(value)) found = best(next, parts, i + 1, found);
      }
    }
    if (at.variable !== undefined) found = best(at.variable, parts, i + 1, found);
    return found;
  };

  return {
    routes: ordered,
    allowed(path) {
      if (!path.startsWith("/")) return undefined;
      const methods = best(root, path === "/" ? [] : path.slice(1).split("/"), 0, undefined)
        ?.methods;
      if (methods === undefined) return undefined;
      return [...ALLOW_ORDER.filter((m) => methods.has(m)), "OPTIONS"].join(", ");
    },
  };
}
