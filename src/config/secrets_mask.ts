/**
 * Masking of secrets, in one place for the whole project, so that no output, error or report ever
 * shows one. A {@linkcode Mask} turns a text into the text safe to print; a message goes through
 * the masks of everything it may quote, composed with {@linkcode composeMasks}:
 *
 * - {@linkcode maskUrls}: the secrets of every URL in a text, found by their shape, whatever the
 *   shape of the URL ({@linkcode maskUrl} for one configured value);
 * - {@linkcode secretsMask}: known secrets (a configured password a driver may echo, the
 *   credentials a search host may echo), wherever they appear, as written and encoded;
 * - {@linkcode placeholdersMask}: the values of a connection's placeholders (a password for a
 *   CREATE USER), written back as their `${name}`.
 *
 * {@linkcode maskJson} applies a mask to every string of a parsed JSON value. A mask may take more
 * than the secret, never less.
 *
 * Two things in a URL are secrets wherever they appear:
 * - a userinfo: everything between `scheme://` and the last `@` of the URL (`http://***@host`),
 *   or, without `scheme://`, everything before the last `@` when a `:` comes before it
 *   (`admin:pw@host` and `postgres:thaw:pw@host/db` become `***@host...`). The last `@`, because a
 *   password may itself contain `@`, `:` or `/` (a malformed `htp://admin:pw/x@host`);
 * - the value of a credential parameter (`password`, `pwd`, `secret`, `token`, `api_key`, a
 *   signature, `jwt`, a session id..., any case; `sig`, `key`, `code`, `session` and `sid` only as
 *   the whole name) after `?`, `&`, `;`, `#` (a fragment's `#access_token=`) or a space, up to the
 *   next parameter (`&name=`) or the end.
 *
 * A `user@host` or an e-mail address without a `:` before the `@` is left alone, as is every other
 * parameter.
 *
 * @module
 */

const MASK = "***";

/**
 * Masks what a text must not show: the text, safe to print. Applied to a whole text (a string of
 * a value, a message), before it is cut: a cut could split a secret from what marks it.
 */
export type Mask = (text: string) => string;

/** Shows text as it is: the mask of nothing to hide. */
export const noMask: Mask = (text) => text;

/**
 * One mask applying each of `masks` in turn, the first first: a text that may quote several kinds
 * of secret goes through the mask of each. Composing nothing, or only {@linkcode noMask}, is
 * `noMask`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { composeMasks, maskUrls, secretsMask } from "./secrets_mask.ts";
 *
 * const mask = composeMasks(maskUrls, secretsMask(["s3cret-token"]));
 * assert.equal(
 *   mask("GET https://admin:pw@node1:9200/ said: bad token s3cret-token"),
 *   "GET https://***@node1:9200/ said: bad token ***",
 * );
 * ```
 */
export function composeMasks(...masks: readonly Mask[]): Mask {
  const applied = masks.filter((m) => m !== noMask);
  if (applied.length === 0) return noMask;
  if (applied.length === 1) return applied[0];
  return (text) => applied.reduce((out, mask) => mask(out), text);
}

/**
 * Matched against a parameter's name: what drivers, clouds and HTTP APIs call their secrets (an
 * Azure SAS `sig`, a Google API `key`, an OAuth `code`, a `JSESSIONID`); names too short or too
 * common to match within a name (`keyboard`, `zipcode`, `design`) are taken whole.
 */
export const SECRET_NAME: RegExp =
  /pass|pwd|secret|token|credential|auth|(?:api|access|private)[-_]?key|signature|jwt|sess(?:ion)?[-_]?id|^(?:sig|key|code|session|sid)$/i;
