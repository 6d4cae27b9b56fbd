import type { Class } from "../context/class.ts";
import { ownControllerRecord } from "./route_record.ts";
import { type BeanClassDecorator, stereotype } from "../context/stereotypes.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";

/** Options of {@linkcode RestController}. */
export interface RestControllerOptions {
  /** The bean name; defaults to the class name with a lower-case first letter. */
  readonly name?: string;
}

/**
 * Registers a class as a controller bean whose mapped methods serve HTTP requests.
 *
 * @param options `name`: the bean's name; the class's, its first letter lower-cased, by default
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#restcontroller
 */
export function RestController(options: RestControllerOptions = {}): BeanClassDecorator {
  return stereotype("controller", options.name, "RestController");
}

/**
 * Prefixes every route of a class: `@RequestMapping("/users")` with `@GetMapping("/{id}")` serves
 * `/users/{id}`.
 *
 * @param prefix the path every route of the class starts with
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#requestmapping
 */
export function RequestMapping(prefix: string): BeanClassDecorator {
  if (typeof prefix !== "string") throw new TypeError("@RequestMapping takes a path prefix");
  return (_value: Class, context: ClassDecoratorContext): void => {
    checkDecoratorCall("@RequestMapping", _value, context);
    if (context.kind !== "class") throw new TypeError("@RequestMapping decorates classes only");
    ownControllerRecord(context.metadata).prefix = prefix;
  };
}
