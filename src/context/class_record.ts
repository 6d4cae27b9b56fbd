import { checkDecoratorCall } from "./decorator_call.ts";
import "./symbol_metadata.ts";
import type { Class } from "./class.ts";

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
  stereotype?: {
    readonly kind: Stereotype;
    readonly name?: string;
    /** The decorator that made the class a bean, as written: `Service`, `RestController`. */
    readonly decorator: string;
  };
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
  // A public method's name: a subclass's override replaces its parent's.
  const identity = context.private ? Symbol(methodName) : context.name;
  return { methodName, identity, get: methodGetter(context) };
}

/**
 * The constructors of an object's prototype chain, the most derived first: the classes whose
 * decorators speak for it, whether the container built it or a `@Bean` method returned it.
 */
export function classesOf(instance: unknown): Class[] {
  const classes: Class[] = [];
  if (instance === null || (typeof instance !== "object" && typeof instance !== "function")) {
    return classes;
  }
  for (let p = Object.getPrototypeOf(instance); p !== null; p = Object.getPrototypeOf(p)) {
    const ctor: unknown = Object.hasOwn(p, "constructor") ? p.constructor : undefined;
    if (typeof ctor === "function") classes.push(ctor as Class);
  }
  return classes;
}

/**
 * What the container lends a decorator's module to finish a bean it created: the beans it needs
 * (as dependencies of that bean, so that a cycle or a missing bean is named as `@Autowired`'s
 * are), and where to report.
 */
export interface BeanSupport {
  /**
   * The bean for `token`, created first when needed. `request` and `where` say who asks, for
   * messages: `@UseInterceptors(Timing)` on `UserService.find()`. Where several beans fit and
   * none is primary, the one named `byName` is chosen, as Spring falls back to the name a
   * dependency is asked by (`cacheManager`).
   */
  resolve(token: Class, request: string, where: string, byName?: string): Promise<unknown>;
  /** The configuration's values. */
  readonly config: Readonly<Record<string, unknown>>;
  /** Where a key of the configuration is, for messages. */
  readonly locate: (key: string) => string;
  /** Where a bean reports what goes wrong outside a caller's reach. */
  readonly logger: ContextLogger;
  /** Every bean created so far, in registration order. */
  beans(): readonly { readonly instance: unknown }[];
}

/** Where the container's beans report: `console` unless the app gives a logger. */
export interface ContextLogger {
  error(message: string, ...details: unknown[]): void;
  warn?(message: string, ...details: unknown[]): void;
  info?(message: string, ...details: unknown[]): void;
}

/**
 * Finishes a bean once constructed, before its `@PostConstruct` hooks (interceptors are wired
 * so): left in a class's metadata by the decorator that needs it, so that an app whose classes
 * use none of them carries none of their code. A subclass's metadata inherits its parent's, so
 * one read finds it for the whole chain.
 */
export type BeanExtension = (instance: object, support: BeanSupport) => Promise<void>;

/** Where a class's metadata holds its {@linkcode BeanExtension}. */
export const EXTENSION: unique symbol = Symbol("thaw.extension");

/** The extension the classes of `instance` recorded, if any. */
export function beanExtension(instance: unknown): BeanExtension | undefined {
  return metadataOfInstance(instance)?.[EXTENSION] as BeanExtension | undefined;
}

/**
 * What the decorators of some bean's classes left under `key` (a feature's entry, which brings
 * the feature's code): the first bean's that has one. The one look `bootstrap` takes for a
 * feature, so that an app without it carries nothing more.
 */
export function featureOf<T>(
  beans: readonly { readonly instance: unknown }[],
  key: symbol,
): T | undefined {
  for (const { instance } of beans) {
    const entry = metadataOfInstance(instance)?.[key];
    if (entry !== undefined) return entry as T;
  }
  return undefined;
}

/**
 * The decorator metadata of an instance's class, which inherits its superclass's: one read sees
 * the marks of the whole chain.
 */
export function metadataOfInstance(instance: unknown): Record<symbol, unknown> | undefined {
  return (instance as { constructor?: Record<symbol, unknown> } | null)?.constructor
    ?.[Symbol.metadata] as Record<symbol, unknown> | undefined;
}

/**
 * How the container makes a bean of Thaw's own that an injection asks for and no registered bean
 * provides (the `CacheManager`, the `ApplicationEventPublisher`): a static of that class under
 * {@linkcode PROVIDED}. A registered bean of the class (or a subclass) always wins.
 */
export type BeanProvider = (support: BeanSupport) => unknown;

/**
 * Where a class keeps its {@linkcode BeanProvider}: a text, not a symbol, and written as a literal
 * in the class (`static "thaw.provided" = ...`), because a computed static (`static [KEY]`) makes
 * a bundler keep the class, and all it loads, in every app that imports the library.
 */
export const PROVIDED = "thaw.provided";

/** The provider `token` itself declares (not one it inherits: a subclass is the user's). */
export function providerOf(token: Class): BeanProvider | undefined {
  return Object.hasOwn(token, PROVIDED)
    ? (token as unknown as Record<string, BeanProvider>)[PROVIDED]
    : undefined;
}

/**
 * Where a class of Thaw's own keeps what to do when an injection asks for it and no bean of it is
 * registered (`SqlClient`: pass `data()`), said instead of the advice to decorate it: a text
 * written as a literal in the class, as {@linkcode PROVIDED} is.
 */
export const MISSING = "thaw.missing";

/** The advice `token` itself declares for when no bean of it is registered. */
export function missingAdviceOf(token: Class): string | undefined {
  const advice = Object.hasOwn(token, MISSING)
    ? (token as unknown as Record<string, unknown>)[MISSING]
    : undefined;
  return typeof advice === "string" ? advice : undefined;
}

/**
 * How a method decorator reaches the method it marks on an instance. A public instance method is
 * looked up on the instance, as a call would find it: a subclass's override, or the wrapper the
 * container put in front of an intercepted method (Deno's `access.get` gives the decorated
 * class's own function instead).
 */
export function methodGetter(context: ClassMethodDecoratorContext): (instance: unknown) => unknown {
  if (context.private || context.static) {
    return context.access.get as (instance: unknown) => unknown;
  }
  const name = context.name;
  return (instance) => (instance as Record<PropertyKey, unknown>)[name as string | symbol];
}
