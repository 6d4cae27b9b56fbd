// The documentation decorators. Named as NestJS's `@nestjs/swagger` names them (`@ApiOperation`,
// `@ApiResponse`, `@ApiTags`), which are also the names of the Swagger annotations springdoc
// users write in Spring (`@Operation`, `@ApiResponse`, `@Tag`), prefixed so that `Operation` does
// not collide with a user's own. They only record; the document is built elsewhere, and only
// when an app asks for it.
import { checkOptionsObject } from "../options_object.ts";
import type { Class } from "../context/class.ts";
import { entryChain, ownEntry } from "../context/class_record.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import type { HttpStatus } from "../http/http_status.ts";
import type { BeanClassDecorator } from "../context/stereotypes.ts";
import type { SchemaSource } from "./json_schema.ts";

/** Options of {@linkcode ApiOperation}. */
export interface ApiOperationOptions {
  /** One line: what the operation does. */
  readonly summary?: string;
  /** More, in CommonMark. */
  readonly description?: string;
  /** Marks the operation as deprecated in the document. */
  readonly deprecated?: boolean;
}

/** Options of {@linkcode ApiResponse}. */
export interface ApiResponseOptions {
  /** What the answer means; the status's reason phrase by default. */
  readonly description?: string;
  /**
   * The body: a Standard Schema (its JSON Schema output form), a class (its declared fields), or
   * a JSON Schema object. None: an answer without a body.
   */
  readonly schema?: SchemaSource;
  /**
   * The body's media type; `application/json` by default (`text/event-stream` for an
   * `@SseMapping`'s own answer).
   */
  readonly contentType?: string;
}

/**
 * An OpenAPI security scheme: how a client sends its credentials, listed in the document's
 * `components.securitySchemes` (Swagger UI's "Authorize" asks for them).
 */
export type SecurityScheme =
  | {
    /** RFC 9110 authentication: `scheme: "bearer"` or `"basic"`. */
    readonly type: "http";
    readonly scheme: string;
    /** A hint for people, such as `JWT`. */
    readonly bearerFormat?: string;
    readonly description?: string;
  }
  | {
    /** A key in a header, query parameter or cookie of this `name`. */
    readonly type: "apiKey";
    readonly name: string;
    readonly in: "header" | "query" | "cookie";
    readonly description?: string;
  }
  | {
    readonly type: "oauth2";
    /** OpenAPI's OAuth Flows Object. */
    readonly flows: Readonly<Record<string, unknown>>;
    readonly description?: string;
  }
  | {
    readonly type: "openIdConnect";
    readonly openIdConnectUrl: string;
    readonly description?: string;
  }
  | { readonly type: "mutualTLS"; readonly description?: string };

/**
 * A scheme name to the scopes it needs (none but for OAuth 2 and OpenID Connect); a request must
 * satisfy every scheme named (OpenAPI's Security Requirement Object).
 */
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

/** The route a middleware's `describe` is asked about. */
export interface DescribedRoute {
  /** `GET`, `POST`, ... */
  readonly method: string;
  /** As declared, the controller's prefix included: `/users/{id}`. */
  readonly path: string;
}

/**
 * What a middleware tells the OpenAPI document of the operations it runs around, from its
 * `describe(route)` (a bean's method, or a property of a middleware function).
 */
export interface MiddlewareDocs {
  /** The schemes it reads credentials by, by name, for `components.securitySchemes`. */
  readonly securitySchemes?: Readonly<Record<string, SecurityScheme>>;
  /**
   * What it accepts: any one of these requirements. By default any one of its own schemes; `[]`
   * requires nothing.
   */
  readonly security?: readonly SecurityRequirement[];
  /** The answers it gives by itself, by status: a description, or an `@ApiResponse`'s options. */
  readonly responses?: Readonly<Record<number, string | ApiResponseOptions>>;
}

/** A method decorator that records documentation only. */
export type ApiDocDecorator = (
  // deno-lint-ignore no-explicit-any
  value: (...args: any[]) => unknown,
  context: ClassMethodDecoratorContext,
) => void;

/** What the documentation decorators recorded for one method. */
export interface MethodDocs {
  operation?: ApiOperationOptions;
  readonly responses: Map<number, ApiResponseOptions>;
}

