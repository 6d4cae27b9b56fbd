// How to answer a GET or HEAD of a stored object, per RFC 9110's conditional requests (§13) and
// range requests (§14), decided before any byte is read: `ObjectStorage.response` asks the store
// only for what the plan says to send. Pure: the clock is a parameter, and every header value,
// which a client wrote and may hold any character, gives a plan rather than an exception.
//
// What is accepted, and where RFC 9110 leaves a choice, what we chose:
// - A header that is absent, empty or only whitespace counts as absent (as Go's net/http and Hono
//   read them), so that a proxy's empty `If-Match:` does not fail every read.
// - Entity tags: `If-Match` compares strongly (a `W/` tag never matches), `If-None-Match` weakly;
//   `*` alone matches the object. A list is read up to its first malformed member, as Go does:
//   the tags before it count, nothing after it does.
// - Dates: the three forms of §5.6.7, parsed here rather than by `Date.parse`, whose leniency
//   differs between V8 (Deno, Node) and JavaScriptCore (Bun): IMF-fixdate (`Sun, 06 Nov 1994
//   08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`, its two-digit year taken as the
//   latest year with those digits that is at most 50 years ahead of `now`) and asctime (`Sun Nov
//   6 08:49:37 1994`). Names are case-sensitive; the day name is not checked against the date.
//   Anything else is no date, and the condition that holds it is ignored. Dates compare to the
//   second, since `Last-Modified` carries no less.
// - Ranges: `bytes` (any case) and one range only. A request for several ranges gets the whole
//   object (200): §14.2 lets a server ignore `Range`, and we write no multipart/byteranges. A range
//   that does not parse, or whose last-pos is before its first-pos (§14.1.1: invalid), is ignored
//   too (200), as §14.2 allows; only a well-formed range the object cannot satisfy gets 416.
// - Positions are compared exactly whatever their length: a first-pos past 2^53 is past the end
//   of any object (416), a last-pos or suffix-length past it reaches the end of any (206).
// - An empty object: an int-range (`bytes=0-`) is unsatisfiable (416), while §14.1.1 counts a
//   non-zero suffix (`bytes=-5`) as satisfiable, yet no 206 can carry zero bytes (Content-Range
//   has no empty form): that one gets the whole, empty, object (200), as Go and Deno's std do.

import type { ObjectInfo } from "./storage_driver.ts";

/** The parts of a request that decide how an object is answered (header values as received). */
export interface RequestConditions {
  /** The request's method, as `Request.method` gives it (`GET` and `HEAD` upper-case). */
  readonly method: string;
  /** The `If-Match` header. */
  readonly ifMatch?: string | null | undefined;
  /** The `If-None-Match` header. */
  readonly ifNoneMatch?: string | null | undefined;
  /** The `If-Modified-Since` header. */
  readonly ifModifiedSince?: string | null | undefined;
  /** The `If-Unmodified-Since` header. */
  readonly ifUnmodifiedSince?: string | null | undefined;
  /** The `Range` header. */
  readonly range?: string | null | undefined;
  /** The `If-Range` header. */
  readonly ifRange?: string | null | undefined;
}

/**
 * How to answer: 200 with the whole object, 206 with `range` of it (non-empty, within the
 * object), or, with no body of the object, 304 (not modified), 412 (a precondition failed), 416
 * (the range is past the end) or 405 (neither GET nor HEAD).
 */
export type ResponsePlan =
  | { readonly status: 200; readonly range?: undefined }
  | { readonly status: 206; readonly range: { readonly offset: number; readonly length: number } }
  | { readonly status: 304 }
  | { readonly status: 412 }
  | { readonly status: 416 }
  | { readonly status: 405 };

/**
 * Plans the answer to a GET or HEAD of an existing object, evaluating the conditions in RFC
 * 9110's order (§13.2.2): `If-Match`, else `If-Unmodified-Since` (412); `If-None-Match`, else
 * `If-Modified-Since` (304); then, for GET only, `Range` under `If-Range` (206 or 416). The
 * header comment of this module says what each header may hold and what is ignored.
 *
 * @param info The object's size, entity tag and last write.
 * @param conditions The request's method and header values.
 * @param now The server's clock: an `If-Modified-Since` after it is ignored (§13.1.3), and it
 *   places an RFC 850 date's century.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { planResponse } from "./object_response.ts";
 *
 * const info = { size: 100, etag: '"v1"', lastModified: new Date("2026-01-02T03:04:05Z") };
 * assert.deepEqual(planResponse(info, { method: "GET", range: "bytes=-10" }), {
 *   status: 206,
 *   range: { offset: 90, length: 10 },
 * });
 * assert.deepEqual(planResponse(info, { method: "GET", ifNoneMatch: 'W/"v1"' }), { status: 304 });
 * ```
 */
