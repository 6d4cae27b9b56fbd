/**
 * Optional fields without `...(x === undefined ? {} : { x })`: with `exactOptionalPropertyTypes`
 * an optional field may be absent but not `undefined`, so every optional value copied into an
 * object needed that spread. One helper says it once.
 *
 * @module
 */

/** The fields of `T`, each optional and never `undefined`. */
export type DefinedFields<T> = { [K in keyof T]?: Exclude<T[K], undefined> };

/**
 * A copy of `fields` without the ones whose value is `undefined`, to spread into an object whose
 * optional fields may not hold `undefined`. Not for a per-request path: it makes an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { definedFields } from "./defined_fields.ts";
 *
 * const location: string | undefined = undefined;
 * const line: number | undefined = 12;
 * const where: { file: string; location?: string; line?: number } = {
 *   file: "V1__users.sql",
 *   ...definedFields({ location, line }),
 * };
 * assert.deepEqual(where, { file: "V1__users.sql", line: 12 });
 * assert.equal("location" in where, false);
 * ```
 */
export function definedFields<T extends Record<string, unknown>>(fields: T): DefinedFields<T> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    // A plain assignment to a "__proto__" key (from parsed JSON) would set the prototype.
    if (value !== undefined) {
      Object.defineProperty(out, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out as DefinedFields<T>;
}
