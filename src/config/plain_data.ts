/**
 * Copying and freezing the plain data of a configuration: mappings and lists. Anything else a
 * configuration object or a schema holds (a `Date`, a `RegExp`, a function, a class instance) is
 * kept as it is: copying it may fail or lose what it is, and freezing it may break it (a global
 * `RegExp` writes its `lastIndex`).
 *
 * @module
 */

import { isPlainObject } from "../object_guards.ts";

/** A copy of the mappings and lists of `value`; every other value is the same one. */
export function copyTree(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyTree);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    // Defined, not assigned: a `__proto__` key stays a key.
    Object.defineProperty(out, key, {
      value: copyTree(child),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Freezes the mappings and lists of `value`, all the way down; other values are left as they are. */
export function freezeTree(value: unknown): void {
  if (!Array.isArray(value) && !isPlainObject(value)) return;
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) freezeTree(child);
}
