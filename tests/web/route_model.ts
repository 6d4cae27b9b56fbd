import fc from "fast-check";

/** The reference model of Thaw's routing, written from the README's rule and nothing else. */

export type Method = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";
export const METHODS: readonly Method[] = ["GET", "POST", "PUT", "DELETE", "PATCH"];
/** `null` is a `{variable}` segment. */
export type ModelSegment = string | null;
export interface ModelRoute {
  readonly id: number;
  readonly method: Method;
  readonly segments: readonly ModelSegment[];
}

/** What the model says a request gets. */
export type Outcome =
  | { readonly kind: "route"; readonly id: number }
  | { readonly kind: "405" | "204"; readonly allow: string }
  | { readonly kind: "404" };

const LITERALS = ["a", "b", "c"];

export function pathOf(segments: readonly ModelSegment[]): string {
  let n = 0;
  return "/" + segments.map((s) => s ?? `{v${n++}}`).join("/");
}

function matches(route: ModelRoute, parts: readonly string[]): boolean {
  return route.segments.length === parts.length &&
    route.segments.every((s, i) => parts[i] !== "" && (s === null || s === parts[i]));
}

// Segment by segment, a literal beats a variable: compare the kinds left to right.
function moreSpecific(a: ModelRoute, b: ModelRoute): boolean {
  for (let i = 0; i < a.segments.length; i++) {
    const av = a.segments[i] === null;
    const bv = b.segments[i] === null;
    if (av !== bv) return !av;
  }
  return false;
}

export function expected(routes: readonly ModelRoute[], method: string, path: string): Outcome {
  const parts = path === "/" ? [] : path.slice(1).split("/");
  const candidates = routes.filter((r) => matches(r, parts));
  const wanted = method === "HEAD" ? "GET" : method;
  let best: ModelRoute | undefined;
  for (const r of candidates) {
    if (r.method === wanted && (best === undefined || moreSpecific(r, best))) best = r;
  }
  if (best !== undefined) return { kind: "route", id: best.id };
  if (candidates.length === 0) return { kind: "404" };
  const methods = new Set(candidates.map((r) => r.method as string));
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
);

/** Route tables: no two routes with one method and one shape (the app refuses those). */
export const tableArb: fc.Arbitrary<ModelRoute[]> = fc
  .array(
    fc.record({
      method: fc.constantFrom(...METHODS),
      segments: fc.array(segmentArb, { maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .map((routes) => {
    const seen = new Set<string>();
    const unique: ModelRoute[] = [];
    for (const r of routes) {
      const key = `${r.method} ${r.segments.map((s) => s ?? "{}").join("/")}`;
      if (seen.has(key)) continue;
      seen.add(key);
      unique.push({ id: unique.length, ...r });
    }
    return unique;
  });

/** Request paths near the table's patterns: each variable filled with a literal or another word. */
export function probesArb(routes: readonly ModelRoute[]): fc.Arbitrary<string[]> {
  const fill = fc.constantFrom(...LITERALS, "x", "7");
  const near = fc.constantFrom(...routes).chain((r) =>
    fc.tuple(...r.segments.map((s) => (s === null ? fill : fc.constant(s))))
      .map((parts) => "/" + parts.join("/"))
  );
  const random = fc.array(fc.constantFrom(...LITERALS, "x", ""), { maxLength: 5 })
    .map((parts) => "/" + parts.join("/"));
  return fc.array(fc.oneof(near, near, random), { minLength: 1, maxLength: 12 });
}
