import { HttpStatus } from "../http/http_status.ts";
import type { Binder, ParameterBinder } from "../web/binder.ts";
import type { ScalarType } from "../web/scalar_type.ts";
import type { RouteMethod } from "../web/compile.ts";
import type { MappedMethod } from "../web/route_table.ts";
import type { PathPattern } from "../web/path_pattern.ts";
import type { PathRegex } from "../web/path_regex.ts";
import { type ApiResponseOptions, docsOf } from "./api_docs.ts";
import { type RouteRecord, routeRecordOf } from "../web/route_record.ts";
import { allOf, type Guard } from "./security.ts";
import { type JsonSchema, scalarSchema, type SchemaSource } from "./json_schema.ts";
import type { DocumentedRoute, FrameworkOperation } from "./documented_route.ts";
import { ALL_RESPONSES, type FrameworkResponse } from "./framework_responses.ts";

/**
 * The methods whose form body `RequestParam` reads and the document describes. The server reads
 * a DELETE's too, as Spring Boot does, but OpenAPI 3.1 says a DELETE body SHOULD be avoided, so
 * the document does not offer one.
 */
const FORM_BODY_METHODS: ReadonlySet<MappedMethod> = new Set(["POST", "PUT", "PATCH"]);

export type SchemaOf = (
  source: SchemaSource | undefined,
  side: "input" | "output",
  hint: string,
) => JsonSchema;

export function describeOperation(
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
  // Said so, rather than left out: a reader (and Swagger UI) then knows no credentials are needed.
  else if (guards.some((guard) => guard.opens === true)) operation.security = [];
}

/** A framework route's operation: only what it declares, no parameters, no body. */
export function describeFrameworkOperation(
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
