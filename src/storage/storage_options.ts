// The options of `ObjectStorage`'s operations, checked before any I/O, the same for every store:
// what reaches a header (a media type, metadata) must not be able to forge another one. Pure.
import { durationOption } from "../config/duration.ts";
import { isMapping } from "../object_guards.ts";
import { shownValue } from "../shown_value.ts";
import type { ByteRange } from "./storage_driver.ts";

/** The options of `put`. */
export interface PutOptions {
  /**
   * The media type: by default a `Blob`'s own type, `text/plain; charset=utf-8` for a string,
   * else `application/octet-stream`.
   */
  readonly contentType?: string | undefined;
  /** The app's own metadata, kept with the object (`x-amz-meta-*` on S3), at most 2 KiB. */
  readonly metadata?: Readonly<Record<string, string>> | undefined;
  /** Write only when no object has the key; else a `StorageError` of kind `exists`. */
  readonly ifNoneMatch?: boolean | undefined;
  /** Aborts the write: no object is left half written. */
  readonly signal?: AbortSignal | undefined;
}

/** The options of `get`. */
export interface GetOptions {
  /** The bytes to read: `length` bytes from `offset`, to the end when `length` is left out. */
  readonly range?: ByteRange | undefined;
}

/** The options of `list`. */
export interface ListOptions {
  /** The most objects to list (all of them when left out). */
  readonly limit?: number | undefined;
}

/** The options of `signedUrl`. */
export interface SignedUrlOptions {
  /** What the URL grants: `GET` (the default) or `PUT`. */
  readonly method?: "GET" | "PUT" | undefined;
  /** How long it is valid: milliseconds or a duration (`"15m"`), 1 second to 7 days. */
  readonly expires: number | string;
}

/** User metadata's limit, S3's: names and values, in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 2048;
/** The longest signed URL's validity, S3's (SigV4): 7 days, in seconds. */
export const MAX_SIGNED_SECONDS = 604_800;

// RFC 9110's token, for a media type's type and subtype and a metadata name.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** What a media type looks like (RFC 9110): `type/subtype`, parameters after `;`. */
export const MEDIA_TYPE_SHAPE: RegExp = new RegExp(
  `^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|"[ !#-~]*"))*$`,
);
// What S3 keeps of a metadata name, lower-cased: letters, digits, `-` and `_`.
const METADATA_NAME = /^[a-z0-9][a-z0-9_-]*$/;
// deno-lint-ignore no-control-regex -- a metadata value reaches a header: no CR, LF or NUL
const CONTROL = /[\u0000-\u001f\u007f]/;

const encoder = new TextEncoder();

/** The media type `given` (checked), or `undefined`; a `TypeError` saying what is wrong. */
export function checkedContentType(given: unknown): string | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== "string" || given.length > 256 || !MEDIA_TYPE_SHAPE.test(given)) {
    throw new TypeError(
      `contentType is a media type ("image/png", "text/plain; charset=utf-8"), got ${
        shownValue(given)
      }`,
    );
  }
  return given;
}

/** The metadata `given`, names lower-cased, checked; a `TypeError` saying what is wrong. */
export function checkedMetadata(given: unknown): Readonly<Record<string, string>> {
  if (given === undefined) return {};
  if (!isMapping(given)) {
    throw new TypeError(`metadata is an object of strings, got ${shownValue(given)}`);
  }
  // A null prototype: "__proto__" is refused by the name's pattern, but "constructor" is not.
  const metadata: Record<string, string> = Object.create(null);
  let bytes = 0;
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (!METADATA_NAME.test(lower)) {
      throw new TypeError(
        `metadata names are letters, digits, "-" and "_", got ${shownValue(name)}`,
      );
    }
    if (lower in metadata) throw new TypeError(`metadata name ${shownValue(lower)} is given twice`);
    if (typeof value !== "string" || CONTROL.test(value)) {
      throw new TypeError(
        `metadata ${shownValue(name)} is a string with no control character, got ${
          shownValue(value)
        }`,
      );
    }
    metadata[lower] = value;
    bytes += encoder.encode(lower).length + encoder.encode(value).length;
  }
  if (bytes > MAX_METADATA_BYTES) {
    throw new TypeError(`metadata is at most ${MAX_METADATA_BYTES} bytes, got ${bytes}`);
  }
  return { ...metadata };
}

/** The range `given`, checked; a `TypeError` saying what is wrong. */
export function checkedRange(given: unknown): ByteRange | undefined {
  if (given === undefined) return undefined;
  if (!isMapping(given)) {
    throw new TypeError(`range is { offset, length? }, got ${shownValue(given)}`);
  }
  const { offset, length } = given as { offset?: unknown; length?: unknown };
  if (!Number.isSafeInteger(offset) || (offset as number) < 0) {
    throw new TypeError(`range.offset is a whole number, 0 or more, got ${shownValue(offset)}`);
  }
  if (length !== undefined && (!Number.isSafeInteger(length) || (length as number) < 1)) {
    throw new TypeError(`range.length is a whole number, 1 or more, got ${shownValue(length)}`);
  }
  return length === undefined
    ? { offset: offset as number }
    : { offset: offset as number, length: length as number };
}

/** A listing's limit, checked: a whole number, 1 or more, or none. */
export function checkedLimit(given: unknown): number {
  if (given === undefined) return Infinity;
  if (!Number.isSafeInteger(given) || (given as number) < 1) {
    throw new TypeError(`limit is a whole number, 1 or more, got ${shownValue(given)}`);
  }
  return given as number;
}

/** A signed URL's method and validity in whole seconds, checked. */
export function checkedSigning(
  given: unknown,
): { readonly method: "GET" | "PUT"; readonly seconds: number } {
  if (!isMapping(given)) {
    throw new TypeError(`signedUrl takes { method?, expires }, got ${shownValue(given)}`);
  }
  const { method = "GET", expires } = given as { method?: unknown; expires?: unknown };
  if (method !== "GET" && method !== "PUT") {
    throw new TypeError(`method is "GET" or "PUT", got ${shownValue(method)}`);
  }
  const ms = durationOption(expires, "expires", { min: 1000, max: MAX_SIGNED_SECONDS * 1000 });
  return { method, seconds: Math.ceil(ms / 1000) };
}
