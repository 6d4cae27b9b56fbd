import { DefinitionError } from "../context/errors.ts";
import { compareSpecificity } from "../web/route_table.ts";
import { parsePathPattern, type PathPattern } from "../web/path_pattern.ts";
import { parsePathRegex } from "../web/path_regex.ts";
import type { SecurityScheme } from "./api_docs.ts";
import type { MiddlewareEntry } from "../web/route_record.ts";
import type { Guard } from "./security.ts";
import { type JsonSchema, type SharedSchemas, sourceSchema } from "./json_schema.ts";
import { isMapping } from "../object_guards.ts";
import type { DocumentedRoute, FrameworkOperation, GuardedRoute } from "./documented_route.ts";
import {
  ALL_RESPONSES,
  FORM_RESPONSES,
  FRAMEWORK_RESPONSES,
  type FrameworkResponse,
} from "./framework_responses.ts";
import {
  describeFrameworkOperation,
  describeOperation,
  type SchemaOf,
} from "./openapi_operation.ts";

/** An OpenAPI 3.1 document, as `openApiDocument(app)` returns it and `/openapi.json` serves it. */
export interface OpenApiDocument {
  /** The version of the OpenAPI specification. */
  readonly openapi: "3.1.0";
  /** `app.openapi.title`, `version` and `description`. */
  readonly info: {
    readonly title: string;
    readonly version: string;
    readonly description?: string;
  };
  /** The operations' tags, in the order they first appear. */
  readonly tags?: readonly { readonly name: string }[];
  /** Path (`/users/{id}`) -> lower-case method -> operation. */
  readonly paths: Readonly<Record<string, Readonly<Record<string, JsonSchema>>>>;
  /** Shared schemas (`Error`, schemas' `$defs`) and the error answers Thaw gives by itself. */
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>;
    readonly responses: Readonly<Record<string, JsonSchema>>;
    /** The schemes middleware reads credentials by, as their `describe` gives them; when any. */
    readonly securitySchemes?: Readonly<Record<string, SecurityScheme>>;
  };
}

/** What the document says of itself, and of the error bodies. */
export interface DocumentOptions {
  readonly title: string;
  readonly version: string;
  readonly description?: string | undefined;
  /**
   * The error answers have the default error controller's body. With an `errorController` bean
   * of the app's own, they are documented without a body schema: only that bean knows it.
   */
  readonly defaultErrorBody: boolean;
  /**
   * The guards of a route: what its middleware (the app's, then `own`, the route's) says of it.
   * None when not given.
   */
  readonly guards?: (
    route: { readonly method: string; readonly path: string },
    own: readonly MiddlewareEntry[],
    documented: GuardedRoute,
  ) => readonly Guard[];
}

/** `{timestamp, status, message, error, issues?}`: what `DefaultErrorController` writes. */
const ERROR_SCHEMA: JsonSchema = {
  type: "object",
  required: ["timestamp", "status", "message", "error"],
  properties: {
    timestamp: { type: "string", format: "date-time" },
    status: { type: "integer" },
    message: { type: "string", description: "The status's reason phrase" },
    error: {
      type: ["string", "null"],
      description: "An `HttpException`'s message; `null` for any other error",
    },
    issues: {
      type: "array",
      description: "A body's schema validation issues",
      items: {
        type: "object",
        required: ["message", "path"],
        properties: {
          message: { type: "string" },
          path: { type: "array", items: { type: ["string", "integer"] } },
        },
      },
    },
  },
};

/**
 * Builds the OpenAPI 3.1 document of an app's routes: one operation per mapping, with its
 * parameters, body, declared answers and the error answers Thaw gives by itself. Pure: it reads
 * only the routes' decorator records.
 */
