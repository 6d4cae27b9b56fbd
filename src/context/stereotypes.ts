import type { Class } from "./class.ts";
import { methodGetter, ownRecord, type Stereotype } from "./class_record.ts";
import { checkDecoratorCall } from "./decorator_call.ts";

/** A decorator for a class that Thaw registers as a bean. */
export type BeanClassDecorator = (value: Class, context: ClassDecoratorContext) => void;

/** A decorator for a method that produces a bean. */
export type BeanMethodDecorator = (
  value: (...args: never[]) => unknown,
  context: ClassMethodDecoratorContext,
) => void;

/** Records the stereotype; shared by every class-level bean decorator. */
export function stereotype(
  kind: Stereotype,
  name: string | undefined,
  decorator: string,
): BeanClassDecorator {
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    throw new TypeError(`@${decorator}: a bean name must be a non-empty string`);
  }
  return (_value: Class, context: ClassDecoratorContext): void => {
    checkDecoratorCall(`@${decorator}`, _value, context);
    if (context.kind !== "class") throw new TypeError(`@${decorator} decorates classes only`);
    const record = ownRecord(context.metadata);
    if (record.stereotype !== undefined) {
      throw new TypeError(
        `@${decorator} on class ${String(context.name)}: it is already a ${record.stereotype.kind}`,
      );
    }
    record.stereotype = { kind, decorator, ...(name === undefined ? {} : { name }) };
  };
}

/**
 * Registers a class as a bean. The bean name defaults to the class name with a lower-case first
 * letter (`UserRepository` -> `userRepository`).
 *
 * @param name the bean's name; the class's, its first letter lower-cased, by default
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#component
 */
export function Component(name?: string): BeanClassDecorator {
  return stereotype("component", name, "Component");
}

/**
 * Registers a service class as a bean; the same as {@linkcode Component}, named for intent.
 *
 * @param name the bean's name; the class's, its first letter lower-cased, by default
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#service
 */
export function Service(name?: string): BeanClassDecorator {
  return stereotype("service", name, "Service");
}

/**
 * Registers a class whose {@linkcode Bean} methods produce beans. The class is a bean too, so its
 * own fields can be `@Autowired`.
 *
 * @param name the bean's name; the class's, its first letter lower-cased, by default
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#configuration-1
 */
export function Configuration(name?: string): BeanClassDecorator {
  return stereotype("configuration", name, "Configuration");
}

/**
 * Marks a method of a {@linkcode Configuration} class as a bean factory. It is called once, at
 * startup, and may be `async`; its result is the bean. The name defaults to the method name.
 *
 * @param name the bean's name; the method's by default
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#bean
 */
export function Bean(name?: string): BeanMethodDecorator {
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    throw new TypeError("@Bean: a bean name must be a non-empty string");
  }
  return (_value, context) => {
    checkDecoratorCall("@Bean", _value, context);
    if (context.kind !== "method" || context.static) {
      throw new TypeError(`@Bean on ${String(context.name)}: it decorates instance methods only`);
    }
    const methodName = String(context.name);
    ownRecord(context.metadata).beanMethods.push({
      beanName: name ?? methodName,
      methodName,
      get: methodGetter(context as ClassMethodDecoratorContext),
    });
  };
}
