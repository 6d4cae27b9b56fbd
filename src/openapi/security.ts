// What middleware says of the routes it guards, for the document: its `describe(route)` answer,
// checked, and how the requirements of several guards in a row combine. No I/O.
import type { Class } from "../context/class.ts";
import { isMiddlewareClass, type Middleware, middlewareName } from "../web/middleware.ts";
import type { MiddlewareEntry } from "../web/route_record.ts";
import type {
  ApiResponseOptions,
  DescribedRoute,
  MiddlewareDocs,
  SecurityRequirement,
  SecurityScheme,
} from "./api_docs.ts";
import { isMapping } from "../object_guards.ts";
import type { DocumentedGuard, GuardedRoute } from "./documented_route.ts";

/** One middleware's description, checked: what the document adds to each route it guards. */
export interface Guard {
  /** The middleware's name, for messages. */
  readonly name: string;
  readonly schemes: ReadonlyMap<string, SecurityScheme>;
  /** Any one of these; none: it requires nothing. */
  readonly security: readonly SecurityRequirement[];
  readonly responses: ReadonlyMap<number, ApiResponseOptions>;
  /** Whether it said `security: []`: the operation is documented as open to anyone. */
  readonly opens?: boolean;
}

const KEYS = ["securitySchemes", "security", "responses"];

// What each kind of scheme must say, beside its type: OpenAPI 3.1's required fields.
const SCHEME_FIELDS: Record<string, readonly string[]> = {
  http: ["scheme"],
  apiKey: ["name", "in"],
  oauth2: ["flows"],
  openIdConnect: ["openIdConnectUrl"],
  mutualTLS: [],
};

const show = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "an array"
    : JSON.stringify(value) ?? typeof value;

/**
 * A middleware's `describe()` answer as a {@linkcode Guard}; `undefined` for none. A shape that
 * would make the document wrong (a misspelt key, a scheme without its required fields, a status
 * out of range) throws a `TypeError` naming the middleware: caught here, not by a client.
 */
export function guardOf(value: unknown, name: string): Guard | undefined {
  if (value === undefined) return undefined;
  const fail = (why: string): never => {
    throw new TypeError(`Middleware ${name}: describe() ${why}`);
  };
  if (!isMapping(value)) {
    return fail(`returned ${show(value)}, not an object of ${KEYS.join(", ")}`);
  }
  for (const key of Object.keys(value)) {
    if (!KEYS.includes(key)) fail(`returned an unknown key ${JSON.stringify(key)}: ${KEYS}`);
  }
  const docs = value as MiddlewareDocs;
  const schemes = new Map<string, SecurityScheme>();
  if (docs.securitySchemes !== undefined) {
    if (!isMapping(docs.securitySchemes)) fail("securitySchemes: an object of schemes by name");
    for (const [scheme, given] of Object.entries(docs.securitySchemes as Record<string, unknown>)) {
      if (scheme === "") fail("securitySchemes: a scheme needs a name");
      const where = `securitySchemes.${scheme}`;
      if (!isMapping(given)) return fail(`${where}: a security scheme object, got ${show(given)}`);
      if (typeof given.type !== "string" || !Object.hasOwn(SCHEME_FIELDS, given.type)) {
        fail(`${where}: type ${show(given.type)} is none of ${Object.keys(SCHEME_FIELDS)}`);
      }
      for (const field of SCHEME_FIELDS[given.type as string]) {
        if (given[field] === undefined) fail(`${where}: a ${given.type} scheme needs ${field}`);
      }
      if (given.type === "apiKey" && !["header", "query", "cookie"].includes(String(given.in))) {
        fail(`${where}: in: ${show(given.in)} is none of header, query, cookie`);
      }
      schemes.set(scheme, structuredClone(given) as SecurityScheme);
    }
  }
  let security: SecurityRequirement[];
  if (docs.security === undefined) {
    security = [...schemes.keys()].map((scheme) => Object.fromEntries([[scheme, []]]));
  } else {
    if (!Array.isArray(docs.security)) fail("security: an array of requirements");
    security = docs.security.map((requirement, i) => {
      if (!isMapping(requirement)) fail(`security[${i}]: an object of scheme names to scopes`);
      for (const [scheme, scopes] of Object.entries(requirement)) {
        if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === "string")) {
          fail(`security[${i}].${scheme}: an array of scope names, got ${show(scopes)}`);
        }
      }
      return structuredClone(requirement);
    });
  }
  const responses = new Map<number, ApiResponseOptions>();
  if (docs.responses !== undefined) {
    if (!isMapping(docs.responses)) fail("responses: an object of answers by status");
    for (const [key, answer] of Object.entries(docs.responses)) {
      const status = Number(key);
      if (!/^\d+$/.test(key) || status < 100 || status > 599) {
        fail(`responses: status ${key} is not 100 to 599`);
      }
      if (typeof answer === "string") responses.set(status, { description: answer });
      else if (isMapping(answer)) responses.set(status, answer as ApiResponseOptions);
      else fail(`responses.${key}: a description or { description, schema }, got ${show(answer)}`);
    }
  }
  const opens = Array.isArray(docs.security) && docs.security.length === 0;
  return { name, schemes, security, responses, ...(opens ? { opens } : {}) };
}

