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
  /** The methods of a pattern that ends here. */
  readonly methods: Set<string>;
  /** The methods of a pattern whose `{*name}` starts here: any rest of the path matches. */
  readonly rest: Set<string>;
}

const node = (): Node => ({
  literals: new Map(),
  constrained: new Map(),
  variable: undefined,
  methods: new Set(),
  rest: new Set(),
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
    let methods = at.methods;
    for (const segment of pattern.segments) {
      if (segment.kind === "rest") {
        methods = at.rest;
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
      methods = at.methods;
    }
    methods.add(httpMethod);
    if (httpMethod === "GET") methods.add("HEAD");
  }

  // As the router and the handlers match: a literal against the path as routed, a regex against
  // the segment decoded as Hono decodes a variable.
  const collect = (at: Node, parts: readonly string[], i: number, into: Set<string>): void => {
    for (const method of at.rest) into.add(method);
    if (i === parts.length) {
      for (const method of at.methods) into.add(method);
      return;
    }
    const part = parts[i];
    if (part === "") return; // `[^/]+`: no segment is empty
    const literal = at.literals.get(part);
    if (literal !== undefined) collect(literal, parts, i + 1, into);
    if (at.constrained.size > 0) {
      const value = tryDecodeURIComponent(part);
      for (const { regex, next } of at.constrained.values()) {
        if (regex.test(value)) collect(next, parts, i + 1, into);
      }
    }
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
