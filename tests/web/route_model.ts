import fc from "fast-check";

/** The reference model of Thaw's routing, written from the README's rule and nothing else. */

export type Method = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";
export const METHODS: readonly Method[] = ["GET", "POST", "PUT", "DELETE", "PATCH"];
/** A literal, `null` for a `{variable}`, or a `{variable:regex}`. */
export type ModelSegment = string | null | { readonly regex: string };
export interface ModelRoute {
  readonly id: number;
  readonly method: Method;
  readonly segments: readonly ModelSegment[];
  /** The path ends with `{*rest}`. */
  readonly rest: boolean;
}

/** What the model says a request gets: a route with its variables' values, in path order. */
export type Outcome =
  | { readonly kind: "route"; readonly id: number; readonly values: readonly string[] }
  | { readonly kind: "405" | "204"; readonly allow: string }
  | { readonly kind: "404" };

const LITERALS = ["a", "b", "c"];
/** Safe regexes whose matches overlap: `a` is matched by all of `[ab]+` and `a`, `7` by `\d+`. */
export const REGEXES: readonly string[] = ["\\d+", "[ab]+", "a"];

/** The declared path: variables `{v0}`, `{v1:regex}`..., the catch-all `{*rest}`. */
export function pathOf(segments: readonly ModelSegment[], rest = false): string {
  let n = 0;
  const parts = segments.map((s) =>
    s === null ? `{v${n++}}` : typeof s === "string" ? s : `{v${n++}:${s.regex}}`
  );
  if (rest) parts.push("{*rest}");
  return "/" + parts.join("/");
}

/** The names of a route's variables, in path order. */
export function variablesOf(route: ModelRoute): string[] {
  let n = 0;
  const names = route.segments.flatMap((s) => typeof s === "string" ? [] : [`v${n++}`]);
  return route.rest ? [...names, "rest"] : names;
}

const split = (path: string): string[] => path === "/" ? [] : path.slice(1).split("/");

// "A variable is one non-empty segment, its regex tested on the decoded segment, whole; the
// catch-all takes whatever follows, nothing included."
export function matches(route: ModelRoute, path: string): boolean {
  const parts = split(path);
  const n = route.segments.length;
  if (route.rest ? parts.length < n : parts.length !== n) return false;
  return route.segments.every((s, i) => {
    const part = decodeURIComponent(parts[i]);
    if (part === "") return false;
    if (s === null) return true;
    if (typeof s === "string") return s === part;
    return new RegExp(`^(?:${s.regex})$`).test(part);
  });
}

// "A literal beats a constrained variable beats a plain variable beats a catch-all, segment by
// segment; a pattern that is a prefix of another beats it; two constrained variables in one place,
// the regex that sorts first as text."
const KIND = (s: ModelSegment | "rest"): number =>
  s === "rest" ? 3 : s === null ? 2 : typeof s === "string" ? 0 : 1;

function moreSpecific(a: ModelRoute, b: ModelRoute): boolean {
  const ka: (ModelSegment | "rest")[] = a.rest ? [...a.segments, "rest"] : [...a.segments];
  const kb: (ModelSegment | "rest")[] = b.rest ? [...b.segments, "rest"] : [...b.segments];
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    if (KIND(ka[i]) !== KIND(kb[i])) return KIND(ka[i]) < KIND(kb[i]);
  }
  if (ka.length !== kb.length) return ka.length < kb.length;
  for (let i = 0; i < ka.length; i++) {
    const x = ka[i];
    const y = kb[i];
    if (typeof x === "object" && x !== null && typeof y === "object" && y !== null) {
      if (x.regex !== y.regex) return x.regex < y.regex;
    }
  }
  return false;
}

// "Path variables are decoded; the catch-all's value is the rest of the path after the segments
// before it, its leading `/` kept: `""` when nothing follows."
function valuesOf(route: ModelRoute, path: string): string[] {
  const parts = split(path);
  const values = route.segments.flatMap((s, i) =>
    typeof s === "string" ? [] : [decodeURIComponent(parts[i])]
  );
  if (route.rest) {
    const n = route.segments.length;
    const before = n === 0 ? 0 : ("/" + parts.slice(0, n).join("/")).length;
    values.push(decodeURIComponent(path.slice(before)));
  }
  return values;
}

