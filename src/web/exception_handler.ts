import { type BeanClassDecorator, stereotype } from "../context/stereotypes.ts";
import type { Class } from "../context/class.ts";
import type { HttpRequest } from "../http/http_request.ts";
import { ownControllerRecord } from "./route_record.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { methodGetter } from "../context/class_record.ts";

/**
 * `unknown` when a handler with parameters `P` takes an error `E` first and an `HttpRequest`
 * second (each when it has them) and nothing more, else an error type saying what is wrong.
 */
export type ExceptionHandlerCheck<P extends readonly unknown[], E> = number extends
  Required<P>["length"] ? ExceptionHandlerArguments<P, E>
  : [Required<P>["length"]] extends [0 | 1 | 2] ? ExceptionHandlerArguments<P, E>
  : {
    readonly "Thaw: an exception handler takes the error and the HttpRequest, nothing more": {
      readonly parameters: P;
    };
  };

/** {@linkcode ExceptionHandlerCheck} of a handler with one or two parameters. */
export type ExceptionHandlerArguments<P extends readonly unknown[], E> = P extends [] ? unknown
  : [E] extends [P[0]] ? P extends [unknown] | [unknown?] ? unknown
    : [HttpRequest] extends [P[1]] ? unknown
    : {
      readonly "Thaw: an exception handler's second parameter takes the HttpRequest": {
        readonly parameterTakes: P[1];
      };
    }
  : {
    readonly "Thaw: an exception handler's first parameter does not take the errors it handles": {
      readonly handles: E;
      readonly parameterTakes: P[0];
    };
  };

/**
 * A decorator for a method that handles errors of type `E`: it compiles only on a method whose
 * first parameter takes an `E`.
 */
export type ExceptionHandlerDecorator<E = unknown> = <
  This,
  // deno-lint-ignore no-explicit-any
  M extends (this: This, ...args: any) => unknown,
>(
  value: M & ExceptionHandlerCheck<Parameters<M>, E>,
  context: ClassMethodDecoratorContext<This, M>,
) => void;

/**
 * Makes a method the handler of errors of the given classes (and their subclasses): on a
 * controller, for that controller's routes; on a {@linkcode ControllerAdvice} bean, for every
 * request. It is called with `(error, request: HttpRequest)` and returns what a mapping method may
 * return. The handler of the nearest class in the error's prototype chain wins, and a controller's
 * own handler beats an advice's. Errors thrown by middleware, by argument binding (a 400) and by
 * the route all come here; what no handler takes, and what a handler throws, goes to the
 * `errorController`.
 *
 * @param types the error classes the method handles, their subclasses included
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/middleware.md#exceptionhandler
 */
export function ExceptionHandler<const C extends readonly Class[]>(
  ...types: C
): ExceptionHandlerDecorator<InstanceType<C[number]>>;
export function ExceptionHandler(...types: Class[]): ExceptionHandlerDecorator {
  if (types.length === 0) {
    throw new TypeError("@ExceptionHandler needs the error classes it handles");
  }
  types.forEach((type, i) => {
    if (typeof type !== "function" || typeof type.prototype !== "object") {
      throw new TypeError(`@ExceptionHandler: argument ${i + 1} is not a class`);
    }
  });
  const frozen = Object.freeze([...types]);
  return (_value, context) => {
    checkDecoratorCall("@ExceptionHandler", _value, context);
    if (context.kind !== "method") {
      throw new TypeError(`@ExceptionHandler on ${String(context.name)}: methods only`);
    }
    ownControllerRecord(context.metadata).exceptionHandlers.push({
      types: frozen,
      methodName: String(context.name),
      isStatic: context.static,
      get: methodGetter(context as ClassMethodDecoratorContext),
    });
  };
}

/**
 * Registers a bean whose {@linkcode ExceptionHandler} methods handle errors of every request, not
 * only one controller's. Several advice beans make one scope: two handlers for one error class
 * among them are a startup error.
 *
 * @param name the bean's name; the class's, its first letter lower-cased, by default
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/middleware.md#controlleradvice
 */
export function ControllerAdvice(name?: string): BeanClassDecorator {
  const register = stereotype("component", name, "ControllerAdvice");
  return (value, context) => {
    register(value, context);
    ownControllerRecord(context.metadata).advice = true;
  };
}
