// What an object's key may be, checked before any I/O, the same for every store: a key that one
// store takes and another refuses would make an app that passes its tests on the disk fail in
// production on S3. Pure.

/** The longest key, in UTF-8 bytes: S3's and R2's limit. */
export const MAX_KEY_BYTES = 1024;
/** The longest segment, in UTF-8 bytes: a file name's limit on the disk, so on every store. */
export const MAX_SEGMENT_BYTES = 255;

// Control characters (C0, DEL, C1): a key reaches file names, URLs, headers and log lines.
// deno-lint-ignore no-control-regex -- these are the characters refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// A high surrogate with no low one after it, or a low one with no high one before it: no UTF-8.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const encoder = new TextEncoder();

/** How many bytes UTF-8 writes `text` in (its lone surrogates as the three of U+FFFD). */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

// What is wrong with `text` as a key or a prefix, whichever `what` says, but for its segments.
function textProblem(text: unknown, what: "key" | "prefix"): string | undefined {
  if (typeof text !== "string") return `a ${what} is a string`;
  if (CONTROL.test(text)) return `a ${what} holds no control character`;
  if (LONE_SURROGATE.test(text)) return `a ${what} holds no lone surrogate (it has no UTF-8)`;
  if (text.startsWith("/")) return `a ${what} does not start with "/"`;
  // A folder separator on Windows: the disk there would take `a\..\..\b` for a path of its own.
  if (text.includes("\\")) return `a ${what} holds no "\\" (a folder separator on Windows)`;
  const bytes = utf8Length(text);
  if (bytes > MAX_KEY_BYTES) return `a ${what} is at most ${MAX_KEY_BYTES} bytes, got ${bytes}`;
  return undefined;
}

/**
 * What is wrong with `key` as an object's key, or `undefined` when nothing is: a key is a string
 * of 1 to 1,024 UTF-8 bytes, with no control character, lone surrogate nor `\`, not starting or ending
 * with `/`, whose `/`-separated segments are neither empty, `.` nor `..` (which a file store would
 * resolve, so that two keys named one object, or one named a file outside the store), nor longer
 * than 255 bytes (which no file system takes as a name).
 */
export function keyProblem(key: unknown): string | undefined {
  if (key === "") return "a key is not empty";
  const problem = textProblem(key, "key");
  if (problem !== undefined) return problem;
  const text = key as string;
  if (text.endsWith("/")) return 'a key does not end with "/" (that names a folder)';
  for (const segment of text.split("/")) {
    if (segment === "") return 'a key has no empty segment ("//")';
    if (segment === "." || segment === "..") return `a key has no "${segment}" segment`;
    const bytes = utf8Length(segment);
    if (bytes > MAX_SEGMENT_BYTES) {
      return `a key's segments are at most ${MAX_SEGMENT_BYTES} bytes (a file name's limit), got ${bytes}`;
    }
  }
  return undefined;
}

/**
 * What is wrong with `prefix` as a listing's prefix, or `undefined`: the empty prefix lists every
 * key; any other is what starts a key (it may end with `/`, or in the middle of a segment), with no
 * `.` or `..` segment before its last `/`.
 */
export function prefixProblem(prefix: unknown): string | undefined {
  if (prefix === "") return undefined;
  const problem = textProblem(prefix, "prefix");
  if (problem !== undefined) return problem;
  const segments = (prefix as string).split("/");
  // The last segment may be the start of a longer one ("." starts ".hidden").
  for (const segment of segments.slice(0, -1)) {
    if (segment === "") return 'a prefix has no empty segment ("//")';
    if (segment === "." || segment === "..") return `a prefix has no "${segment}" segment`;
  }
  return undefined;
}

/**
 * Orders two keys as their UTF-8 bytes do, which is how S3 and R2 list them: by code point, where
 * JavaScript's `<` orders by UTF-16 unit and so puts U+10000 and above before U+E000 to U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (U+D800 to U+DFFF) stands for a code point over U+FFFF: above every unit not one.
    const xHigh = x >= 0xd800 && x <= 0xdfff;
    const yHigh = y >= 0xd800 && y <= 0xdfff;
    if (xHigh !== yHigh) return xHigh ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