// A parameter: its name after a separator (or at the start), then `=`. The separator is looked
// behind, not taken: `a= password=x` would otherwise hide `password` behind `a`'s match.
const PARAMETER = /(?<=^|[?&;#\s])([\w.-]+)\s*=\s*/g;
// Where a parameter's value ends: before the next parameter. A raw `&` or `#` not followed by a
// name and `=` is taken as part of the value, so a password containing one is masked whole.
const NEXT_PARAMETER = /[&;\s]\s*[A-Za-z0-9_.-]+\s*=/;
// What a userinfo (`@`, or `%40` written by mistake) or a parameter (`=`) needs: text without it
// has nothing to mask, and most of what lines carry (an access log's path, method, user agent) is
// such text, checked once rather than through every rule.
const MAYBE_SECRET = /[@=]|%40/;
// `scheme://` at the start of a word, after any opening quotes or brackets.
const SCHEME = /^["'`([{<]*[A-Za-z][A-Za-z0-9+.-]*:\/\//;
// Opening quotes or brackets, kept in front of a masked userinfo.
const OPENING = /^["'`([{<]*/;

/**
 * Masks the secrets of one configured value (a URL, a connection string), taken whole: a
 * password in it may contain any character, spaces included.
 *
 * @param value the value as configured
 * @returns the value with every userinfo and password-like parameter value replaced by `***`
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { maskUrl } from "./secrets_mask.ts";
 *
 * assert.equal(
 *   maskUrl("postgres://app:s3cret@db:5432/shop?sslmode=require&password=x"),
 *   "postgres://***@db:5432/shop?sslmode=require&password=***",
 * );
 * ```
 */
export function maskUrl(value: string): string {
  if (!MAYBE_SECRET.test(value)) return value;
  const ranges: [number, number][] = [];
  const userinfo = userinfoRange(value);
  if (userinfo !== undefined) ranges.push(userinfo);
  ranges.push(...parameterRanges(value));
  return maskRanges(value, ranges);
}

/**
 * Masks the secrets of every URL or connection string a message quotes: each word (text between
 * whitespace) as {@linkcode maskUrl} masks a value.
 */
export const maskUrls: Mask = (text) =>
  MAYBE_SECRET.test(text) ? text.replace(/[^\s]+/g, (word) => maskUrl(word)) : text;

/**
 * A mask of known secrets: every occurrence of each, as written and URL-encoded (and, with
 * `json`, escaped inside a JSON string, as an error body quoting a header has it), the longest
 * secret first. Empty and missing secrets are ignored; none at all is {@linkcode noMask}.
 *
 * @param secrets configured secrets (a password a driver may echo, a connection's credentials)
 * @param options `json`: masks the JSON-escaped form too
 */
export function secretsMask(
  secrets: readonly (string | undefined)[],
  options: { readonly json?: boolean } = {},
): Mask {
  const known = [...new Set(secrets)]
    .filter((s): s is string => s !== undefined && s !== "")
    .sort((a, b) => b.length - a.length);
  if (known.length === 0) return noMask;
  const forms = known.map((secret) => [
    ...new Set([
      secret,
      ...urlEncoded(secret),
      ...(options.json ? [JSON.stringify(secret).slice(1, -1)] : []),
    ]),
  ]);
  return (text) => {
    let out = text;
    for (const written of forms) for (const form of written) out = out.replaceAll(form, MASK);
    return out;
  };
}

/**
 * A mask writing every placeholder value of three characters or more back as its `${name}`, as
 * written and URL-encoded (a name in a request's path is), found in the text as given (a name
 * written back is not searched again), two values that overlap there hidden whole, both named
 * (`${user}${password}`): a request or a failing
 * statement is printed after its placeholders were replaced, and a value may be a secret (a
 * password for a CREATE USER). Shorter values are left: masking every `1` or `on` would garble the
 * message and hide no secret. No placeholders: {@linkcode noMask}.
 *
 * @param placeholders a connection's placeholders, name → value
 */
export function placeholdersMask(
  placeholders: ReadonlyMap<string, string> | undefined,
): Mask {
  if (placeholders === undefined) return noMask;
  const forms = [...placeholders].filter(([, value]) => value.length >= 3)
    .flatMap(([name, value]) =>
      [...new Set([value, ...urlEncoded(value)])].map((form) => [name, form] as const)
    )
    .sort(([, a], [, b]) => b.length - a.length);
  if (forms.length === 0) return noMask;
  // Found in the text as given, not in turn: a value replaced in turn could be found again in a
  // `${name}` written back for a longer one (`ten` in `${tenant}`). Where occurrences overlap
  // (`zabc` and `abcdefgh` in `zabcdefgh`), the whole span they cover goes, as the names of those
  // not inside another (`${user}${password}`): either one alone would leave part of the other
  // shown. Of two placeholders sharing a value, the first is named.
  return (text) => {
    const hits: { at: number; end: number; name: string }[] = [];
    for (const [name, form] of forms) {
      for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
        hits.push({ at, end: at + form.length, name });
      }
    }
    if (hits.length === 0) return text;
    // By start, the longer first: an occurrence inside the span so far adds nothing to it.
    hits.sort((a, b) => a.at - b.at || b.end - a.end);
    let masked = "";
    let from = 0;
    let spanEnd = -1;
    for (const { at, end, name } of hits) {
      if (end <= spanEnd) continue;
      masked += `${at >= spanEnd ? text.slice(from, at) : ""}\${${name}}`;
      spanEnd = end;
      from = end;
    }
    return masked + text.slice(from);
  };
}

/**
 * A parsed JSON value with every string through `mask`, keys included. A body is untrusted:
 * nesting deeper than any error body has is cut rather than walked. With {@linkcode noMask}, the
 * value is returned as it is, not copied.
 */
export function maskJson(value: unknown, mask: Mask, depth = 0): unknown {
  if (mask === noMask) return value;
  if (typeof value === "string") return mask(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= 64) return "(nested too deep)";
  if (Array.isArray(value)) return value.map((v) => maskJson(v, mask, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // Defined as an own property: a "__proto__" key of a body stays a key.
    Object.defineProperty(out, mask(k), {
      value: maskJson(v, mask, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * Masks an error in place: its message and stack (which starts with the message as it was), and
 * what it carries that is printed with it (the cause a schema or a constructor threw, an
 * AggregateError's errors, a `detail` property), all the way down. A carried value that is no
 * error (a thrown string, an object) is replaced by its masked text where that text shows a
 * secret, and kept as it is otherwise, so that a caller comparing causes still can.
 */
export function maskError(error: Error, mask: Mask, depth = 0): void {
  if (depth > 8) return;
  try {
    for (const key of Object.getOwnPropertyNames(error)) {
      const value = (error as unknown as Record<string, unknown>)[key];
      if (typeof value === "string") {
        Object.defineProperty(error, key, { value: mask(value) });
      } else if (value instanceof Error) {
        maskError(value, mask, depth + 1);
      } else if (key === "cause" && value !== undefined && value !== null) {
        const text = textOf(value);
        if (mask(text) !== text) Object.defineProperty(error, key, { value: mask(text) });
      }
    }
    if (error instanceof AggregateError) {
      for (const [i, inner] of error.errors.entries()) {
        if (inner instanceof Error) {
          maskError(inner, mask, depth + 1);
        } else {
          const text = textOf(inner);
          if (mask(text) !== text) error.errors[i] = mask(text);
        }
      }
    }
  } catch {
    // An error of someone else's that will not be changed (frozen) keeps its text.
  }
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// A secret as a URL writes it; none for one holding a lone surrogate, which no URL can encode (and
// which `encodeURIComponent` refuses, with an error that would end the message being masked).
function urlEncoded(secret: string): string[] {
  try {
    return [encodeURIComponent(secret)];
  } catch {
    return [];
  }
}

// [start, end) of a userinfo, or undefined when there is none.
function userinfoRange(value: string): [number, number] | undefined {
  // An `@` written percent-encoded by mistake still ends what is meant as a userinfo.
  const at = Math.max(value.lastIndexOf("@"), value.toLowerCase().lastIndexOf("%40"));
  if (at === -1) return undefined;
  const scheme = SCHEME.exec(value);
  if (scheme !== null && scheme[0].length <= at) return [scheme[0].length, at];
  const start = OPENING.exec(value)?.[0].length ?? 0; // it matches the empty text too
  // Without a scheme, only `name:secret@`: a bare `user@host` carries no password.
  return value.slice(start, at).includes(":") ? [start, at] : undefined;
}

// [start, end) of the value of each password-like parameter.
function parameterRanges(value: string): [number, number][] {
  const ranges: [number, number][] = [];
  for (const match of value.matchAll(PARAMETER)) {
    if (!SECRET_NAME.test(match[1])) continue;
    const start = match.index + match[0].length;
    const next = value.slice(start).search(NEXT_PARAMETER);
    ranges.push([start, next === -1 ? value.length : start + next]);
  }
  return ranges;
}

// Replaces each run of overlapping or touching ranges by one mask; empty ranges hide nothing.
function maskRanges(value: string, ranges: [number, number][]): string {
  const sorted = ranges.filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0]);
  let out = "", from = 0;
  for (let i = 0; i < sorted.length;) {
    const start = sorted[i][0];
    let end = sorted[i][1];
    for (i++; i < sorted.length && sorted[i][0] <= end; i++) end = Math.max(end, sorted[i][1]);
    out += value.slice(from, start) + MASK;
    from = end;
  }
  return out + value.slice(from);
}
