import type { PathRegex } from "./path_regex.ts";

/**
 * Parses and checks the regex of a `{name:regex}` variable: `parsePathRegex` of path_regex.ts,
 * passed in so that an app whose paths have no regex never loads it.
 */
export type RegexParser = (source: string) => PathRegex;

/** Whether a path may hold a `{name:regex}` variable: whether its parser must be loaded. */
export const mayHoldRegex = (path: string): boolean => /\{[^}]*:/.test(path);

/**
 * A path segment: text to match as it is, a `{name}` or `{name:regex}` variable (one non-empty
 * segment; the regex tests its decoded value), or the `{*name}` that ends a pattern and takes the
 * rest of the path.
 */
export type Segment =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "variable"; readonly name: string; readonly constraint?: PathRegex }
  | { readonly kind: "rest"; readonly name: string };

/** A route path, parsed once when the app is compiled. */
export interface PathPattern {
  /** The path as declared (prefix included). */
  readonly source: string;
  readonly segments: readonly Segment[];
  /**
   * The same path in Hono's syntax (`/users/:id`, `/files/*`). A constrained variable is a plain
   * `:name` there: Thaw tests the regex on the decoded value (see `path_variables.ts`).
   */
  readonly honoPath: string;
  /**
   * The path as a route's label (metrics, spans, the access log): as declared, less the regexes
   * of its variables (`/users/{id}` for `/users/{id:\d+}`), as the OpenAPI document writes it, so
   * that dashboards and the document name a route alike.
   */
  readonly template: string;
  /**
   * Equal for paths that match the same requests: `/a/{x}` and `/a/{y}`, `/a/{x:\d+}` and
   * `/a/{y:\d+}`, but not `/a/{x:\d+}` and `/a/{y}`.
   */
  readonly shape: string;
  /** Every variable's name in path order, the catch-all's included. */
  readonly variables: readonly string[];
  /** The `{*name}` that ends the pattern, if one does. */
  readonly rest?: string;
}

const NAME = /^[A-Za-z_$][\w$]*$/;
// Characters that Hono's router gives a meaning to, that only make sense inside `{}`, or that no
// decoded request path holds in a route: `%` (declare paths decoded: `/a b`, not `/a%20b`), `\`
// (refused in requests) and `#` (a fragment, which clients never send).
const RESERVED = /[{}*?:()%\\#]/;

/**
 * Joins a class prefix and a method path at their boundary: `/api/` + `users` -> `/api/users`.
 * A trailing `/` is dropped (Hono matches paths strictly); anything else is left for the parser
 * to judge, so a `//` typo inside a path is reported rather than hidden.
 */
export function joinPaths(prefix: string, path: string): string {
  const head = prefix === "" || prefix.startsWith("/") ? prefix : `/${prefix}`;
  const tail = path === "" || path.startsWith("/") ? path : `/${path}`;
  const joined = (head.endsWith("/") && tail.startsWith("/") ? head.slice(0, -1) : head) + tail;
  if (joined === "") return "/";
  return joined.length > 1 && joined.endsWith("/") ? joined.slice(0, -1) : joined;
}

/**
 * Parses `/users/{id}/orders`, `/users/{id:\d+}`, `/files/{*path}`; a regex with `parseRegex`,
 * given whenever {@linkcode mayHoldRegex} says so. Throws a plain Error saying what is wrong; the
 * caller adds which route it is.
 */
export function parsePathPattern(source: string, parseRegex?: RegexParser): PathPattern {
  if (!source.startsWith("/")) throw new Error(`path "${source}" must start with "/"`);
  const fail = (why: string): never => {
    throw new Error(`path "${source}"${why}`);
  };
  const segments: Segment[] = [];
  const variables: string[] = [];
  const parts = source === "/" ? [] : splitSegments(source, fail);
  for (const [i, part] of parts.entries()) {
    const segment = parseSegment(part, fail, parseRegex);
    if (segment.kind !== "literal") {
      if (variables.includes(segment.name)) fail(` names {${segment.name}} twice`);
      variables.push(segment.name);
      if (segment.kind === "rest" && i !== parts.length - 1) {
        fail(`: {*${segment.name}} takes the rest of the path, so it must be the last segment`);
      }
    }
    segments.push(segment);
  }
  const last = segments[segments.length - 1];
  return {
    source,
    segments,
    variables,
    ...(last?.kind === "rest" ? { rest: last.name } : {}),
    template: "/" +
      segments.map((s) =>
        s.kind === "literal" ? s.text : s.kind === "rest" ? `{*${s.name}}` : `{${s.name}}`
      ).join("/"),
    honoPath: "/" +
      segments.map((s) => s.kind === "literal" ? s.text : s.kind === "rest" ? "*" : `:${s.name}`)
        .join("/"),
    shape: "/" +
      segments.map((s) =>
        s.kind === "literal"
          ? s.text
          : s.kind === "rest"
          ? "{*}"
          : s.constraint === undefined
          ? "{}"
          : `{:${s.constraint.source}}`
      ).join("/"),
  };
}

// Splits at each `/` outside braces: a regex may hold one (`[^/.]`, refused later with a reason).
// Inside braces, `\{` and `\}` are the regex's characters, not braces (outside, a `\` is refused
// later as any reserved character).
function splitSegments(source: string, fail: (why: string) => never): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 1;
  for (let i = 1; i < source.length; i++) {
    const c = source[i];
    if (c === "\\" && depth > 0) i++;
    else if (c === "{") depth++;
    else if (c === "}" && --depth < 0) fail(`: "}" at ${i} closes no "{"`);
    else if (c === "/" && depth === 0) {
      parts.push(source.slice(from, i));
      from = i + 1;
    }
  }
  if (depth > 0) fail(`: a "{" is not closed`);
  parts.push(source.slice(from));
  return parts;
}

