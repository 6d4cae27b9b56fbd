import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";

// The value of each hexadecimal digit by its char code, -1 for any other ASCII character.
const HEX = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) {
  HEX["0123456789abcdef".charCodeAt(digit)] = digit;
  HEX["0123456789ABCDEF".charCodeAt(digit)] = digit;
}

function hexAt(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return code < 128 ? HEX[code] : -1;
}

/**
 * Whether the percent-encoded bytes of `text[from, to)` (a run of `%XX` triples) are UTF-8: the
 * WHATWG decoder's own rules (no overlong form, no surrogate, nothing past U+10FFFF), which are
 * those of `decodeURIComponent`. Told without decoding, so bytes that are not UTF-8 cost no
 * exception.
 */
function isUtf8Run(text: string, from: number, to: number): boolean {
  let needed = 0;
  let lower = 0x80;
  let upper = 0xbf;
  for (let at = from; at < to; at += 3) {
    const byte = hexAt(text, at + 1) * 16 + hexAt(text, at + 2);
    if (needed === 0) {
      if (byte < 0x80) continue;
      if (byte >= 0xc2 && byte <= 0xdf) needed = 1;
      else if (byte >= 0xe0 && byte <= 0xef) {
        if (byte === 0xe0) lower = 0xa0;
        else if (byte === 0xed) upper = 0x9f;
        needed = 2;
      } else if (byte >= 0xf0 && byte <= 0xf4) {
        if (byte === 0xf0) lower = 0x90;
        else if (byte === 0xf4) upper = 0x8f;
        needed = 3;
      } else return false;
    } else {
      if (byte < lower || byte > upper) return false;
      lower = 0x80;
      upper = 0xbf;
      needed--;
    }
  }
  return needed === 0;
}

function spaced(text: string): string {
  return text.includes("+") ? text.replaceAll("+", " ") : text;
}

/**
 * Decodes one name or value of a query (`application/x-www-form-urlencoded`): `+` is a space,
 * percent-encoded bytes are UTF-8, a `%` that starts no `%XX` stays as it was sent (as
 * URLSearchParams and Hono keep it). Returns `undefined` when a run of percent-encoded bytes is not
 * UTF-8 (URLSearchParams would put U+FFFD in their place, and Hono would leave them encoded:
 * either way the handler would get text the client never sent), and throws nothing: a query or
 * body of many such pairs costs no exception a pair.
 */
export function decodeFormComponent(text: string): string | undefined {
  return text.includes("%") ? decodeRange(text, 0, text.length) : spaced(text);
}

// `decodeFormComponent` of `text[from, to)`, read no further than `to`, and sliced only where
// decoded: a name that is not UTF-8 costs no string.
function decodeRange(text: string, from: number, to: number): string | undefined {
  let out = "";
  let written = from;
  for (let at = from; at < to;) {
    if (text.charCodeAt(at) !== 0x25 || !isTriple(text, at, to)) {
      at++;
      continue;
    }
    // The run of `%XX` triples from here: a multi-byte character is decoded as one run.
    let end = at + 3;
    while (text.charCodeAt(end) === 0x25 && isTriple(text, end, to)) end += 3;
    if (!isUtf8Run(text, at, end)) return undefined;
    // Checked above: this decode cannot throw.
    out += spaced(text.slice(written, at)) + decodeURIComponent(text.slice(at, end));
    written = at = end;
  }
  return written === from ? spaced(text.slice(from, to)) : out + spaced(text.slice(written, to));
}

// Whether `text[at]`, a `%`, starts a `%XX` that ends by `to`.
function isTriple(text: string, at: number, to: number): boolean {
  return at + 2 < to && hexAt(text, at + 1) >= 0 && hexAt(text, at + 2) >= 0;
}

function notUtf8(name: string): HttpException {
  return new HttpException(
    HttpStatus.BAD_REQUEST,
    `Request parameter '${name}' is not valid UTF-8 (its percent-encoded bytes)`,
  );
}

