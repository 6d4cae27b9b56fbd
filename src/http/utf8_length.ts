/**
 * What a string takes as UTF-8, as the runtimes encode it (a lone surrogate as U+FFFD, 3 bytes),
 * counted rather than encoded: no copy of a large text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf8Length } from "./utf8_length.ts";
 *
 * assert.equal(utf8Length("hé"), 3);
 * assert.equal(utf8Length("🍵"), 4);
 * assert.equal(utf8Length("\ud800"), 3);
 * ```
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A pair: 4 bytes for 2 units.
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2;
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}
