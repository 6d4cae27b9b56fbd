// What the decorators of `@thaw/thaw/tasks` leave on a method, in the metadata of its class: one
// map per decorator, by method name. A subclass's mark wins over its parent's.
import { classesOf, entryOf, ownEntry } from "../context/class_record.ts";

/** Leaves `value` for the method `name` under `key`, in the metadata of the class decorated. */
export function markMethod<T>(
  metadata: DecoratorMetadataObject,
  key: symbol,
  name: string,
  value: T,
): void {
  ownEntry(metadata, key, () => new Map<string, T>()).set(name, value);
}

/** The mark of `method` on `target`: the most derived class's. */
export function markOf<T>(target: object, key: symbol, method: string): T | undefined {
  for (const cls of classesOf(target)) {
    const entry = entryOf<Map<string, T>>(cls, key);
    if (entry?.has(method)) return entry.get(method);
  }
  return undefined;
}

/**
 * The mark of `method` on `target`, for the interceptor of `decorator`, which runs for marked
 * methods only: a mark missing there is a bug of the interceptor's registration, and said so.
 */
export function requiredMark<T>(
  target: object,
  key: symbol,
  method: string,
  decorator: string,
): T {
  const mark = markOf<T>(target, key, method);
  if (mark === undefined) {
    throw new Error(
      `${whereOf(target, method)}: the @${decorator} interceptor ran for a method with no ` +
        `@${decorator} mark`,
    );
  }
  return mark;
}

/** Every method of a bean marked under `key`, with its mark and `Class.method()` for messages. */
export function markedMethods<T>(
  bean: unknown,
  key: symbol,
): { readonly where: string; readonly method: string; readonly mark: T }[] {
  const found = new Map<string, { where: string; method: string; mark: T }>();
  for (const cls of classesOf(bean)) {
    for (const [method, mark] of entryOf<Map<string, T>>(cls, key) ?? []) {
      if (!found.has(method)) found.set(method, { where: `${cls.name}.${method}()`, method, mark });
    }
  }
  return [...found.values()];
}

/** `Class.method()` of a call, for messages. */
export function whereOf(target: object, method: string): string {
  const type = (target as { constructor?: { name?: string } }).constructor;
  return `${type?.name || "(anonymous)"}.${method}()`;
}
