// An object's metadata as S3 carries it: one `x-amz-meta-<name>` header per entry. A header value
// is a line of printable ASCII, so any other value travels as RFC 2047 encoded-words
// (`=?UTF-8?B?...?=`), which S3 decodes when it stores the value and writes again when it answers
// (its documented rule for metadata outside US-ASCII); what it, or a store that keeps the header as
// sent (S3Proxy), answers is decoded back here, so the app reads the text it wrote.

/** The prefix of the headers that carry metadata. */
export const METADATA_HEADER_PREFIX = "x-amz-meta-";

// What travels as it is: printable ASCII, with no space at either end (HTTP would trim it), and no
// `=?`, which would read back as the start of an encoded-word.
const PLAIN = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

// RFC 2047 keeps an encoded-word to 75 characters: 45 bytes are 60 of Base64 and 12 around them.
const WORD_BYTES = 45;

const encoder = new TextEncoder();

/** `value` as a header carries it: as it is when it is plain ASCII, else as encoded-words. */
export function encodeMetadataValue(value: string): string {
  if (PLAIN.test(value) && !value.includes("=?")) return value;
  const words: string[] = [];
  let chunk = "";
  let size = 0;
  // Cut between characters, never inside one, so that each word decodes alone.
  for (const character of value) {
    const length = encoder.encode(character).length;
    if (size + length > WORD_BYTES) {
      words.push(encodedWord(chunk));
      chunk = "";
      size = 0;
    }
    chunk += character;
    size += length;
  }
  words.push(encodedWord(chunk));
  return words.join(" ");
}

function encodedWord(text: string): string {
  let binary = "";
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return `=?UTF-8?B?${btoa(binary)}?=`;
}

const WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

// Words in a row (only white space between them, which RFC 2047 drops), decoded together: an
// encoder that cut a character between two words is still read right.
interface Run {
  readonly charset: string;
  readonly bytes: number[];
  raw: string;
}

/**
 * `value` with its RFC 2047 encoded-words (B or Q, in any charset the runtime's `TextDecoder`
 * knows) decoded; a word that does not decode is left as it is.
 */
export function decodeMetadataValue(value: string): string {
  if (!value.includes("=?")) return value;
  let out = "";
  let last = 0;
  let run: Run | undefined;
  const flush = () => {
    if (run !== undefined) out += decoded(run) ?? run.raw;
    run = undefined;
  };
  for (const match of value.matchAll(WORD)) {
    const between = value.slice(last, match.index);
    last = match.index + match[0].length;
    const bytes = wordBytes(match[2], match[3]);
    const charset = match[1].toLowerCase();
    const adjacent = run !== undefined && /^\s*$/.test(between);
    if (run !== undefined && adjacent && bytes !== undefined && run.charset === charset) {
      for (const byte of bytes) run.bytes.push(byte);
      run.raw += between + match[0];
      continue;
    }
    flush();
    // White space between two encoded-words is no part of the text; before a raw one, it is.
    if (!adjacent || bytes === undefined) out += between;
    if (bytes === undefined) out += match[0];
    else run = { charset, bytes: [...bytes], raw: match[0] };
  }
  flush();
  return out + value.slice(last);
}

// deno-lint-ignore no-control-regex -- the characters a metadata value may not hold
const CONTROL = /[\u0000-\u001f\u007f]/;

function decoded(run: Run): string | undefined {
  try {
    const text = new TextDecoder(run.charset, { fatal: true }).decode(new Uint8Array(run.bytes));
    // What a write refuses (a line break, NUL) is not decoded into metadata: left as it was sent.
    return CONTROL.test(text) ? undefined : text;
  } catch {
    // An unknown charset (a RangeError) or bytes it does not hold (a TypeError).
    return undefined;
  }
}

function wordBytes(encoding: string, text: string): number[] | undefined {
  if (encoding === "B" || encoding === "b") {
    try {
      return [...atob(text)].map((c) => c.charCodeAt(0));
    } catch {
      return undefined;
    }
  }
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "_") bytes.push(0x20);
    else if (c !== "=") {
      if (c > "~") return undefined;
      bytes.push(c.charCodeAt(0));
    } else {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    }
  }
  return bytes;
}

/** The `x-amz-meta-*` headers that carry `metadata`, each value encoded as a header needs. */
export function metadataHeaders(
  metadata: Readonly<Record<string, string>>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata).map((
      [name, value],
    ) => [`${METADATA_HEADER_PREFIX}${name}`, encodeMetadataValue(value)]),
  );
}

/** The metadata an answer's `x-amz-meta-*` headers carry, by lower-case name, values decoded. */
export function metadataOf(headers: Headers): Record<string, string> {
  const entries: [string, string][] = [];
  headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (lower.startsWith(METADATA_HEADER_PREFIX) && lower.length > METADATA_HEADER_PREFIX.length) {
      entries.push([lower.slice(METADATA_HEADER_PREFIX.length), decodeMetadataValue(value)]);
    }
  });
  // fromEntries defines each name as its own property: a name `__proto__` stays a name.
  return Object.fromEntries(entries);
}