export function planResponse(
  info: Pick<ObjectInfo, "size" | "etag" | "lastModified">,
  conditions: RequestConditions,
  now: Date = new Date(),
): ResponsePlan {
  const method = conditions.method;
  if (method !== "GET" && method !== "HEAD") return { status: 405 };
  const nowMs = now.getTime();
  const modified = Math.floor(info.lastModified.getTime() / 1000);

  const ifMatch = fieldValue(conditions.ifMatch);
  if (ifMatch !== undefined) {
    if (!tagsMatch(ifMatch, info.etag, strongEqual)) return { status: 412 };
  } else {
    const since = httpDate(fieldValue(conditions.ifUnmodifiedSince), nowMs);
    if (since !== undefined && modified > since) return { status: 412 };
  }

  const ifNoneMatch = fieldValue(conditions.ifNoneMatch);
  if (ifNoneMatch !== undefined) {
    if (tagsMatch(ifNoneMatch, info.etag, weakEqual)) return { status: 304 };
  } else {
    const since = httpDate(fieldValue(conditions.ifModifiedSince), nowMs);
    // A date ahead of the clock would keep answering 304 to later writes (§13.1.3).
    if (since !== undefined && since * 1000 <= nowMs && modified <= since) return { status: 304 };
  }

  // Range is defined for GET alone (§14.2).
  if (method === "HEAD") return { status: 200 };
  const range = fieldValue(conditions.range);
  if (range === undefined) return { status: 200 };
  const ifRange = fieldValue(conditions.ifRange);
  if (ifRange !== undefined && !ifRangeHolds(ifRange, info, modified, nowMs)) {
    return { status: 200 };
  }
  return planRange(parseRange(range), info.size);
}

/**
 * The headers of the answer `plan` gives for `info`. 200 and 206: `ETag`, `Last-Modified` (as an
 * IMF-fixdate), `Accept-Ranges: bytes`, `Content-Type` with `X-Content-Type-Options: nosniff`
 * and `Content-Security-Policy: sandbox`,
 * `Content-Length` (of the whole object, or of the range), and for 206 `Content-Range: bytes
 * first-last/size`. 304: `ETag` alone (§15.4.5: the validator a cache updates with). 416:
 * `Accept-Ranges` and a `Content-Range` of the size alone, `*` for the range (§14.4). 405:
 * `Allow: GET, HEAD`. 412: none. `Cache-Control` is never set: how long an object may be kept
 * is the app's to say.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { responseHeaders } from "./object_response.ts";
 *
 * const info = {
 *   key: "a.txt",
 *   size: 100,
 *   etag: '"v1"',
 *   lastModified: new Date("2026-01-02T03:04:05Z"),
 *   contentType: "text/plain",
 *   metadata: {},
 * };
 * const headers = responseHeaders(info, { status: 206, range: { offset: 90, length: 10 } });
 * assert.equal(headers.get("content-range"), "bytes 90-99/100");
 * assert.equal(headers.get("content-length"), "10");
 * assert.equal(headers.get("last-modified"), "Fri, 02 Jan 2026 03:04:05 GMT");
 * ```
 */
export function responseHeaders(info: ObjectInfo, plan: ResponsePlan): Headers {
  const headers = new Headers();
  switch (plan.status) {
    case 200:
    case 206: {
      setIfValid(headers, "ETag", info.etag);
      const modified = info.lastModified;
      if (!Number.isNaN(modified.getTime())) headers.set("Last-Modified", modified.toUTCString());
      headers.set("Accept-Ranges", "bytes");
      // A value a header cannot carry (a store another app wrote) should cost its type, not a 500.
      if (!setIfValid(headers, "Content-Type", info.contentType)) {
        headers.set("Content-Type", "application/octet-stream");
      }
      headers.set("X-Content-Type-Options", "nosniff");
      // An upload's own media type may be text/html or SVG: served from the app's origin, it runs
      // no script and reaches no cookie of the app's.
      headers.set("Content-Security-Policy", "sandbox");
      if (plan.status === 200) {
        headers.set("Content-Length", String(info.size));
      } else {
        const { offset, length } = plan.range;
        headers.set("Content-Length", String(length));
        headers.set("Content-Range", `bytes ${offset}-${offset + length - 1}/${info.size}`);
      }
      break;
    }
    case 304:
      setIfValid(headers, "ETag", info.etag);
      break;
    case 416:
      headers.set("Accept-Ranges", "bytes");
      headers.set("Content-Range", `bytes */${info.size}`);
      break;
    case 405:
      headers.set("Allow", "GET, HEAD");
      break;
  }
  return headers;
}