/**
 * What guards in a row require: each one's requirement met at once, so one alternative of each,
 * merged (a scheme two of them name needs the scopes of both). A guard that requires nothing adds
 * nothing; `[]`: nothing is required.
 */
export function allOf(lists: readonly (readonly SecurityRequirement[])[]): SecurityRequirement[] {
  let combined: Map<string, string[]>[] | undefined;
  for (const list of lists) {
    if (list.length === 0) continue;
    const alternatives = list.map((r) => new Map(Object.entries(r).map(([k, v]) => [k, [...v]])));
    combined = combined === undefined
      ? alternatives
      : combined.flatMap((a) => alternatives.map((b) => merged(a, b)));
  }
  // Entries, not assignments: a scheme may be named `__proto__`.
  const seen = new Set<string>();
  const result: SecurityRequirement[] = [];
  for (const requirement of combined ?? []) {
    const key = JSON.stringify([...requirement].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
    if (seen.has(key)) continue;
    seen.add(key);
    result.push(Object.fromEntries(requirement));
  }
  return result;
}

function merged(a: Map<string, string[]>, b: Map<string, string[]>): Map<string, string[]> {
  const both = new Map(a);
  for (const [scheme, scopes] of b) {
    both.set(scheme, [...new Set([...(both.get(scheme) ?? []), ...scopes])].sort());
  }
  return both;
}

/**
 * The guards of each documented route: the `bootstrap({ middleware })` items, then the route's
 * own (`route.middleware`), each asked `describe(route)`, a bean through its instance.
 */
export function guardsOf(
  global: readonly MiddlewareEntry[],
  beanOf: (type: Class) => unknown,
): GuardsOfRoute {
  return (route, own) =>
    [...global, ...own].flatMap((item) => {
      const name = middlewareName(item);
      const owner = isMiddlewareClass(item) ? beanOf(item) as Partial<Middleware> : item;
      const describe = (owner as { describe?: unknown }).describe;
      if (describe === undefined) return [];
      if (typeof describe !== "function") {
        throw new TypeError(`Middleware ${name}: describe is a ${typeof describe}, not a function`);
      }
      let docs: unknown;
      try {
        docs = describe.call(owner, { method: route.method, path: route.path });
      } catch (error) {
        throw new TypeError(
          `Middleware ${name}: describe() threw: ${
            error instanceof Error ? error.message : String(error)
          }`,
          { cause: error },
        );
      }
      const guard = guardOf(docs, name);
      return guard === undefined ? [] : [guard];
    });
}

/** The guards of one documented route: `route` as declared, `own` its middleware. */
export type GuardsOfRoute = (
  route: DescribedRoute,
  own: readonly MiddlewareEntry[],
  documented?: GuardedRoute,
) => Guard[];

/**
 * `guards`, with the guard of every route a feature gave (the security feature's) first: what
 * it says of the route (`documented`), checked as a middleware's `describe` answer is.
 */
export function withDocumentedGuard(
  guards: GuardsOfRoute,
  documentedGuard: DocumentedGuard | undefined,
): GuardsOfRoute {
  if (documentedGuard === undefined) return guards;
  return (route, own, documented) => {
    const rest = guards(route, own, documented);
    if (documented === undefined) return rest;
    const guard = guardOf(documentedGuard(documented), "security()");
    return guard === undefined ? rest : [guard, ...rest];
  };
}
