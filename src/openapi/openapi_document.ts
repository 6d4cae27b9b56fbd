import { DefinitionError } from "../context/errors.ts";
import { HttpStatus } from "../http/http_status.ts";
import type { Binder, ParameterBinder } from "../web/binder.ts";
import type { ScalarType } from "../web/scalar_type.ts";
import type { RouteMethod } from "../web/compile.ts";
import { compareSpecificity, type MappedMethod } from "../web/route_table.ts";
import { parsePathPattern, type PathPattern } from "../web/path_pattern.ts";
import { parsePathRegex, type PathRegex } from "../web/path_regex.ts";
import { type ApiResponseOptions, docsOf, type SecurityScheme } from "./api_docs.ts";
import { type MiddlewareEntry, type RouteRecord, routeRecordOf } from "../web/route_record.ts";
import { allOf, type Guard } from "./security.ts";
import {
  type JsonSchema,
  scalarSchema,
  type SchemaSource,
  type SharedSchemas,
  sourceSchema,
} from "./json_schema.ts";
import { isMapping } from "../object_guards.ts";

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

/** A route as the document sees it. */
export interface DocumentedRoute {
  readonly httpMethod: MappedMethod;
  /** The declared path, prefix included: `/users/{id}`. */
  readonly path: string;
  /** Its variables, in order. */
  readonly variables: readonly string[];
  /** The controller method; routes the framework serves itself have none. */
  readonly method?: RouteMethod;
  /**
   * How a route the framework serves itself is documented (the health endpoints); a route with
   * neither this nor a method is left out (the document itself, the docs page).
   */
  readonly operation?: FrameworkOperation;
}

/** The operation of a route the framework serves itself, as what serves it describes it. */
export interface FrameworkOperation {
  /** Made unique like a controller method's (`_2`). */
  readonly operationId: string;
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description?: string;
  /** Its answers by status, as `@ApiResponse` declares them. */
  readonly responses: ReadonlyMap<number, ApiResponseOptions>;
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
  ) => readonly Guard[];
}

/** The answers Thaw gives by itself, as shared responses. */
const FRAMEWORK_RESPONSES = {
  BadRequest: [400, "A path variable, parameter, header or body that could not be read"],
  NotFound: [404, "No route for the path (any operation's path with unknown segments)"],
  MethodNotAllowed: [405, "The path exists, not with this method; `Allow` lists the methods"],
  ContentTooLarge: [413, "The body is larger than `server.max-body-size`"],
  UnsupportedMediaType: [415, "The body is not `application/json` (or `+json`)"],
  InternalServerError: [500, "The handler failed; the error is logged, not sent"],
} as const satisfies Record<string, readonly [number, string]>;

/**
 * The answers Thaw gives only to operations that read a form body, in the document only when one
 * does (so an app without such operations has the document it always had).
 */
const FORM_RESPONSES = {
  MultipartTooLarge: [
    413,
    "The body is larger than `server.max-body-size` (a URL-encoded form) or " +
    "`server.multipart.max-request-size`, a file is larger than `server.multipart.max-file-size`, " +
    "or there are more parts than `server.multipart.max-parts`",
  ],
  UnsupportedMultipartType: [
    415,
    "The body is not `multipart/form-data`, or has a `Content-Encoding`",
  ],
  UnsupportedFormEncoding: [
    415,
    "The form body has a `Content-Encoding`, or a `charset` other than UTF-8",
  ],
} as const satisfies Record<string, readonly [number, string]>;

type FrameworkResponse = keyof typeof FRAMEWORK_RESPONSES | keyof typeof FORM_RESPONSES;

const ALL_RESPONSES: Record<FrameworkResponse, readonly [number, string]> = {
  ...FRAMEWORK_RESPONSES,
  ...FORM_RESPONSES,
};

/**
 * The methods whose form body `RequestParam` reads and the document describes. The server reads
 * a DELETE's too, as Spring Boot does, but OpenAPI 3.1 says a DELETE body SHOULD be avoided, so
 * the document does not offer one.
 */
