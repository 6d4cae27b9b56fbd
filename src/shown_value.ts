// How a message or a log line shows a text or a value it was given: on one line, nothing in it
// able to forge another line or move a terminal's cursor, whatever the caller sent.

// Control characters, line and paragraph separators and lone surrogates: what would let a key
// forge a line of its own, or a terminal sequence, in a message or a log.
const UNPRINTABLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A character as JSON escapes it, `\uXXXX`: what every escaping of a log line writes. */
export const unicodeEscape = (c: string): string =>
  `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** A text with what could break its line written as `\uXXXX`, for a message or a log line. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, unicodeEscape);
}

/**
 * A value as an error message quotes it: its JSON, made {@linkcode printable}; a number as
 * JavaScript writes it (`NaN`, `Infinity`, which JSON writes `null`), a `BigInt` as `5n`; its type
 * when JSON writes nothing of it (a function) or cannot write it (a cycle, a `BigInt` inside).
 */
export function shownValue(value: unknown): string {
  if (typeof value === "number") return `${value}`;
  if (typeof value === "bigint") return `${value}n`;
  try {
    return printable(JSON.stringify(value) ?? typeof value);
  } catch {
    return typeof value;
  }
}
