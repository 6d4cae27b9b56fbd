import type { Class } from "../context/class_record.ts";
import type { HttpRequest } from "../http/http_request.ts";
import { isStandardSchema, type StandardSchemaV1 } from "./standard_schema.ts";

/**
 * How a path variable, parameter or header is converted: `Number` (an integer), `String` (as
 * sent) or `Boolean` (`true`/`false`/`1`/`0`), or a function of the text that throws when the
 * text is unacceptable.
 */
export type ScalarType =
  | NumberConstructor
  | StringConstructor
  | BooleanConstructor
  | ((text: string) => unknown);

/** Options of {@linkcode RequestParam} and {@linkcode RequestHeader}. */
export interface ValueOptions {
  /** The conversion; `String` by default. */
  readonly type?: ScalarType;
  /** Whether a request without it is a 400; `true` by default, ignored when `default` is given. */
  readonly required?: boolean;
  /** The value to use when the request does not carry it. */
  readonly default?: unknown;
}

/** What a binder gives a handler's argument: its descriptor, read when the app is compiled. */
export type Binder =
  | { readonly kind: "path"; readonly name: string; readonly type: ScalarType }
  | {
    readonly kind: "param" | "header";
    readonly name: string;
    readonly type: ScalarType;
    readonly required: boolean;
    readonly hasDefault: boolean;
    readonly default: unknown;
  }
  | { readonly kind: "body"; readonly target: Class | StandardSchemaV1 | undefined };

/** One argument of a handler: a binder, or the `HttpRequest` class for the whole request. */
export type ParameterBinder = Binder | typeof HttpRequest;

function checkName(name: unknown, binder: string): string {
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`${binder} needs a non-empty name`);
  }
  return name;
}

function checkType(type: unknown, binder: string): ScalarType {
  if (typeof type !== "function") throw new TypeError(`${binder}: type must be a function`);
  return type as ScalarType;
}

function valueBinder(kind: "param" | "header", name: string, options: ValueOptions): Binder {
  const label = `${kind === "param" ? "RequestParam" : "RequestHeader"}("${name}")`;
  return Object.freeze({
    kind,
    name: checkName(name, label),
    type: checkType(options.type ?? String, label),
    required: options.required ?? true,
    hasDefault: "default" in options,
    default: options.default,
  });
}

/**
 * Binds a `{name}` segment of the path. With `Number` only an integer is accepted; anything else
 * answers 400.
 *
 * @example
 * ```ts
 * import { GetMapping, PathVariable, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class OrderController {
 *   @GetMapping("/orders/{id}", PathVariable("id", Number))
 *   get(id: number) {
 *     return { id };
 *   }
 * }
 * ```
 */
export function PathVariable(name: string, type: ScalarType = String): Binder {
  const label = `PathVariable("${name}")`;
  return Object.freeze({
    kind: "path",
    name: checkName(name, label),
    type: checkType(type, label),
  });
}

/**
 * Binds a query parameter (its first value). Missing and required, or not convertible: 400.
 *
 * @example
 * ```ts
 * import { GetMapping, RequestParam, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class SearchController {
 *   @GetMapping("/search", RequestParam("q"), RequestParam("page", { type: Number, default: 1 }))
 *   search(q: string, page: number) {
 *     return { q, page };
 *   }
 * }
 * ```
 */
export function RequestParam(name: string, options: ValueOptions = {}): Binder {
  return valueBinder("param", name, options);
}

/**
 * Binds a request header (several values joined by `, `). Missing and required, or not
 * convertible: 400.
 *
 * @example
 * ```ts
 * import { GetMapping, RequestHeader, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class TraceController {
 *   @GetMapping("/trace", RequestHeader("x-request-id", { required: false }))
 *   trace(id: string | undefined) {
 *     return { id: id ?? null };
 *   }
 * }
 * ```
 */
export function RequestHeader(name: string, options: ValueOptions = {}): Binder {
  return valueBinder("header", name, options);
}

/**
 * Binds the JSON body. With a class, the class is instantiated and each body key that names a
 * field it declares is assigned, each that names a setter is called; a key naming a method or a
 * read-only accessor is a 400, and unknown keys are ignored. With a Standard Schema (zod,
 * valibot, arktype), the body is validated and the schema's output is passed, its issues
 * answering 400. `__proto__` keys, and `constructor` keys holding a `prototype`, are dropped at
 * every depth; nesting deeper than 512 levels is a 400. No body: 400. Not `application/json` (or
 * `+json`), a `charset` other than UTF-8 or any `Content-Encoding`: 415. Over the body limit: 413.
 * Malformed JSON: 400.
 *
 * @example
 * ```ts
 * import { PostMapping, RequestBody, RestController } from "@thaw/thaw";
 *
 * class NewUser {
 *   name = "";
 *   email = "";
 * }
 *
 * @RestController()
 * class UserController {
 *   @PostMapping("/users", RequestBody(NewUser))
 *   create(user: NewUser) {
 *     return user;
 *   }
 * }
 * ```
 */
export function RequestBody(typeOrSchema?: Class | StandardSchemaV1): Binder {
  if (
    typeOrSchema !== undefined && typeof typeOrSchema !== "function" &&
    !isStandardSchema(typeOrSchema)
  ) {
    throw new TypeError("RequestBody takes a class or a Standard Schema");
  }
  return Object.freeze({ kind: "body", target: typeOrSchema });
}