const FORM_BODY_METHODS: ReadonlySet<MappedMethod> = new Set(["POST", "PUT", "PATCH"]);

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

type SchemaOf = (
  source: SchemaSource | undefined,
  side: "input" | "output",
  hint: string,
) => JsonSchema;

function describeOperation(
  route: DocumentedRoute,
  pattern: PathPattern,
  names: readonly string[],
  schemaOf: SchemaOf,
  operationIds: Set<string>,
  tags: string[],
  used: Set<FrameworkResponse>,
  guards: readonly Guard[],
): Record<string, unknown> {
  const { type, methodName, binders, status } = route.method as RouteMethod;
  const { tags: declaredTags, docs } = docsOf(type, methodName);
  const operationId = unique(`${type.name}.${methodName}`, operationIds);
  const operationTags = declaredTags ?? [type.name];
  for (const tag of operationTags) if (!tags.includes(tag)) tags.push(tag);

  const operation: Record<string, unknown> = { operationId, tags: operationTags };
  if (docs?.operation?.summary !== undefined) operation.summary = docs.operation.summary;
  if (docs?.operation?.description !== undefined) {
    operation.description = docs.operation.description;
  }
  if (docs?.operation?.deprecated === true) operation.deprecated = true;
  const parameters = parametersOf(pattern, names, binders);
  if (parameters.length > 0) operation.parameters = parameters;
  const body = binders.find(isBody);
  const form = body === undefined ? formBodyOf(route.httpMethod, binders) : undefined;
  if (body !== undefined) {
    operation.requestBody = {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(body.target, "input", `${operationId}.body`),
        },
      },
    };
  } else if (form !== undefined) operation.requestBody = form;
  // The server reads a DELETE's form body too, and answers as for any other.
  const readsForm = form !== undefined ||
    (body === undefined && route.httpMethod === "DELETE" &&
      binders.some((b) => isValue(b) && b.kind === "param"));
  const answers = frameworkAnswers(binders, readsForm);
  for (const answer of answers) used.add(answer);
  operation.responses = responsesOf(
    operationId,
    docs?.responses ?? new Map(),
    answers,
    schemaOf,
    guards,
    status,
    routeRecordOf(type, methodName, binders)?.produces,
  );
  secure(operation, guards);
  return operation;
}

/** The requirement of an operation's guards, all of which it passes through. */
function secure(operation: Record<string, unknown>, guards: readonly Guard[]): void {
  const security = allOf(guards.map((guard) => guard.security));
  if (security.length > 0) operation.security = security;
}

/** A framework route's operation: only what it declares, no parameters, no body. */
function describeFrameworkOperation(
  framework: FrameworkOperation,
  schemaOf: SchemaOf,
  operationIds: Set<string>,
  tags: string[],
  guards: readonly Guard[],
): Record<string, unknown> {
  const operationId = unique(framework.operationId, operationIds);
  for (const tag of framework.tags) if (!tags.includes(tag)) tags.push(tag);
  const operation: Record<string, unknown> = {
    operationId,
    tags: [...framework.tags],
    summary: framework.summary,
  };
  if (framework.description !== undefined) operation.description = framework.description;
  operation.responses = responsesOf(operationId, framework.responses, [], schemaOf, guards);
  secure(operation, guards);
  return operation;
}

function unique(wanted: string, taken: Set<string>): string {
  let id = wanted;
  for (let n = 2; taken.has(id); n++) id = `${wanted}_${n}`;
  taken.add(id);
  return id;
}

function isBody(binder: ParameterBinder): binder is Extract<Binder, { kind: "body" }> {
  return typeof binder === "object" && binder !== null && binder.kind === "body";
}

function isValue(
  binder: ParameterBinder,
): binder is Extract<Binder, { kind: "path" | "param" | "header" }> {
  // Only these: a mapping may pass the route's own arguments (a WebSocket's context) as binders.
  return typeof binder === "object" && binder !== null &&
    (binder.kind === "path" || binder.kind === "param" || binder.kind === "header");
}

