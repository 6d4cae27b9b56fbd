import type { Class } from "../context/class.ts";
import { checkOptionsObject } from "../options_object.ts";
import type { HttpRequest } from "../http/http_request.ts";
import { isStandardSchema, type StandardSchemaV1 } from "../config/standard_schema.ts";
import { type ResolverFactory, withResolver } from "./argument_resolver.ts";
import { bodyArgument } from "./body_argument.ts";
import { headerArgument } from "./header_argument.ts";
import { paramArgument } from "./param_argument.ts";
import { partArgument } from "./part_argument.ts";
import { pathArgument } from "./path_argument.ts";
import type { BinderDescriptor, PartType } from "./binder_descriptor.ts";
import type { ScalarType } from "./scalar_type.ts";

/**
 * What a conversion gives: `number` for `Number`, `string` for `String`, `boolean` for `Boolean`,
 * what the function returns for a function.
 */
export type ScalarValue<T> = T extends NumberConstructor ? number
  : T extends StringConstructor ? string
  : T extends BooleanConstructor ? boolean
  : T extends (text: string) => infer R ? R
  : unknown;

/** Options of {@linkcode RequestParam} and {@linkcode RequestHeader}. */
export interface ValueOptions<T extends ScalarType = ScalarType> {
  /** The conversion; `String` by default. */
  readonly type?: T;
  /** Whether a request without it is a 400; `true` by default, ignored when `default` is given. */
  readonly required?: boolean;
  /** The value to use when the request does not carry it. */
  readonly default?: unknown;
}

/**
 * What a binder gives a handler's argument: its descriptor, read when the app is compiled. `T` is
 * the type of the argument it gives, so that a mapping only compiles on a method whose parameters
 * take those types. `~binds` exists for the compiler only; it is a function type so that
 * inferring `T` keeps an `undefined` it holds.
 */
export type Binder<T = unknown> = BinderDescriptor & { readonly "~binds"?: () => T };

/** Options of {@linkcode RequestPart}. */
export interface PartOptions<T extends PartType = PartType> {
  /**
   * `File` for a file part (one sent with a filename), or the conversion of a text part (as
   * {@linkcode RequestParam}'s); without it, a file part binds as a `File` and a text part as its
   * text.
   */
  readonly type?: T;
  /** Whether a request without the part is a 400; `true` by default. */
  readonly required?: boolean;
}

/** One argument of a handler: a binder, or the `HttpRequest` class for the whole request. */
export type ParameterBinder = Binder | typeof HttpRequest;

/** The argument a binder gives: `HttpRequest` for the `HttpRequest` class, `T` for a `Binder<T>`. */
export type BinderValue<B> = B extends typeof HttpRequest ? HttpRequest
  : B extends Binder<infer T> ? T
  : never;

/** A `PathVariable`'s binder, which carries its name for the mapping's path check. */
export type PathBinder<N extends string, T> = Binder<T> & { readonly "~path"?: N };

/**
 * `V` as options `O` leave it: a `default` adds its own type; without one, anything but
 * `required: true` or no `required` at all (options held in a variable may say `false`) adds
 * `undefined`.
 */
export type OptionalValue<O, V> = O extends { readonly default: infer D } ? V | D
  : O extends { readonly required: true } ? V
  : "required" extends keyof O ? V | undefined
  : V;

/**
 * What {@linkcode RequestParam} or {@linkcode RequestHeader} with options `O` gives; `unknown`
 * when only run time knows the conversion (options held in a variable).
 */
export type ValueOf<O> = OptionalValue<
  O,
  O extends { readonly type: infer T } ? ScalarValue<T>
    : "type" extends keyof O ? unknown
    : string
>;

/** What {@linkcode RequestPart} with options `O` gives, as {@linkcode ValueOf} does. */
export type PartValue<O> = OptionalValue<
  O,
  O extends { readonly type: infer T } ? T extends typeof File ? File : ScalarValue<T>
    : "type" extends keyof O ? unknown
    : File | string
>;

/** What {@linkcode RequestBody} with a class or schema gives. */
export type BodyValue<S> = S extends StandardSchemaV1<unknown, infer O> ? O
  : S extends Class<infer I> ? I
  : unknown;

function checkName(name: unknown, binder: string): string {
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`${binder} needs a non-empty name`);
  }
  return name;
}

const VALUE_KEYS = ["type", "required", "default"];
const PART_KEYS = ["type", "required"];

function checkOptions<O>(options: O, label: string, known: readonly string[]): O {
  checkOptionsObject(options as unknown, label, known);
  return options;
}

function checkType(type: unknown, binder: string): ScalarType {
  if (typeof type !== "function") throw new TypeError(`${binder}: type must be a function`);
  return type as ScalarType;
}

type ValueDescriptor = Extract<BinderDescriptor, { kind: "param" | "header" }>;

