import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";

// Runs of percent-encoded bytes: a multi-byte character is decoded as one run. A `%` that starts
// no such triple stays as it was sent, as URLSearchParams and Hono keep it.
const ENCODED_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * Decodes one name or value of a query (`application/x-www-form-urlencoded`): `+` is a space,
 * percent-encoded bytes are UTF-8. Bytes that are not UTF-8 throw a `URIError` (URLSearchParams
 * would put U+FFFD in their place, and Hono would leave them encoded: either way the handler
 * would get text the client never sent).
 */
export function decodeFormComponent(text: string): string {
  const spaced = text.includes("+") ? text.replaceAll("+", " ") : text;
  return spaced.includes("%") ? spaced.replace(ENCODED_RUN, decodeURIComponent) : spaced;
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
 */
export function queryValues(url: string, name: string, first = false): string[] {
  const start = url.indexOf("?");
  if (start === -1) return [];
  const end = url.indexOf("#", start);
  return pairValues(url, start + 1, end === -1 ? url.length : end, name, first);
}

/**
 * The values of the field `name` in an `application/x-www-form-urlencoded` text (a form body), read
 * as {@linkcode queryValues} reads a query: the same decoding, the same 400.
 */
export function formValues(text: string, name: string, first = false): string[] {
  return pairValues(text, 0, text.length, name, first);
}

// The `&`-separated pairs of `text` from `start` to `end`.
function pairValues(
  text: string,
  start: number,
  end: number,
  name: string,
  first: boolean,
): string[] {
  const values: string[] = [];
  for (let from = start; from <= end;) {
    let to = text.indexOf("&", from);
    if (to === -1 || to > end) to = end;
    // The pair alone is searched for its `=`: a search to the end of the text would read a query
    // of many pairs once per pair.
    const pair = text.slice(from, to);
    const equals = pair.indexOf("=");
    let key: string | undefined;
    try {
      key = decodeFormComponent(equals === -1 ? pair : pair.slice(0, equals));
    } catch {
      key = undefined;
    }
    if (key === name) {
      try {
        values.push(equals === -1 ? "" : decodeFormComponent(pair.slice(equals + 1)));
      } catch {
        throw notUtf8(name);
      }
      if (first) return values;
    }
    from = to + 1;
  }
  return values;
}
