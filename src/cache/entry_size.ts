// How many bytes an entry of the in-memory cache counts for against its `max-bytes`: an estimate
// of what the entry keeps alive, made without running any of the value's code (no getter, no
// `toJSON`), so that a cached value cannot make the count lie or fail.

/** What each entry counts for besides its key and value: the cache's own bookkeeping. */
export const ENTRY_OVERHEAD = 64;
/** A primitive other than a text, a reference, a slot of an array. */
const WORD = 8;
/** An object's own header. */
const OBJECT = 16;

/**
 * The bytes the entry of `key` holding `value` counts for: 2 a character of every text (the key's
 * included: a key made of a request body is as large as the body), the length of binary data (of
 * the whole buffer a view keeps alive), 8 for any other primitive and for each slot, property or
 * `Map` entry, 16 for each object, and {@linkcode ENTRY_OVERHEAD}. An object reached twice counts
 * once (a text, each time); a class's `#private` fields and accessors are not reached. On the
 * high side for text a runtime keeps at a byte a character. The walk stops once the count passes
 * `limit`, which it then answers over: an array's slots count before any is reached, so that an
 * array of 2^32 - 1 slots and one element costs no more to count than a small one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ENTRY_OVERHEAD, entrySize } from "./entry_size.ts";
 *
 * assert.equal(entrySize("7", "tea"), ENTRY_OVERHEAD + 2 + 6);
 * const row = { id: 1, name: "x".repeat(1000) };
 * // The array, its two slots, the row once (its two properties and their values).
 * const size = 16 + 2 * 8 + 16 + (8 + 2 * 2 + 8) + (8 + 2 * 4 + 2000);
 * assert.equal(entrySize("k", [row, row]), ENTRY_OVERHEAD + 2 + size);
 * ```
 */
export function entrySize(key: string, value: unknown, limit: number = Infinity): number {
  let total = ENTRY_OVERHEAD + 2 * key.length;
  const seen = new Set<object>();
  // A stack, not recursion: a value nested a million deep is counted, not a stack overflow.
  const pending: unknown[] = [value];
  // The count is all the caller needs beyond the limit: a sparse array's length is no measure of
  // what it holds, and walking it slot by slot would hold the thread, then exhaust the heap.
  while (pending.length > 0 && total <= limit) {
    const item = pending.pop();
    if (typeof item === "string") {
      total += 2 * item.length;
      continue;
    }
    if (typeof item === "bigint") {
      total += WORD + Math.ceil(item.toString(16).length / 2);
      continue;
    }
    if (typeof item !== "object" || item === null) {
      total += WORD;
      continue;
    }
    if (seen.has(item)) continue;
    seen.add(item);
    total += OBJECT;
    if (ArrayBuffer.isView(item)) {
      if (!seen.has(item.buffer)) {
        seen.add(item.buffer);
        total += item.buffer.byteLength;
      }
    } else if (item instanceof ArrayBuffer) {
      total += item.byteLength;
    } else if (typeof Blob !== "undefined" && item instanceof Blob) {
      total += item.size;
    } else if (item instanceof Map) {
      // The built-in's own iteration: a subclass's may be code of any kind.
      Map.prototype.forEach.call(item, (v: unknown, k: unknown) => {
        total += WORD;
        pending.push(k, v);
      });
    } else if (item instanceof Set) {
      Set.prototype.forEach.call(item, (v: unknown) => {
        total += WORD;
        pending.push(v);
      });
    } else if (Array.isArray(item)) {
      total += WORD * item.length;
      if (total > limit) break;
      for (let i = 0; i < item.length; i++) pending.push(item[i]);
    } else if (!(item instanceof Date)) {
      // Data properties only: a getter is code, and may answer anything, or throw.
      const descriptors = Object.getOwnPropertyDescriptors(item);
      for (const name of Object.keys(descriptors)) {
        const descriptor = descriptors[name];
        if (!("value" in descriptor) || !descriptor.enumerable) continue;
        total += WORD + 2 * name.length;
        pending.push(descriptor.value);
      }
    }
  }
  return total;
}
