/**
 * Masks secrets in configured URLs and in messages that may contain them, so that no output,
 * error or report ever shows a password, whatever the shape of the URL it was written in.
 *
 * Two things are secrets wherever they appear:
 * - a userinfo: everything between `scheme://` and the last `@` of the URL (`http://***@host`),
 *   or, without `scheme://`, everything before the last `@` when a `:` comes before it
 *   (`admin:pw@host` and `postgres:thaw:pw@host/db` become `***@host...`). The last `@`, because a
 *   password may itself contain `@`, `:` or `/` (a malformed `htp://admin:pw/x@host`);
 * - the value of a password-like parameter (`password`, `pwd`, `secret`, `token`, `api_key`...,
 *   any case) after `?`, `&`, `;` or a space, up to the next parameter (`&name=`) or the end.
 *
 * Masking may take more than the secret (never less): a `user@host` or an e-mail address without
 * a `:` before the `@` is left alone, as is every other parameter.
 *
 * @module
 */

const MASK = "***";

// Matched against a parameter's name: what drivers, clouds and HTTP APIs call their secrets.
const SECRET_NAME =
  /pass|pwd|secret|token|credential|auth|api[-_]?key|access[-_]?key|private[-_]?key|signature/i;
// A parameter: its name after a separator (or at the start), then `=`.
const PARAMETER = /(?:^|[?&;\s])([A-Za-z0-9_.-]+)\s*=\s*/g;
// Where a parameter's value ends: before the next parameter. A raw `&` or `#` not followed by a
// name and `=` is taken as part of the value, so a password containing one is masked whole.
const NEXT_PARAMETER = /[&;\s]\s*[A-Za-z0-9_.-]+\s*=/;
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
 * import { redactUrl } from "./redact.ts";
 *
 * assert.equal(
 *   redactUrl("postgres://app:s3cret@db:5432/shop?sslmode=require&password=x"),
 *   "postgres://***@db:5432/shop?sslmode=require&password=***",
 * );
 * ```
 */
export function redactUrl(value: string): string {
  const ranges: [number, number][] = [];
  const userinfo = userinfoRange(value);
  if (userinfo !== undefined) ranges.push(userinfo);
  ranges.push(...parameterRanges(value));
  return mask(value, ranges);
}

/**
 * Masks the secrets of a message: each word (text between whitespace) as {@link redactUrl} does,
 * then every occurrence of each known secret (a configured password a driver may echo), as
 * written and URL-encoded.
 *
 * @param text a message that may quote a URL or a connection string
 * @param secrets configured secrets to mask wherever they appear (empty ones are ignored)
 * @returns the message, safe to print
 */
export function redactUrlText(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text.replace(/[^\s]+/g, (word) => redactUrl(word));
  for (const secret of secrets) {
    if (secret === undefined || secret === "") continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      out = out.replaceAll(form, MASK);
    }
  }
  return out;
}

// [start, end) of a userinfo, or undefined when there is none.
function userinfoRange(value: string): [number, number] | undefined {
  // An `@` written percent-encoded by mistake still ends what is meant as a userinfo.
  const at = Math.max(value.lastIndexOf("@"), value.toLowerCase().lastIndexOf("%40"));
  if (at === -1) return undefined;
  const scheme = SCHEME.exec(value);
  if (scheme !== null && scheme[0].length <= at) return [scheme[0].length, at];
  const start = OPENING.exec(value)![0].length;
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
function mask(value: string, ranges: [number, number][]): string {
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
