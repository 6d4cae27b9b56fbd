import "./symbol_metadata.ts";
import type { ParameterBinder } from "../web/binder.ts";

/** A class's constructor, as the container and decorators see it. */
// deno-lint-ignore no-explicit-any
export type Class<T = unknown> = abstract new (...args: any[]) => T;

/** What kind of bean a decorated class is. */
export type Stereotype = "component" | "service" | "controller" | "configuration";

/** A handler method and the route it serves, as its decorator recorded it. */
export interface RouteRecord {
  readonly httpMethod: string;
  readonly path: string;
  readonly binders: readonly ParameterBinder[];
  readonly methodName: string;
  readonly isStatic: boolean;
  readonly get: (instance: unknown) => unknown;
}

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

/** Everything Thaw's decorators say about one class (not its superclasses). */
export interface ClassRecord {
  stereotype?: { readonly kind: Stereotype; readonly name?: string };
  prefix?: string;
  readonly routes: RouteRecord[];
  readonly injections: InjectionRecord[];
  readonly beanMethods: BeanMethodRecord[];
}

const RECORD = Symbol("thaw.record");

type Metadata = Record<PropertyKey, unknown>;

/**
 * The record of the class whose decorators receive `metadata`. The metadata object inherits from
 * the superclass's, so the record is looked up as an own property: a subclass must never append to
 * its parent's lists.
 */
export function ownRecord(metadata: DecoratorMetadataObject): ClassRecord {
  const md = metadata as Metadata;
  if (Object.hasOwn(md, RECORD)) return md[RECORD] as ClassRecord;
  const record: ClassRecord = { routes: [], injections: [], beanMethods: [] };
  Object.defineProperty(md, RECORD, { value: record });
  return record;
}

function metadataOf(cls: Class): Metadata | undefined {
  // Static inheritance makes an undecorated subclass see its parent's metadata: only an own
  // Symbol.metadata belongs to the class itself.
  return Object.hasOwn(cls, Symbol.metadata)
    ? (cls as unknown as Record<symbol, Metadata | undefined>)[Symbol.metadata]
    : undefined;
}

/** The record a class's own decorators made, if any. */
export function recordOf(cls: Class): ClassRecord | undefined {
  const md = metadataOf(cls);
  return md !== undefined && Object.hasOwn(md, RECORD) ? md[RECORD] as ClassRecord : undefined;
}

/** The records of a class and its superclasses, the most basic first. */
export function recordChain(cls: Class): ClassRecord[] {
  const chain: ClassRecord[] = [];
  for (let c: unknown = cls; typeof c === "function" && c !== Function.prototype;) {
    const record = recordOf(c as Class);
    if (record !== undefined) chain.unshift(record);
    c = Object.getPrototypeOf(c);
  }
  return chain;
}

/** Spring's bean naming: `UserService` -> `userService`, but `URLMapper` stays as it is. */
export function defaultBeanName(cls: Class): string {
  const name = cls.name;
  return /^[A-Z]{2}/.test(name) ? name : name.charAt(0).toLowerCase() + name.slice(1);
}