export function expected(routes: readonly ModelRoute[], method: string, path: string): Outcome {
  const candidates = routes.filter((r) => matches(r, path));
  const wanted = method === "HEAD" ? "GET" : method;
  let best: ModelRoute | undefined;
  for (const r of candidates) {
    if (r.method === wanted && (best === undefined || moreSpecific(r, best))) best = r;
  }
  if (best !== undefined) return { kind: "route", id: best.id, values: valuesOf(best, path) };
  if (candidates.length === 0) return { kind: "404" };
  // "`Allow` lists the methods of the most specific path that matches, not of every path that
  // does: `/users/{id}`'s PUT is not listed for `/users/search`."
  let top = candidates[0];
  for (const r of candidates) if (moreSpecific(r, top)) top = r;
  const methods = new Set(
    candidates.filter((r) => !moreSpecific(top, r)).map((r) => r.method as string),
  );
  if (methods.has("GET")) methods.add("HEAD");
  const allow = [
    ...["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"].filter((m) => methods.has(m)),
    "OPTIONS",
  ]
    .join(", ");
  return method === "OPTIONS" ? { kind: "204", allow } : { kind: "405", allow };
}

export const segmentArb: fc.Arbitrary<ModelSegment> = fc.oneof(
  fc.constantFrom(...LITERALS),
  fc.constant(null),
  fc.constantFrom(...REGEXES).map((regex) => ({ regex })),
);

/** The shape of a route: what the app refuses two routes of one method for. */
export function shapeOf(route: Omit<ModelRoute, "id">): string {
  const parts = route.segments.map((s) =>
    s === null ? "{}" : typeof s === "string" ? s : `{:${s.regex}}`
  );
  return `${route.method} /${parts.join("/")}${route.rest ? "/{*}" : ""}`;
}

/** Route tables: no two routes with one method and one shape (the app refuses those). */
export const tableArb: fc.Arbitrary<ModelRoute[]> = fc
  .array(
    fc.record({
      method: fc.constantFrom(...METHODS),
      segments: fc.array(segmentArb, { maxLength: 4 }),
      rest: fc.oneof(fc.constant(false), fc.constant(false), fc.constant(true)),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .map((routes) => {
    const seen = new Set<string>();
    const unique: ModelRoute[] = [];
    for (const r of routes) {
      const key = shapeOf(r);
      if (seen.has(key)) continue;
      seen.add(key);
      unique.push({ id: unique.length, ...r });
    }
    return unique;
  });

// What fills a variable: literals, digits, words the regexes take or not, and percent-encoded
// spellings of them (`%61` is `a`, `%37` is `7`).
const FILL = [...LITERALS, "x", "7", "42", "ab", "ba", "a7", "%61", "%37", "%62a", "4%32"];

/**
 * Request paths near the table's patterns: each variable filled with a literal or another word, a
 * catch-all with nothing, more segments, or a trailing `/`; and paths of random segments.
 */
export function probesArb(routes: readonly ModelRoute[]): fc.Arbitrary<string[]> {
  const fill = fc.constantFrom(...FILL);
  const near = fc.constantFrom(...routes).chain((r) =>
    fc.tuple(
      fc.tuple(...r.segments.map((s) => (typeof s === "string" ? fc.constant(s) : fill))),
      r.rest ? fc.array(fc.oneof(fill, fc.constant("")), { maxLength: 3 }) : fc.constant([]),
    ).map(([parts, more]) => "/" + [...parts, ...more].join("/"))
  );
  const random = fc.array(fc.constantFrom(...LITERALS, "x", "7", "ab", "%61", ""), { maxLength: 5 })
    .map((parts) => "/" + parts.join("/"));
  return fc.array(fc.oneof(near, near, random), { minLength: 1, maxLength: 12 });
}