export function buildOpenApiDocument(
  routes: readonly DocumentedRoute[],
  options: DocumentOptions,
): OpenApiDocument {
  const shared: SharedSchemas = new Map();
  // First, so that a schema of the app's own named `Error` gets another name.
  if (options.defaultErrorBody) shared.set("Error", structuredClone(ERROR_SCHEMA));
  const { paths, documented } = layOutPaths(routes);
  const found: Findings = {
    schemaOf: schemaConverter(shared),
    tags: [],
    operationIds: new Set(),
    used: new Set(),
    schemes: new Map(),
    required: new Map(),
  };
  for (const entry of documented) {
    const { route, template } = entry;
    const [first, ...others] = entry.sharing;
    if (first.route !== route) continue;
    paths[template.path][route.httpMethod.toLowerCase()] = documentRoute(
      entry,
      template,
      others,
      found,
      options,
    );
  }
  const info: { title: string; version: string; description?: string } = {
    title: options.title,
    version: options.version,
  };
  if (options.description !== undefined) info.description = options.description;
  // Frozen: it is built once and handed to every caller of `openApiDocument(app)`.
  return deepFreeze({
    openapi: "3.1.0",
    info,
    tags: found.tags.map((name) => ({ name })),
    paths,
    components: componentsOf(shared, found, options),
  });
}

// A route the document describes, and its parsed path.
interface DocumentedEntry {
  readonly route: DocumentedRoute;
  readonly pattern: PathPattern;
}

// A path as the document writes it, and its variables, whose names each route's are renamed to.
interface PathTemplate {
  readonly path: string;
  readonly variables: readonly string[];
}

// What the document gathers while it describes the routes one by one.
interface Findings {
  readonly schemaOf: SchemaOf;
  /** The operations' tags, in the order they first appear. */
  readonly tags: string[];
  readonly operationIds: Set<string>;
  /** The framework's error answers an operation refers to. */
  readonly used: Set<FrameworkResponse>;
  readonly schemes: Map<string, { scheme: SecurityScheme; by: string }>;
  /** Each scheme a requirement names, and the first middleware naming it, for the message. */
  readonly required: Map<string, string>;
}

// One schema used for several bodies or answers is converted once, and so shared once.
function schemaConverter(shared: SharedSchemas): SchemaOf {
  const converted = new WeakMap<object, Partial<Record<"input" | "output", JsonSchema>>>();
  return (source, side, hint) => {
    if (source === undefined) return {};
    const sides = converted.get(source) ?? {};
    converted.set(source, sides);
    return sides[side] ??= sourceSchema(source, side, shared, hint);
  };
}

// A path's shape: its literal segments, a variable of any name or regex as `{}`.
function shapeOf(pattern: PathPattern): string {
  return "/" + pattern.segments.map((s) => s.kind === "literal" ? s.text : "{}").join("/");
}

/**
 * The routes the document describes, grouped by method and path shape, and the document's paths.
 * OpenAPI allows one template per path: `/a/{x}` and `/a/{y}` are written as the first one, each
 * route's variables renamed by position. A regex is no part of the template (`/a/{x:\d+}` is
 * `/a/{x}`, the regex its parameter's `pattern`), nor is a catch-all's `*`. OpenAPI has one
 * operation per method and path, and `/n/{id:\d+}` and `/n/{name}` are one path there: the route
 * tried first documents it, and its description names the others, in the order they are tried.
 */
function layOutPaths(routes: readonly DocumentedRoute[]): {
  paths: Record<string, Record<string, JsonSchema>>;
  documented: LaidOutEntry[];
} {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const templates = new Map<string, PathTemplate>();
  const sharing = new Map<string, DocumentedEntry[]>();
  const documented = routes.flatMap((route): LaidOutEntry[] => {
    if (route.method === undefined && route.operation === undefined) return [];
    const entry = { route, pattern: parsePathPattern(route.path, parsePathRegex) };
    const { pattern } = entry;
    const shape = shapeOf(pattern);
    const key = `${route.httpMethod} ${shape}`;
    let group = sharing.get(key);
    if (group === undefined) sharing.set(key, group = []);
    group.push(entry);
    let template = templates.get(shape);
    if (template === undefined) {
      const path = "/" +
        pattern.segments.map((s) => s.kind === "literal" ? s.text : `{${s.name}}`).join("/");
      templates.set(shape, template = { path, variables: pattern.variables });
      paths[path] = {}; // in the order routes are declared, whichever documents it
    }
    return [{ ...entry, sharing: group, template }];
  });
  for (const entries of sharing.values()) {
    entries.sort((a, b) => compareSpecificity(a.pattern, b.pattern));
  }
  return { paths, documented };
}

// A documented route, the routes of its method and path shape (most specific first, itself
// among them) and its path's template.
interface LaidOutEntry extends DocumentedEntry {
  readonly sharing: readonly DocumentedEntry[];
  readonly template: PathTemplate;
}

