// A form body, as `RequestParam` and `RequestPart` read it: the fields of an
// `application/x-www-form-urlencoded` body, or the parts of a `multipart/form-data` one. Nothing
// is copied into an object keyed by what the client sent: fields are looked up, in a `Map` or a
// list, by the names the binders give, so `__proto__` or `constructor[prototype]` is a name like
// any other.
import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";
import type { MultipartPart } from "./multipart.ts";
import { formFields } from "./query_string.ts";

/** The fields of a form body, read by name. */
export interface FormBody {
  /**
   * The first value of the field `name` as text (a urlencoded field, or a multipart part without
   * a filename), or `undefined`.
   *
   * @throws {HttpException} 400 naming the parameter when its bytes are not UTF-8.
   */
  param(name: string): string | undefined;
  /** The first multipart part named `name`, or `undefined` (always, for a urlencoded body). */
  part(name: string): MultipartPart | undefined;
  /**
   * Deletes the temporary files of its parts, once the answer is made; absent when it has none to
   * delete.
   */
  readonly release?: () => Promise<void>;
}

/** A request without a body: no fields. */
export const EMPTY_FORM_BODY: FormBody = Object.freeze({
  param: () => undefined,
  part: () => undefined,
});

// `ignoreBOM`: a byte-order mark the client sent is text, as any other character is (a decoder
// would otherwise drop one that leads a part, or a body, without a word).
const ascii = /* @__PURE__ */ new TextDecoder("utf-8", { ignoreBOM: true });
const strict = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const HEX_DIGITS = /* @__PURE__ */ new TextEncoder().encode("0123456789ABCDEF");

/**
 * The text of a urlencoded body, its bytes past ASCII written as their percent-encoding: the
 * query rules then apply as they are. A URL's query holds no raw bytes past ASCII (a URL parser
 * encodes them), a body may; read this way, UTF-8 sent raw binds as sent, and other bytes are the
 * same 400 naming the parameter as their percent-encoding would be, never U+FFFD. A leading
 * byte-order mark is such bytes too: part of the first name, as `%EF%BB%BF` would be.
 *
 * Written in one pass into bytes that are all ASCII, then decoded once: a body of many bytes past
 * ASCII costs no call a byte.
 */
function urlEncodedText(bytes: Uint8Array): string {
  let past = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] >= 0x80) past++;
  if (past === 0) return ascii.decode(bytes);
  const out = new Uint8Array(bytes.length + 2 * past);
  let at = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte < 0x80) out[at++] = byte;
    else {
      out[at++] = 0x25; // %
      out[at++] = HEX_DIGITS[byte >> 4];
      out[at++] = HEX_DIGITS[byte & 15];
    }
  }
  return ascii.decode(out);
}

/**
 * The fields of an `application/x-www-form-urlencoded` body, read by the query's rules
 * (`formFields`): `+` is a space, percent-encoded bytes are UTF-8, bytes that are not are a 400
 * naming the parameter asked for, and only that one. The body is split once, at the first field
 * read, for every parameter of the request.
 */
export function urlEncodedBody(bytes: Uint8Array): FormBody {
  const field = formFields(urlEncodedText(bytes));
  return { param: field, part: () => undefined };
}

/**
 * The parts of a `multipart/form-data` body. As a parameter, a part is read only when it has no
 * filename (a file is no parameter, as in Spring), its bytes as UTF-8.
 */
export function multipartBody(
  parts: readonly MultipartPart[],
  release?: () => Promise<void>,
): FormBody {
  return {
    ...(release === undefined ? {} : { release }),
    param(name) {
      const part = parts.find((p) => p.name === name && p.filename === undefined);
      if (part === undefined) return undefined;
      try {
        return strict.decode(part.body);
      } catch {
        throw new HttpException(
          HttpStatus.BAD_REQUEST,
          `Request parameter '${name}' is not valid UTF-8`,
        );
      }
    },
    part: (name) => parts.find((p) => p.name === name),
  };
}