/** What they recorded for one class (not its superclasses). */
interface ClassDocs {
  tags?: readonly string[];
  readonly methods: Map<string, MethodDocs>;
}

const DOCS = Symbol("thaw.apiDocs");

function ownDocs(metadata: DecoratorMetadataObject): ClassDocs {
  return ownEntry(metadata, DOCS, () => ({ methods: new Map() }));
}

function methodDocs(
  target: unknown,
  context: ClassMethodDecoratorContext,
  decorator: string,
): MethodDocs {
  checkDecoratorCall(`@${decorator}`, target, context);
  if (context.kind !== "method" || context.static) {
    throw new TypeError(`@${decorator} on ${String(context.name)}: it decorates instance methods`);
  }
  const methods = ownDocs(context.metadata).methods;
  const name = String(context.name);
  let docs = methods.get(name);
  if (docs === undefined) methods.set(name, docs = { responses: new Map() });
  return docs;
}

/**
 * Gives an operation a summary and a description in the OpenAPI document (NestJS's
 * `@ApiOperation`, springdoc's `@Operation`).
 *
 * @param options `summary`, `description`, `deprecated`
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/openapi.md#apioperation
 */
export function ApiOperation(options: ApiOperationOptions): ApiDocDecorator {
  checkOptionsObject(options as unknown, "@ApiOperation", ["summary", "description", "deprecated"]);
  const copy = Object.freeze({ ...options });
  return (_value, context) => {
    methodDocs(_value, context, "ApiOperation").operation = copy;
  };
}

/**
 * Declares an answer of an operation: its status, description and body schema (NestJS's and
 * springdoc's `@ApiResponse`). Give one per status; an operation with none is documented as
 * `200 OK` without a body schema. The error answers Thaw gives by itself (400, 413, 415, 500)
 * are added unless declared here.
 *
 * @param status the answer's status
 * @param options `description`, `schema` (a class or a Standard Schema of the body), `contentType`
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/openapi.md#apiresponse
 */
export function ApiResponse(
  status: number | HttpStatus,
  options: ApiResponseOptions = {},
): ApiDocDecorator {
  const code = typeof status === "number" ? status : status.getValue();
  if (!Number.isInteger(code) || code < 100 || code > 599) {
    throw new TypeError(`@ApiResponse: status must be 100 to 599, got ${code}`);
  }
  const copy = Object.freeze({ ...options });
  return (_value, context) => {
    const docs = methodDocs(_value, context, "ApiResponse");
    if (docs.responses.has(code)) {
      throw new TypeError(`@ApiResponse(${code}) given twice on ${String(context.name)}`);
    }
    docs.responses.set(code, copy);
  };
}

/**
 * Groups a controller's operations under tags in the document (NestJS's `@ApiTags`, springdoc's
 * `@Tag`); the class name by default.
 *
 * @param tags one or more names
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/openapi.md#apitags
 */
export function ApiTags(...tags: string[]): BeanClassDecorator {
  if (tags.length === 0 || !tags.every((t) => typeof t === "string" && t !== "")) {
    throw new TypeError("@ApiTags takes one or more non-empty names");
  }
  const copy = Object.freeze([...tags]);
  return (_value: Class, context: ClassDecoratorContext): void => {
    checkDecoratorCall("@ApiTags", _value, context);
    if (context.kind !== "class") throw new TypeError("@ApiTags decorates classes only");
    ownDocs(context.metadata).tags = copy;
  };
}

/** The documentation of a controller method, its class's and superclasses' decorators merged. */
export function docsOf(
  cls: Class,
  methodName: string,
): { tags: readonly string[] | undefined; docs: MethodDocs | undefined } {
  let tags: readonly string[] | undefined;
  let docs: MethodDocs | undefined;
  for (const entry of entryChain<ClassDocs>(cls, DOCS)) {
    if (entry.tags !== undefined) tags = entry.tags;
    // A subclass that documents a method replaces what its parent said of it, as its mapping
    // replaces the parent's mapping.
    docs = entry.methods.get(methodName) ?? docs;
  }
  return { tags, docs };
}
