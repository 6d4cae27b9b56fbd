import type { Class } from "./class.ts";
import { ownRecord } from "./class_record.ts";
import { injectedOr } from "./field_injection.ts";
import { checkDecoratorCall } from "./decorator_call.ts";

/**
 * `unknown` when a value of type `T` may be stored in a field of type `V`, else an error type
 * naming both. A conditional type, so that the check is strict in both directions' sense.
 */
export type FieldCheck<T, V> = [T] extends [V] ? unknown : {
  readonly "Thaw: the injected value's type is not assignable to the field's": {
    readonly injected: T;
    readonly field: V;
  };
};

/** The bean a token gives: an instance of a class; `any` for a name, which only run time knows. */
// deno-lint-ignore no-explicit-any
export type BeanOf<K> = K extends Class<infer T> ? T : any;

/**
 * A decorator for a field the container fills with a value of type `T`: it compiles only on a
 * field that a `T` may be stored in. `any` when the type is only known at run time (a bean name).
 */
// deno-lint-ignore no-explicit-any
export type InjectionDecorator<T = any> = <This, Value>(
  value: undefined,
  context: ClassFieldDecoratorContext<This, Value> & FieldCheck<T, Value>,
) => (this: This, initial: Value) => Value;

/**
 * Injects a bean into a field before any request is served: the bean of a class (or a subclass of
 * it) when given a class, the bean of that name when given a string. A missing bean stops
 * `bootstrap` with an error that names the bean, the class and the field. Given a class, it only
 * compiles on a field its instances may be stored in; given a name, the compiler cannot know the
 * bean's type, so the field's type is yours to get right.
 *
 * The field is set as the instance is constructed, so the constructor can already use it. A class
 * constructed with `new` outside the container keeps the field's own initial value.
 *
 * @param token the bean's class, or its name
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#autowired
 */
export function Autowired<K extends Class | string>(token: K): InjectionDecorator<BeanOf<K>> {
  if (typeof token !== "function" && (typeof token !== "string" || token === "")) {
    throw new TypeError("@Autowired takes a class or a non-empty bean name");
  }
  return <This, Value>(_value: undefined, context: ClassFieldDecoratorContext<This, Value>) => {
    checkDecoratorCall("@Autowired", _value, context);
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
