/** A path segment: text to match as it is, or a `{name}` variable. */
export type Segment =
  | { readonly literal: string; readonly variable?: undefined }
  | { readonly variable: string; readonly literal?: undefined };

/** A route path, parsed once when the app is compiled. */
export interface PathPattern {
  /** The path as declared (prefix included). */
  readonly source: string;
  readonly segments: readonly Segment[];
  /** The same path in Hono's syntax (`/users/:id`). */
  readonly honoPath: string;
  /** Equal for paths that match the same requests (`/a/{x}` and `/a/{y}`). */
  readonly shape: string;
  readonly variables: readonly string[];
}

const VARIABLE = /^\{([A-Za-z_$][\w$]*)\}$/;
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
 * Parses `/users/{id}/orders`. Throws a plain Error saying what is wrong; the caller adds which
 * route it is.
 */
export function parsePathPattern(source: string): PathPattern {
  if (!source.startsWith("/")) throw new Error(`path "${source}" must start with "/"`);
  const segments: Segment[] = [];
  const variables: string[] = [];
  for (const part of source === "/" ? [] : source.slice(1).split("/")) {
    const variable = VARIABLE.exec(part)?.[1];
    if (variable !== undefined) {
      if (variables.includes(variable)) {
        throw new Error(`path "${source}" names {${variable}} twice`);
      }
      variables.push(variable);
      segments.push({ variable });
    } else if (RESERVED.test(part)) {
      throw new Error(
        `path "${source}": segment "${part}" is neither plain text nor a whole {name} variable`,
      );
    } else if (part === "" || part === "." || part === "..") {
      throw new Error(`path "${source}" has an empty, "." or ".." segment`);
    } else {
      segments.push({ literal: part });
    }
  }
  const each = (literal: (s: string) => string, variable: (s: string) => string) =>
    segments.map((s) => s.variable === undefined ? literal(s.literal) : variable(s.variable));
  return {
    source,
    segments,
    variables,
    honoPath: "/" + each((s) => s, (v) => `:${v}`).join("/"),
    shape: "/" + each((s) => s, () => "{}").join("/"),
  };
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
