import { ownControllerRecord } from "./route_record.ts";
import type { MappedMethod } from "./route_table.ts";
import type { ParameterBinder } from "./binder.ts";
import type { HandlerArguments, PathCheck, SignatureCheck } from "./handler_signature.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { methodGetter } from "../context/class_record.ts";

/**
 * A decorator that maps a method to a route. It compiles only on a method whose parameters take
 * the arguments `A` its binders give, one parameter per binder, and only where `Check` is
 * `unknown` (the path's check); otherwise the error names what is wrong. Without `A`, a decorator
 * of unknown binders, it takes any method.
 */
// deno-lint-ignore no-explicit-any
export type MappingDecorator<A extends readonly unknown[] = any[], Check = unknown> = <
  This,
  // deno-lint-ignore no-explicit-any
  M extends (this: This, ...args: any) => unknown,
>(
  value: M & SignatureCheck<Parameters<M>, A> & Check,
  context: ClassMethodDecoratorContext<This, M>,
) => void;

/** The decorator a mapping with `path` and `binders` returns. */
export type MappingFor<P extends string, B extends readonly ParameterBinder[]> = MappingDecorator<
  HandlerArguments<B>,
  PathCheck<P, B>
>;

function mapping(
  httpMethod: MappedMethod,
  path: string,
  binders: readonly ParameterBinder[],
): (value: unknown, context: ClassMethodDecoratorContext) => void {
  if (typeof path !== "string") {
    throw new TypeError(`@${httpMethod} mapping: the path must be a string, got ${typeof path}`);
  }
  const frozen = Object.freeze([...binders]);
  return (_value, context) => {
    checkDecoratorCall(
      `@${httpMethod.charAt(0)}${httpMethod.slice(1).toLowerCase()}Mapping`,
      _value,
      context,
    );
    if (context.kind !== "method") {
      throw new TypeError(`@${httpMethod} mapping on ${String(context.name)}: methods only`);
    }
    ownControllerRecord(context.metadata).routes.push({
      httpMethod,
      path,
      binders: frozen,
      methodName: String(context.name),
      isStatic: context.static,
      get: methodGetter(context as ClassMethodDecoratorContext),
    });
  };
}

/**
 * Maps a method to `GET path`. `{name}` segments are path variables; the binders give the
 * method's arguments in order, and the method must take what they give: one parameter per
 * binder, each accepting its binder's type, or the decorator does not compile.
 *
 * @param path the route: literal segments and `{name}` variables (`{name:regex}` constrains one)
 * @param binders what the method's parameters are bound to, in order: `PathVariable`,
 * `RequestParam`, `RequestHeader`, `RequestBody`, `RequestPart`, or `HttpRequest` itself
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#getmapping
 */
export function GetMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("GET", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `POST path`. A `RequestBody(schema)` gives the schema's output type, so the
 * parameter is typed from the schema rather than restated by hand.
 *
 * @param path the route: literal segments and `{name}` variables (`{name:regex}` constrains one)
 * @param binders what the method's parameters are bound to, in order: `PathVariable`,
 * `RequestParam`, `RequestHeader`, `RequestBody`, `RequestPart`, or `HttpRequest` itself
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#postmapping
 */
export function PostMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("POST", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `PUT path`. `RequestBody()` without a class or schema gives `unknown`.
 *
 * @param path the route: literal segments and `{name}` variables (`{name:regex}` constrains one)
 * @param binders what the method's parameters are bound to, in order: `PathVariable`,
 * `RequestParam`, `RequestHeader`, `RequestBody`, `RequestPart`, or `HttpRequest` itself
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#putmapping
 */
export function PutMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("PUT", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `DELETE path`. A method that returns nothing answers 204 No Content.
 *
 * @param path the route: literal segments and `{name}` variables (`{name:regex}` constrains one)
 * @param binders what the method's parameters are bound to, in order: `PathVariable`,
 * `RequestParam`, `RequestHeader`, `RequestBody`, `RequestPart`, or `HttpRequest` itself
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#deletemapping
 */
export function DeleteMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("DELETE", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `PATCH path`. `RequestBody(Class)` gives an instance of the class.
 *
 * @param path the route: literal segments and `{name}` variables (`{name:regex}` constrains one)
 * @param binders what the method's parameters are bound to, in order: `PathVariable`,
 * `RequestParam`, `RequestHeader`, `RequestBody`, `RequestPart`, or `HttpRequest` itself
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#patchmapping
 */
export function PatchMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("PATCH", path, binders) as MappingFor<P, B>;
}
