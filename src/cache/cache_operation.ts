// What the caching decorators record of a method, and how the interceptor finds it again.
import { classesOf, entryOf } from "../context/class_record.ts";

/** One caching decorator on a method. */
export interface CacheOperation {
  readonly kind: "cacheable" | "put" | "evict";
  /** As written, for messages: `@Cacheable("users")`. */
  readonly decorator: string;
  /** The cache's name. */
  readonly name: string;
  // deno-lint-ignore no-explicit-any
  readonly key?: (...args: any[]) => unknown;
  readonly ttlMs?: number;
  /** Over the arguments: whether the decorator applies to this call. */
  // deno-lint-ignore no-explicit-any
  readonly condition?: (...args: any[]) => boolean;
  /** Over the result, then the arguments: whether the result is left unstored. */
  // deno-lint-ignore no-explicit-any
  readonly unless?: (result: any, ...args: any[]) => boolean;
  readonly allEntries: boolean;
  readonly beforeInvocation: boolean;
}

/** A class's own caching decorators, by method name, each method's as written. */
export type CachingEntry = Map<string, CacheOperation[]>;

/** Where the caching decorators record on a class. */
export const CACHING: unique symbol = Symbol("thaw.caching");

/**
 * The caching decorators on `method` of an object's classes: the most derived class's that has
 * any (an override that declares its own replaces its parent's), else none.
 */
export function cacheOperations(target: object, method: string): readonly CacheOperation[] {
  for (const cls of classesOf(target)) {
    const operations = entryOf<CachingEntry>(cls, CACHING)?.get(method);
    if (operations !== undefined) return operations;
  }
  return [];
}