function setIfValid(headers: Headers, name: string, value: string): boolean {
  try {
    headers.set(name, value);
    return true;
  } catch {
    return false;
  }
}

// A header's value without its optional whitespace, or `undefined` when there is none to read.
function fieldValue(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = trimWhitespace(value);
  return trimmed === "" ? undefined : trimmed;
}

// By hand: a regular expression for trailing whitespace (`[ \t]+$`) takes time quadratic in a run
// of spaces that does not end the value, and a client chooses the value.
function trimWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === " " || text[start] === "\t")) start++;
  while (end > start && (text[end - 1] === " " || text[end - 1] === "\t")) end--;
  return text.slice(start, end);
}

// ---- Entity tags (§8.8.3) ----

interface EntityTag {
  readonly weak: boolean;
  /** With its quotes. */
  readonly opaque: string;
}

function storedTag(etag: string): EntityTag {
  return etag.startsWith("W/")
    ? { weak: true, opaque: etag.slice(2) }
    : { weak: false, opaque: etag };
}

function strongEqual(tag: EntityTag, stored: EntityTag): boolean {
  return !tag.weak && !stored.weak && tag.opaque === stored.opaque;
}

function weakEqual(tag: EntityTag, stored: EntityTag): boolean {
  return tag.opaque === stored.opaque;
}

// Whether `*` or a tag of the list `field` matches the object's tag under `equal`.
function tagsMatch(
  field: string,
  etag: string,
  equal: (tag: EntityTag, stored: EntityTag) => boolean,
): boolean {
  if (field === "*") return true;
  const stored = storedTag(etag);
  return entityTags(field).some((tag) => equal(tag, stored));
}

// The entity tags of a `#entity-tag` list, up to its first malformed member. A scan, not a split
// on commas: a comma is a valid character inside a tag's quotes.
function entityTags(field: string): EntityTag[] {
  const tags: EntityTag[] = [];
  let at = 0;
  while (at < field.length) {
    const char = field[at];
    if (char === "," || char === " " || char === "\t") {
      at++;
      continue;
    }
    const weak = field.startsWith("W/", at);
    const open = weak ? at + 2 : at;
    if (field[open] !== '"') break;
    const close = field.indexOf('"', open + 1);
    if (close === -1) break;
    tags.push({ weak, opaque: field.slice(open, close + 1) });
    at = close + 1;
    while (field[at] === " " || field[at] === "\t") at++;
    if (at < field.length && field[at] !== ",") break;
  }
  return tags;
}

// `If-Range` (§13.1.5): a strong match of the entity tag, or a date equal to the last write.
function ifRangeHolds(
  field: string,
  info: Pick<ObjectInfo, "etag">,
  modified: number,
  nowMs: number,
): boolean {
  if (field.startsWith('"') || field.startsWith('W/"')) {
    const tags = entityTags(field);
    // One tag and nothing after it: If-Range takes no list.
    if (tags.length !== 1) return false;
    const [tag] = tags;
    if (field.length !== tag.opaque.length + (tag.weak ? 2 : 0)) return false;
    return strongEqual(tag, storedTag(info.etag));
  }
  return httpDate(field, nowMs) === modified;
}

// ---- Dates (§5.6.7) ----

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})";
const IMF_FIXDATE = new RegExp(`^${DAY}, ([0-9]{2}) ([A-Za-z]{3}) ([0-9]{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ` +
    `([0-9]{2})-([A-Za-z]{3})-([0-9]{2}) ${TIME} GMT$`,
);
const ASCTIME = new RegExp(`^${DAY} ([A-Za-z]{3}) ( [0-9]|[0-9]{2}) ${TIME} ([0-9]{4})$`);

