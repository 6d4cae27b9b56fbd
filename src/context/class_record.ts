import { checkDecoratorCall } from "./decorator_call.ts";
import "./symbol_metadata.ts";

/** A class's constructor, as the container and decorators see it. */
// deno-lint-ignore no-explicit-any
export type Class<T = unknown> = abstract new (...args: any[]) => T;

/** What kind of bean a decorated class is. */
export type Stereotype = "component" | "service" | "controller" | "configuration" | "properties";

/** An `@Autowired` field: `key` is how its initializer finds the value at construction. */
export interface InjectionRecord {
  readonly key: symbol;
  readonly fieldName: string;
  readonly token: string | Class;
}

/** A `@Bean` method of a `@Configuration` class. */
export interface BeanMethodRecord {
  readonly beanName: string;
  readonly methodName: string;
  readonly get: (instance: unknown) => unknown;
}

/** What the container's decorators say about one class (not its superclasses). */
export interface ClassRecord {
  stereotype?: { readonly kind: Stereotype; readonly name?: string };
  readonly injections: InjectionRecord[];
  readonly beanMethods: BeanMethodRecord[];
}

const RECORD = Symbol("thaw.record");

type Metadata = Record<PropertyKey, unknown>;

/**
 * The entry under `key` of the class whose decorators receive `metadata`, made by `create` on
 * first use. The metadata object inherits from the superclass's, so the entry is looked up as an
 * own property: a subclass must never append to its parent's lists. Each layer keeps its own key
 * (the container this file's, the web layer its routes'), so neither knows the other's entries.
 */
export function ownEntry<T>(metadata: DecoratorMetadataObject, key: symbol, create: () => T): T {
  const md = metadata as Metadata;
  if (Object.hasOwn(md, key)) return md[key] as T;
  const entry = create();
  Object.defineProperty(md, key, { value: entry });
  return entry;
}

function metadataOf(cls: Class): Metadata | undefined {
  // Static inheritance makes an undecorated subclass see its parent's metadata: only an own
  // Symbol.metadata belongs to the class itself.
  return Object.hasOwn(cls, Symbol.metadata)
    ? (cls as unknown as Record<symbol, Metadata | undefined>)[Symbol.metadata]
    : undefined;
}

/** The entry under `key` that a class's own decorators made, if any. */
export function entryOf<T>(cls: Class, key: symbol): T | undefined {
  const md = metadataOf(cls);
  return md !== undefined && Object.hasOwn(md, key) ? md[key] as T : undefined;
}

/** The entries under `key` of a class and its superclasses, the most basic first. */
export function entryChain<T>(cls: Class, key: symbol): T[] {
  const chain: T[] = [];
  for (let c: unknown = cls; typeof c === "function" && c !== Function.prototype;) {
    const entry = entryOf<T>(c as Class, key);
    if (entry !== undefined) chain.unshift(entry);
    c = Object.getPrototypeOf(c);
  }
  return chain;
}

/** The container's record of the class whose decorators receive `metadata`. */
export function ownRecord(metadata: DecoratorMetadataObject): ClassRecord {
  return ownEntry(metadata, RECORD, () => ({ injections: [], beanMethods: [] }));
}

/** The record a class's own decorators made, if any. */
export function recordOf(cls: Class): ClassRecord | undefined {
  return entryOf(cls, RECORD);
}

/** The records of a class and its superclasses, the most basic first. */
export function recordChain(cls: Class): ClassRecord[] {
  return entryChain(cls, RECORD);
}

/** Spring's bean naming: `UserService` -> `userService`, but `URLMapper` stays as it is. */
export function defaultBeanName(cls: Class): string {
  const name = cls.name;
  return /^[A-Z]{2}/.test(name) ? name : name.charAt(0).toLowerCase() + name.slice(1);
}

/** How a method decorator's record reaches the method it marks, on whichever bean has it. */
export interface MethodAccess {
  /** As written in the class: `open`, `#close`. */
  readonly methodName: string;
  // What makes two records the same method: a public method's name (a subclass's override
  // replaces its parent's), or a symbol of its own for a `#private` method, which nothing
  // overrides.
  readonly identity: unknown;
  readonly get: (instance: unknown) => unknown;
}

/**
 * The access to the instance method `context` decorates; a `TypeError` naming `decorator` for a
 * legacy call or anything but an instance method.
 */
export function methodAccess(
  decorator: string,
  value: unknown,
  context: ClassMethodDecoratorContext,
): MethodAccess {
  checkDecoratorCall(`@${decorator}`, value, context);
  if (context.kind !== "method" || context.static) {
    throw new TypeError(
      `@${decorator} on ${String(context.name)}: it decorates instance methods only`,
    );
  }
  const methodName = String(context.name);
  const name = context.name;
  return context.private
    ? {
      methodName,
      identity: Symbol(methodName),
      get: context.access.get as (instance: unknown) => unknown,
    }
    // Looked up on the instance, not through `access.get`, which on Deno gives the decorating
    // class's own function: a subclass's override must be the one called.
    : {
      methodName,
      identity: name,
      get: (instance) => (instance as Record<PropertyKey, unknown>)[name as string | symbol],
    };
}