function nameOf(route: DocumentedRoute): string | undefined {
  return route.method !== undefined
    ? `${route.method.type.name}.${route.method.methodName}`
    : route.operation?.operationId;
}

// The operation of the route that documents its method and path; `others` share them.
function documentRoute(
  { route, pattern }: DocumentedEntry,
  template: PathTemplate,
  others: readonly DocumentedEntry[],
  found: Findings,
  options: DocumentOptions,
): Record<string, unknown> {
  const { method, operation: framework } = route;
  const { schemaOf, operationIds, tags } = found;
  try {
    const guards = options.guards?.(
      { method: route.httpMethod, path: route.path },
      method?.middleware ?? [],
      { ...route, template: pattern.template },
    ) ?? [];
    for (const guard of guards) addSchemes(guard, found.schemes, found.required);
    const operation = method !== undefined
      ? describeOperation(
        route,
        pattern,
        template.variables,
        schemaOf,
        operationIds,
        tags,
        found.used,
        guards,
      )
      : describeFrameworkOperation(
        framework as FrameworkOperation,
        schemaOf,
        operationIds,
        tags,
        guards,
      );
    if (others.length > 0) {
      const also = `Also served, where ${route.httpMethod} ${route.path} does not match: ` +
        others.map((o) => `${o.route.httpMethod} ${o.route.path} (${nameOf(o.route)})`)
          .join(", then ") +
        ".";
      operation.description = typeof operation.description === "string"
        ? `${operation.description}\n\n${also}`
        : also;
    }
    // What `/openapi.json` will send: a value JSON cannot carry fails here, named.
    JSON.stringify(operation);
    return operation;
  } catch (error) {
    throw new DefinitionError(
      `${nameOf(route)} (${route.httpMethod} ${route.path}): cannot be documented: ` +
        `${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

// The shared schemas, the error answers Thaw gives by itself, and the security schemes, every one
// a requirement names declared.
function componentsOf(
  shared: SharedSchemas,
  found: Findings,
  options: DocumentOptions,
): OpenApiDocument["components"] {
  const responses: Record<string, JsonSchema> = {};
  const listed = [
    ...Object.keys(FRAMEWORK_RESPONSES),
    ...Object.keys(FORM_RESPONSES).filter((name) => found.used.has(name as FrameworkResponse)),
  ] as FrameworkResponse[];
  for (const name of listed) {
    const description = ALL_RESPONSES[name][1];
    responses[name] = options.defaultErrorBody
      ? {
        description,
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      }
      : { description };
  }
  const { schemes } = found;
  for (const [name, by] of found.required) {
    if (!schemes.has(name)) {
      throw new DefinitionError(
        `Middleware ${by}: describe() requires the security scheme ${JSON.stringify(name)}, ` +
          "which no middleware's securitySchemes declares",
      );
    }
  }
  const components: Record<string, unknown> = { schemas: Object.fromEntries(shared), responses };
  if (schemes.size > 0) {
    components.securitySchemes = Object.fromEntries(
      [...schemes].map(([name, { scheme }]) => [name, scheme]),
    );
  }
  return components as OpenApiDocument["components"];
}

/**
 * Adds a guard's schemes to the document's: one name, one scheme, whichever middleware declares
 * it, since an operation's requirement names it alone.
 */
function addSchemes(
  guard: Guard,
  schemes: Map<string, { scheme: SecurityScheme; by: string }>,
  required: Map<string, string>,
): void {
  for (const [name, scheme] of guard.schemes) {
    const known = schemes.get(name);
    if (known === undefined) schemes.set(name, { scheme, by: guard.name });
    else if (canonical(known.scheme) !== canonical(scheme)) {
      throw new DefinitionError(
        `The security scheme ${JSON.stringify(name)} is declared twice, differently: ` +
          `${canonical(known.scheme)} by middleware ${known.by}, ${canonical(scheme)} by ` +
          `middleware ${guard.name}; give one of them another name`,
      );
    }
  }
  for (const requirement of guard.security) {
    for (const name of Object.keys(requirement)) {
      if (!required.has(name)) required.set(name, guard.name);
    }
  }
}

/** JSON with every object's keys sorted: equal for equal values, whatever the order written. */
function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) =>
      isMapping(v)
        ? Object.fromEntries(
          Object.entries(v).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
        )
        : v,
  );
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
