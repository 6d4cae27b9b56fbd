// A lock's key as an error message or a log line shows it. A key is made of a method's arguments,
// often a client's input: of any characters and any length. Shown as JSON with what could break a
// line written as `\uXXXX`, and cut, so that a key of a megabyte makes no message of one.
import { printable } from "../shown_value.ts";

/** How many characters of a key's escaped text are shown at most, quotes aside. */
const SHOWN = 200;

/**
 * `key` as JSON quotes it, with line breaks and controls as `\uXXXX`; past 200 characters of
 * that, cut (never inside an escape) and followed by its length: `"order-…"…(5000 chars)`.
 */
export function shownKey(key: string): string {
  let shown = "";
  let taken = 0;
  // Code points, so that a pair is shown whole; the cut bounds the work for a key of a megabyte.
  for (const c of key.slice(0, SHOWN)) {
    const piece = printable(JSON.stringify(c).slice(1, -1));
    if (shown.length + piece.length > SHOWN) break;
    shown += piece;
    taken += c.length;
  }
  return taken === key.length ? `"${shown}"` : `"${shown}"…(${key.length} chars)`;
}