function isPart(binder: ParameterBinder): binder is Extract<Binder, { kind: "part" }> {
  return typeof binder === "object" && binder !== null && binder.kind === "part";
}

type ParamBinder = Extract<Binder, { kind: "param" | "header" }>;

/** A parameter's schema: what its conversion accepts, and its default. */
function valueSchema(binder: ParamBinder): JsonSchema {
  const schema: Record<string, unknown> = { ...scalarSchema(binder.type) };
  if (binder.hasDefault && isJsonScalar(binder.default)) schema.default = binder.default;
  return schema;
}

/**
 * The form body an operation without `RequestBody()` reads: with `RequestPart`s, a
 * `multipart/form-data` body of those parts (a `File` part a binary string) and, optional, its
 * parameters (text parts are parameters too); else, on POST, PUT and PATCH, an optional
 * `application/x-www-form-urlencoded` body of its parameters. Parameters stay query parameters as
 * well, and none is required in a body: the query may carry it. `undefined`: no form body.
 */
function formBodyOf(
  httpMethod: MappedMethod,
  binders: readonly ParameterBinder[],
): JsonSchema | undefined {
  const parts = binders.filter(isPart);
  const params = binders.filter((b): b is ParamBinder => isValue(b) && b.kind === "param");
  if (parts.length === 0 && (params.length === 0 || !FORM_BODY_METHODS.has(httpMethod))) {
    return undefined;
  }
  // Entries, not assignments: a part or parameter may be named `__proto__`.
  const properties = new Map<string, JsonSchema>();
  for (const part of parts) {
    if (properties.has(part.name)) continue;
    properties.set(
      part.name,
      part.type === File
        ? { type: "string", format: "binary" }
        : part.type === undefined
        ? { type: "string" }
        : scalarSchema(part.type as ScalarType),
    );
  }
  for (const param of params) {
    if (!properties.has(param.name)) properties.set(param.name, valueSchema(param));
  }
  const required = [...new Set(parts.filter((p) => p.required).map((p) => p.name))];
  const schema: Record<string, unknown> = {
    type: "object",
    properties: Object.fromEntries(properties),
  };
  if (required.length > 0) schema.required = required;
  const type = parts.length > 0 ? "multipart/form-data" : "application/x-www-form-urlencoded";
  return { required: required.length > 0, content: { [type]: { schema } } };
}

