/**
 * The two object checks of the code, apart because they answer different questions: whether a
 * value can be read key by key as a mapping (what a parsed file, a configuration object or a
 * `describe()` answer holds), and whether it is plain data that may be copied and frozen without
 * losing what it is. A class instance is a mapping but not plain data: its keys can be read, but
 * a copy loses its prototype and freezing may break it.
 *
 * @module
 */

/**
 * Whether `value` is an object that is not an array: anything whose own keys can be read as a
 * mapping, class instances (a `Date`, a `Map`) and objects without a prototype included.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isMapping } from "./object_guards.ts";
 *
 * assert.equal(isMapping({ port: 8080 }), true);
 * assert.equal(isMapping(new Date(0)), true);
 * assert.equal(isMapping([1, 2]), false);
 * assert.equal(isMapping(null), false);
 * ```
 */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether `value` is a plain object: one written as `{...}` (its prototype is `Object.prototype`)
 * or made by `Object.create(null)`. Arrays and class instances are not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isPlainObject } from "./object_guards.ts";
 *
 * assert.equal(isPlainObject({ port: 8080 }), true);
 * assert.equal(isPlainObject(Object.create(null)), true);
 * assert.equal(isPlainObject(new Date(0)), false);
 * assert.equal(isPlainObject([1, 2]), false);
 * ```
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isMapping(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
