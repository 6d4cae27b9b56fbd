import type { Class } from "../context/class.ts";
import { entryChain, ownEntry } from "../context/class_record.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import type { HttpStatus } from "../http/http_status.ts";
import { shownValue } from "../shown_value.ts";

/** What {@linkcode ResponseStatus} returns: a decorator of instance methods. */
export type ResponseStatusDecorator = (
  // deno-lint-ignore no-explicit-any
  value: (...args: any[]) => unknown,
  context: ClassMethodDecoratorContext,
) => void;

// The status of each method, by class; a key of its own, so no other layer's record changes.
const STATUSES = Symbol("thaw.responseStatus");

/**
 * The status a handler's return value is sent with (Spring's `@ResponseStatus`), on a mapped
 * method or an `@ExceptionHandler` method: a plain value (an object, a string, bytes) gets it,
 * `undefined` gets it with no body (rather than `204`), and a `ResponseEntity` or a `Response`
 * keeps its own, as in Spring. With `204`, `205` or `304`, which have no content, what the method
 * returns is not sent. An error the method throws is answered as any other. The OpenAPI document
 * lists this status as the operation's answer in place of `200`: it cannot read the status from
 * code that builds a `ResponseEntity`, so this is how a route tells it.
 *
 * @param status a number, or an `HttpStatus`
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#responsestatus
 */
export function ResponseStatus(status: number | HttpStatus): ResponseStatusDecorator {
  // Whatever else a caller gave is shown as it is, not called.
  const code = typeof (status as Partial<HttpStatus> | null)?.getValue === "function"
    ? (status as HttpStatus).getValue()
    : status;
  // The range a Response may have: a 1xx is no final answer.
  if (typeof code !== "number" || !Number.isInteger(code) || code < 200 || code > 599) {
    throw new TypeError(`@ResponseStatus: status must be 200 to 599, got ${shownValue(code)}`);
  }
  return (_value, context) => {
    checkDecoratorCall("@ResponseStatus", _value, context);
    if (context.kind !== "method" || context.static) {
      throw new TypeError(
        `@ResponseStatus on ${String(context.name)}: it decorates instance methods`,
      );
    }
    const own = ownEntry(context.metadata, STATUSES, () => new Map<string, number>());
    const name = String(context.name);
    if (own.has(name)) throw new TypeError(`@ResponseStatus given twice on ${name}`);
    own.set(name, code);
  };
}

/**
 * The status `@ResponseStatus` gives a method of `type`: the nearest class's that declares one,
 * so a subclass's replaces its parent's.
 */
export function responseStatusOf(type: Class, methodName: string): number | undefined {
  let status: number | undefined;
  for (const own of entryChain<Map<string, number>>(type, STATUSES)) {
    status = own.get(methodName) ?? status;
  }
  return status;
}