function valueBinder(
  kind: "param" | "header",
  name: string,
  options: ValueOptions,
  reader: ResolverFactory<ValueDescriptor>,
): BinderDescriptor {
  const label = `${kind === "param" ? "RequestParam" : "RequestHeader"}("${name}")`;
  return withResolver({
    kind,
    name: checkName(name, label),
    type: checkType(checkOptions(options, label, VALUE_KEYS).type ?? String, label),
    required: options.required ?? true,
    hasDefault: "default" in options,
    default: options.default,
  }, reader);
}

/**
 * Binds a `{name}` segment of the path. With `Number` only an integer is accepted; anything else
 * answers 400.
 *
 * @param name the `{name}` of the path
 * @param type the conversion: `Number`, `Boolean`, or a function of the text; `String` by default
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#pathvariable
 */
export function PathVariable<const N extends string, T extends ScalarType = StringConstructor>(
  name: N,
  type?: T,
): PathBinder<N, ScalarValue<T>> {
  const label = `PathVariable("${name}")`;
  return withResolver({
    kind: "path",
    name: checkName(name, label),
    // Only a missing type defaults: JavaScript may pass a null, which is a mistake to report.
    type: checkType(type === undefined ? String : type, label),
  }, pathArgument);
}

/**
 * Binds a request parameter (its first value): from the query, or when the query does not carry
 * it, from an `application/x-www-form-urlencoded` or `multipart/form-data` body (its text parts)
 * of a POST, PUT, PATCH or DELETE, read once for all the route's parameters and under the body
 * limit. On a route with `RequestBody()`, from the query alone. Missing and required, or not
 * convertible: 400.
 *
 * @param name the parameter
 * @param options `type`: the conversion (`Number`, `Boolean`, a function of the text); `required`
 * (`true` by default); `default`: the value when the request has none
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#requestparam
 */
export function RequestParam<const O extends ValueOptions = Record<never, never>>(
  name: string,
  options?: O,
): Binder<ValueOf<O>> {
  return valueBinder("param", name, options === undefined ? {} : options, paramArgument);
}

/**
 * Binds a request header (several values joined by `, `). Missing and required, or not
 * convertible: 400.
 *
 * @param name the header, in any case
 * @param options `type`: the conversion (`Number`, `Boolean`, a function of the text); `required`
 * (`true` by default); `default`: the value when the request has none
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#requestheader
 */
export function RequestHeader<const O extends ValueOptions = Record<never, never>>(
  name: string,
  options?: O,
): Binder<ValueOf<O>> {
  return valueBinder("header", name, options === undefined ? {} : options, headerArgument);
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
 * @param typeOrSchema a class, a Standard Schema, or nothing for the parsed JSON as `unknown`
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#requestbody
 */
export function RequestBody<S extends StandardSchemaV1 | Class | undefined = undefined>(
  typeOrSchema?: S,
): Binder<BodyValue<S>> {
  if (
    typeOrSchema !== undefined && typeof typeOrSchema !== "function" &&
    !isStandardSchema(typeOrSchema)
  ) {
    throw new TypeError("RequestBody takes a class or a Standard Schema");
  }
  return withResolver({ kind: "body", target: typeOrSchema }, bodyArgument);
}

/**
 * Binds one part of a `multipart/form-data` body: a `File` for a file part (one sent with a
 * filename), else the part's text, converted by `type` as {@linkcode RequestParam} converts. With
 * `type: File` a text part is a 400, and with a conversion a file part is. Missing and required:
 * 400 naming the part. The body is read once for all the route's parts, as it arrives, under the
 * `server.multipart.*` limits (a file over `max-file-size`, a body over `max-request-size`, more
 * parts than `max-parts`: 413 naming the key, and reading stops there); a file over
 * `file-size-threshold` waits in a temporary file, deleted once the answer is made. A malformed
 * body (no boundary, no closing boundary, a part without a name, line ends other than CRLF) is a
 * 400 saying what is wrong; text that is not UTF-8 is a 400. The `File`'s name is the client's:
 * `safeFilename` makes it fit to store. Not `multipart/form-data`, or any
 * `Content-Encoding`: 415. A route may not have both `RequestBody()` and `RequestPart()`.
 *
 * @param name the part
 * @param options `type`: `File`, or the conversion of a text part; `required` (`true` by default)
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#requestpart
 */
export function RequestPart<const O extends PartOptions = Record<never, never>>(
  name: string,
  options?: O,
): Binder<PartValue<O>>;
export function RequestPart(name: string, options: PartOptions = {}): Binder {
  const label = `RequestPart("${name}")`;
  checkOptions(options, label, PART_KEYS);
  return withResolver({
    kind: "part",
    name: checkName(name, label),
    type: options.type === undefined ? undefined : checkType(options.type, label) as PartType,
    required: options.required ?? true,
  }, partArgument);
}