function parseSegment(
  part: string,
  fail: (why: string) => never,
  parseRegex: RegexParser | undefined,
): Segment {
  if (part === "*" || part === "**") {
    fail(
      `: "${part}" is not supported; write {name} for one segment, or {*name} as the last ` +
        "segment for the rest of the path",
    );
  }
  if (part === "" || part === "." || part === "..") fail(` has an empty, "." or ".." segment`);
  if (!RESERVED.test(part)) return { kind: "literal", text: part };
  // Express's and Hono's syntax, the first thing people coming from them write.
  const express = /^:([A-Za-z_$][\w$]*)(?:\((.+)\))?$/.exec(part);
  if (express !== null) {
    const [, name, regex] = express;
    fail(
      `: segment "${part}" is Express's syntax; write {${name}${
        regex === undefined ? "" : `:${regex}`
      }} (a variable is in braces, as in Spring)`,
    );
  }
  if (isWholeVariable(part)) {
    const inner = part.slice(1, -1);
    if (inner.startsWith("*")) {
      const name = inner.slice(1);
      if (NAME.test(name)) return { kind: "rest", name };
      if (name.includes(":") && NAME.test(name.slice(0, name.indexOf(":")))) {
        fail(`: {*${name.slice(0, name.indexOf(":"))}} takes the rest of the path, with no regex`);
      }
    } else {
      const colon = inner.indexOf(":");
      const name = colon === -1 ? inner : inner.slice(0, colon);
      if (NAME.test(name)) {
        if (colon === -1) return { kind: "variable", name };
        try {
          // Given whenever mayHoldRegex(path): a missing one is Thaw's bug, and throws here.
          if (parseRegex === undefined) throw new Error("no regex parser");
          return { kind: "variable", name, constraint: parseRegex(inner.slice(colon + 1)) };
        } catch (error) {
          return fail(`: the regex of {${name}}: ${(error as Error).message}`);
        }
      }
    }
  }
  return fail(
    `: segment "${part}" is neither plain text nor a whole {name} variable ` +
      "(a variable, {name}, {name:regex} or {*name}, is a whole segment)",
  );
}

// `{...}` whose first brace closes at its end: `{a}{b}` is two, which no segment may be.
function isWholeVariable(part: string): boolean {
  if (!part.startsWith("{") || !part.endsWith("}")) return false;
  let depth = 0;
  for (let i = 0; i < part.length; i++) {
    if (part[i] === "\\" && depth > 0) i++;
    else if (part[i] === "{") depth++;
    else if (part[i] === "}" && --depth === 0) return i === part.length - 1;
  }
  return false;
}

/**
 * Where a catch-all's value starts in `path`: after its first `segments` segments. The value is
 * the rest, its leading `/` kept as Spring keeps it: `/files/{*path}` gives `""` for `/files`,
 * `"/"` for `/files/` and `"/a/b.png"` for `/files/a/b.png`.
 */
export function restOfPath(path: string, segments: number): string {
  let at = 0;
  for (let i = 0; i < segments; i++) {
    at = path.indexOf("/", at + 1);
    if (at === -1) return "";
  }
  return path.slice(at);
}

/**
 * Removes `.` and `..` segments from a request path as RFC 3986 (5.2.4) and the WHATWG URL parser
 * do: `/x/../health` is `/health`, and no path climbs above `/`. Bun and Node's adapter hand over
 * URLs already resolved this way, Deno the request target as sent; resolving here makes every
 * runtime route the same path. `path` is decoded, so `%2e%2e` arrives as `..`.
 */
export function removeDotSegments(path: string): string {
  if (!path.includes("/.")) return path;
  const input = path.split("/");
  const output: string[] = [];
  for (let i = 1; i < input.length; i++) {
    const segment = input[i];
    const last = i === input.length - 1;
    if (segment === ".") {
      if (last) output.push("");
    } else if (segment === "..") {
      output.pop();
      if (last) output.push("");
    } else output.push(segment);
  }
  return "/" + output.join("/");
}