// The seconds since the epoch an HTTP-date names, or `undefined` when `field` is none.
function httpDate(field: string | undefined, nowMs: number): number | undefined {
  if (field === undefined) return undefined;
  let match = IMF_FIXDATE.exec(field);
  if (match !== null) {
    const [, day, month, year, hour, minute, second] = match;
    return utcSeconds(+year, month, +day, +hour, +minute, +second);
  }
  match = RFC_850.exec(field);
  if (match !== null) {
    const [, day, month, year, hour, minute, second] = match;
    return utcSeconds(fullYear(+year, nowMs), month, +day, +hour, +minute, +second);
  }
  match = ASCTIME.exec(field);
  if (match !== null) {
    const [, month, day, hour, minute, second, year] = match;
    return utcSeconds(+year, month, +day.trim(), +hour, +minute, +second);
  }
  return undefined;
}

// An RFC 850 two-digit year: the latest with those digits at most 50 years ahead (§5.6.7).
function fullYear(twoDigits: number, nowMs: number): number {
  const current = new Date(Number.isNaN(nowMs) ? 0 : nowMs).getUTCFullYear();
  const year = current - (current % 100) + twoDigits;
  return year > current + 50 ? year - 100 : year;
}

function utcSeconds(
  year: number,
  monthName: string,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  const month = MONTHS.indexOf(monthName);
  if (month === -1 || day < 1 || day > daysIn(year, month)) return undefined;
  // 60: a leap second, which the grammar allows; it lands on the next minute's first.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  // Not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime() / 1000;
}

function daysIn(year: number, month: number): number {
  if (month !== 1) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month];
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

// ---- Ranges (§14.1) ----

// A `Range` header as read: its positions kept as the digits sent, so that no length of them is
// rounded before it is compared.
type RangeRequest =
  | { readonly kind: "ignored" } // not bytes, malformed, invalid, or several ranges
  | { readonly kind: "int"; readonly first: string; readonly last?: string | undefined }
  | { readonly kind: "suffix"; readonly length: string };

const BYTES_UNIT = /^bytes=/i;
const INT_RANGE = /^([0-9]+)-([0-9]*)$/;
const SUFFIX_RANGE = /^-([0-9]+)$/;

function parseRange(field: string): RangeRequest {
  if (!BYTES_UNIT.test(field)) return { kind: "ignored" };
  // `1#range-spec`: empty members, and whitespace around the commas, are allowed (§5.6.1).
  const specs = field.slice("bytes=".length).split(",")
    .map(trimWhitespace)
    .filter((spec) => spec !== "");
  if (specs.length !== 1) return { kind: "ignored" };
  const spec = specs[0];
  const suffix = SUFFIX_RANGE.exec(spec);
  if (suffix !== null) return { kind: "suffix", length: suffix[1] };
  const int = INT_RANGE.exec(spec);
  if (int === null) return { kind: "ignored" };
  const [, first, last] = int;
  if (last === "") return { kind: "int", first };
  // last-pos before first-pos makes the range invalid, not unsatisfiable (§14.1.1).
  if (compareDigits(last, first) < 0) return { kind: "ignored" };
  return { kind: "int", first, last };
}

function planRange(range: RangeRequest, size: number): ResponsePlan {
  // A size no byte count can be (a store's bug) serves whole rather than a range past it.
  if (range.kind === "ignored" || !Number.isSafeInteger(size) || size < 0) return { status: 200 };
  if (range.kind === "suffix") {
    const length = position(range.length);
    if (length === 0) return { status: 416 };
    // Satisfiable, yet with no byte to send (see the module's header).
    if (size === 0) return { status: 200 };
    const offset = Math.max(0, size - length);
    return { status: 206, range: { offset, length: size - offset } };
  }
  const first = position(range.first);
  if (first >= size) return { status: 416 };
  const last = range.last === undefined ? size - 1 : Math.min(position(range.last), size - 1);
  return { status: 206, range: { offset: first, length: last - first + 1 } };
}

// A position's value: exact up to 2^53 - 1, `Infinity` past it, which is past any object's size.
function position(digits: string): number {
  const significant = digits.replace(/^0+/, "");
  if (significant.length > 16) return Infinity;
  const value = Number(significant);
  return value > Number.MAX_SAFE_INTEGER ? Infinity : value;
}

// Compares two runs of digits by the numbers they write, whatever their length.
function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+/, "");
  const y = b.replace(/^0+/, "");
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}
