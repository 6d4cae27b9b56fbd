import { type Class, ownRecord } from "./class_record.ts";
import { injectedOr } from "./field_injection.ts";

/** A decorator for a field the container fills. */
export type InjectionDecorator = <This, Value>(
  value: undefined,
  context: ClassFieldDecoratorContext<This, Value>,
) => (this: This, initial: Value) => Value;

/**
 * Injects a bean into a field before any request is served: the bean of a class (or a subclass of
 * it) when given a class, the bean of that name when given a string. A missing bean stops
 * `bootstrap` with an error that names the bean, the class and the field.
 *
 * The field is set as the instance is constructed, so the constructor can already use it. A class
 * constructed with `new` outside the container keeps the field's own initial value.
 *
 * @example
 * ```ts
 * import { Autowired, GetMapping, RestController, Service } from "@thaw/thaw";
 *
 * @Service()
 * class Greeter {
 *   greet(name: string): string {
 *     return `Hello, ${name}`;
 *   }
 * }
 *
 * @RestController()
 * class HelloController {
 *   @Autowired(Greeter)
 *   private greeter!: Greeter;
 *
 *   @GetMapping("/hello")
 *   hello(): string {
 *     return this.greeter.greet("world");
 *   }
 * }
 * ```
 */
export function Autowired(token: Class | string): InjectionDecorator {
  if (typeof token !== "function" && (typeof token !== "string" || token === "")) {
    throw new TypeError("@Autowired takes a class or a non-empty bean name");
  }
  return <This, Value>(_value: undefined, context: ClassFieldDecoratorContext<This, Value>) => {
    if (context.kind !== "field" || context.static) {
      throw new TypeError(
        `@Autowired on ${String(context.name)}: it decorates instance fields only`,
      );
    }
    const key = Symbol(String(context.name));
    ownRecord(context.metadata).injections.push({ key, fieldName: String(context.name), token });
    return function (this: This, initial: Value): Value {
      return injectedOr(key, initial);
    };
  };
}