/**
 * The values of the query parameter `name` in a request URL, in order: at most the first when
 * `first`. Read from the text after the first `?` (up to a `#`), so a relative URL (Bun's, for a
 * request without `Host`) reads as an absolute one does. A value whose percent-encoded bytes are
 * not UTF-8 is a 400 naming the parameter; a name that is not UTF-8 matches no name.
 *
 * A URL is short and read for a parameter or two: it is searched once a name, allocating no more
 * than the names it decodes. A form body, which may be long and read for many names, is split
 * once ({@linkcode formFields}).
 */
export function queryValues(url: string, name: string, first = false): string[] {
  const start = url.indexOf("?");
  if (start === -1) return [];
  const hash = url.indexOf("#", start);
  const end = hash === -1 ? url.length : hash;
  const values: string[] = [];
  // The first `=` at or after `from`, searched again only once passed: a search from each pair to
  // the end of the text would read a query of many pairs without `=` once a pair.
  let equals = -1;
  for (let from = start + 1; from <= end;) {
    let to = url.indexOf("&", from);
    if (to === -1 || to > end) to = end;
    if (equals < from) {
      equals = url.indexOf("=", from);
      if (equals === -1 || equals > end) equals = end;
    }
    const keyEnd = equals < to ? equals : to;
    // A decoded name is never longer than the name sent: a shorter one cannot match.
    if (keyEnd - from >= name.length && decodeFormComponent(url.slice(from, keyEnd)) === name) {
      const value = keyEnd === to ? "" : decodeFormComponent(url.slice(keyEnd + 1, to));
      if (value === undefined) throw notUtf8(name);
      values.push(value);
      if (first) return values;
    }
    from = to + 1;
  }
  return values;
}

/**
 * Work done reading form bodies, counted for tests (a body's cost is checked in steps, not time):
 * the `&`-separated pairs split, and the names and values decoded.
 */
export const formBodyWork = { pairs: 0, decodes: 0 };

/**
 * The fields of an `application/x-www-form-urlencoded` text (a form body), read as
 * {@linkcode queryValues} reads a query: the same decoding, and the same 400 for a value that is
 * not UTF-8, only that of the field asked for. Returns the reader of a field's first value.
 *
 * The text is split into its pairs once, at the first read, and each name decoded once: reading
 * any number of fields costs one pass over the text, plus the values read. Names go into a `Map`,
 * never an object, so `__proto__` is a name like any other; a name that is not UTF-8 is left out.
 */
export function formFields(text: string): (name: string) => string | undefined {
  let fields: Map<string, string> | undefined;
  return (name) => {
    fields ??= splitFields(text);
    const raw = fields.get(name);
    if (raw === undefined) return undefined;
    formBodyWork.decodes++;
    const value = decodeFormComponent(raw);
    if (value === undefined) throw notUtf8(name);
    return value;
  };
}

// Each decoded name of `text` with its first value, as sent (a value is decoded only when read).
// One pass of the text's characters: a name holding no `%` or `+` is taken as it is, undecoded.
function splitFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  const end = text.length;
  let from = 0;
  let equals = -1;
  let encoded = false;
  for (let at = 0; at <= end; at++) {
    const code = at === end ? 0x26 : text.charCodeAt(at);
    if (code === 0x26) { // &
      formBodyWork.pairs++;
      const keyEnd = equals === -1 ? at : equals;
      let key: string | undefined;
      if (encoded) {
        formBodyWork.decodes++;
        key = decodeRange(text, from, keyEnd);
      } else key = text.slice(from, keyEnd);
      if (key !== undefined && !fields.has(key)) {
        fields.set(key, equals === -1 ? "" : text.slice(equals + 1, at));
      }
      from = at + 1;
      equals = -1;
      encoded = false;
    } else if (equals === -1) {
      if (code === 0x3d) equals = at; // =
      else if (code === 0x25 || code === 0x2b) encoded = true; // % or +
    }
  }
  return fields;
}
