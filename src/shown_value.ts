// How a message or a log line shows a text or a value it was given: on one line, nothing in it
// able to forge another line or move a terminal's cursor, whatever the caller sent.

// Control characters, line and paragraph separators, the bidirectional controls and lone
// surrogates: what would let a key forge a line of its own or a terminal sequence, or show a reader
// its text in another order than it was written (Trojan Source), in a message or a log.
const UNPRINTABLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// How much of a value a message shows: a value sent by a client, or read from a file, must not
// make a log line of a megabyte.
const SHOWN_LENGTH = 200;

// What a shown value is cut between: an escape, a surrogate pair or one character.
const PIECE = /\\u[0-9a-fA-F]{4}|\\.|[\ud800-\udbff][\udc00-\udfff]|./gsy;

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
 * Past 200 characters, the first ones and the length (a text's own, else its JSON's):
 * `"xxx... (100000 characters)`.
 */
export function shownValue(value: unknown): string {
  if (typeof value === "number") return `${value}`;
  if (typeof value === "bigint") return `${value}n`;
  // A long text is cut before it is escaped, which would cost its whole length to show its start.
  const text = typeof value === "string";
  let shown: string;
  try {
    shown = printable(
      JSON.stringify(text ? value.slice(0, SHOWN_LENGTH) : value) ?? typeof value,
    );
  } catch {
    return typeof value;
  }
  const length = text ? value.length : shown.length;
  return shown.length <= SHOWN_LENGTH && length <= SHOWN_LENGTH
    ? shown
    : `${head(shown)}... (${length} characters)`;
}

// The first pieces of `shown` that fit in SHOWN_LENGTH, none cut in two.
function head(shown: string): string {
  PIECE.lastIndex = 0;
  let end = 0;
  while (PIECE.test(shown) && PIECE.lastIndex <= SHOWN_LENGTH) end = PIECE.lastIndex;
  return shown.slice(0, end);
}