/** `names`: the path template's variable names, position by position. */
function parametersOf(
  pattern: PathPattern,
  names: readonly string[],
  binders: readonly ParameterBinder[],
): JsonSchema[] {
  const values = binders.filter(isValue);
  const variables = pattern.segments.filter((s) => s.kind !== "literal");
  const parameters: JsonSchema[] = variables.map((segment, i) => {
    const binder = values.find((b) => b.kind === "path" && b.name === segment.name);
    const schema: Record<string, unknown> = binder === undefined
      ? { type: "string" }
      : { ...scalarSchema(binder.type) };
    const parameter: Record<string, unknown> = { name: names[i], in: "path", required: true };
    if (segment.kind === "rest") {
      const before = pattern.source.slice(0, pattern.source.length - `/{*${segment.name}}`.length);
      parameter.description = (before === ""
        ? "The whole path, from its leading `/` (`/a/b`; `/` for the root)"
        : `The rest of the path after \`${before}\`, from its \`/\` on (\`/a/b\`; empty for ` +
          `\`${before}\` itself)`) +
        ". An OpenAPI path parameter cannot hold `/`: a client that fills one in sends `%2F`, " +
        "which the server takes only with `server.allow-encoded-slash`";
    } else if (segment.constraint !== undefined) {
      schema.pattern = openApiPattern(segment.constraint);
    }
    parameter.schema = schema;
    return parameter;
  });
  const seen = new Set<string>();
  for (const binder of values) {
    if (binder.kind === "path") continue;
    const place = binder.kind === "param" ? "query" : "header";
    // Header names are case-insensitive; two binders of one value are one parameter.
    const key = `${place} ${place === "header" ? binder.name.toLowerCase() : binder.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    parameters.push({
      name: binder.name,
      in: place,
      required: binder.required && !binder.hasDefault,
      schema: valueSchema(binder),
    });
  }
  return parameters;
}

/**
 * A `{name:regex}` as a JSON Schema `pattern`, anchored: the regex as declared, or, where JSON
 * Schema's validators (which compile patterns with the `u` flag) would refuse its spelling
 * (`\-` outside a class), the same regex as Thaw runs it.
 */
function openApiPattern(constraint: PathRegex): string {
  const declared = `^(?:${constraint.source})$`;
  try {
    new RegExp(declared, "u");
    return declared;
  } catch {
    return constraint.regex.source;
  }
}

function isJsonScalar(value: unknown): boolean {
  return typeof value === "string" || typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value));
}

/** The answers Thaw itself may give to a request of this operation. */
function frameworkAnswers(
  binders: readonly ParameterBinder[],
  readsForm: boolean,
): FrameworkResponse[] {
  const answers: FrameworkResponse[] = [];
  const canRefuse = binders.some((b) =>
    isBody(b) || isPart(b) ||
    (isValue(b) && (b.type !== String || (b.kind !== "path" && b.required && !b.hasDefault)))
  );
  // A form body, even of optional parameters, can be malformed (a part without a name) or hold
  // bytes that are not UTF-8.
  if (canRefuse || readsForm) answers.push("BadRequest");
  if (binders.some(isBody)) answers.push("ContentTooLarge", "UnsupportedMediaType");
  else if (binders.some(isPart)) answers.push("MultipartTooLarge", "UnsupportedMultipartType");
  else if (readsForm) answers.push("ContentTooLarge", "UnsupportedFormEncoding");
  answers.push("InternalServerError");
  return answers;
}

/**
 * An operation's answers: the one its handler gives (`@ResponseStatus`'s status, else `200`),
 * unless `@ApiResponse`s replace it; those; its guards' (the first guard's of a status); Thaw's
 * own. What is declared nearer the handler wins a status. `produces`: what the handler's own answer
 * is when it is not JSON: an event stream (a body always there), or a WebSocket's upgrade (101).
 */
function responsesOf(
  operationId: string,
  declared: ReadonlyMap<number, ApiResponseOptions>,
  framework: readonly FrameworkResponse[],
  schemaOf: SchemaOf,
  guards: readonly Guard[],
  status?: number,
  produces?: RouteRecord["produces"],
): Record<string, JsonSchema> {
  const responses: Record<string, JsonSchema> = {};
  const upgrade = produces === "websocket";
  const own = upgrade ? 101 : status ?? 200;
  const answer = (code: number, options: ApiResponseOptions): JsonSchema => {
    const streamed = produces === "text/event-stream" && code === own;
    const response: Record<string, unknown> = {
      description: options.description ??
        (streamed
          ? "A stream of server-sent events"
          : upgrade && code === own
          ? "Switching Protocols: the connection is now a WebSocket"
          : reasonPhrase(code)),
    };
    if (options.schema !== undefined || streamed) {
      const schema = options.schema === undefined
        ? { type: "string" }
        : schemaOf(options.schema, "output", `${operationId}.${code}`);
      const type = options.contentType ?? (streamed ? "text/event-stream" : "application/json");
      response.content = { [type]: { schema } };
    }
    return response;
  };
  if (status !== undefined || declared.size === 0 || upgrade) {
    responses[String(own)] = answer(own, declared.get(own) ?? {});
  }
  for (const [code, options] of [...declared].sort(([a], [b]) => a - b)) {
    responses[String(code)] = answer(code, options);
  }
  for (const guard of guards) {
    for (const [code, options] of guard.responses) {
      responses[String(code)] ??= answer(code, options);
    }
  }
  for (const name of framework) {
    const status = String(ALL_RESPONSES[name][0]);
    responses[status] ??= { $ref: `#/components/responses/${name}` };
  }
  return responses;
}

function reasonPhrase(status: number): string {
  try {
    return HttpStatus.valueOf(status).getReasonPhrase();
  } catch {
    return `Status ${status}`;
  }
}
