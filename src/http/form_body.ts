// A form body, as `RequestParam` and `RequestPart` read it: the fields of an
// `application/x-www-form-urlencoded` body, or the parts of a `multipart/form-data` one. Nothing
// is copied into an object keyed by what the client sent: fields are looked up by the names the
// binders give, so `__proto__` or `constructor[prototype]` is a name like any other.
import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";
import type { MultipartPart } from "./multipart.ts";
import { formValues } from "./query_string.ts";

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
}

/** A request without a body: no fields. */
export const EMPTY_FORM_BODY: FormBody = Object.freeze({
  param: () => undefined,
  part: () => undefined,
});

const lenient = new TextDecoder();
const strict = new TextDecoder("utf-8", { fatal: true });
// deno-lint-ignore no-control-regex -- the range of ASCII starts at NUL
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * The text of a urlencoded body, its bytes past ASCII written as their percent-encoding: the
 * query rules then apply as they are. A URL's query holds no raw bytes past ASCII (a URL parser
 * encodes them), a body may; read this way, UTF-8 sent raw binds as sent, and other bytes are the
 * same 400 naming the parameter as their percent-encoding would be, never U+FFFD.
 */
function urlEncodedText(bytes: Uint8Array): string {
  const text = lenient.decode(bytes);
  if (!NOT_ASCII.test(text)) return text;
  let out = "";
  let from = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte < 0x80) continue;
    out += `${lenient.decode(bytes.subarray(from, i))}%${byte.toString(16).toUpperCase()}`;
    from = i + 1;
  }
  return out + lenient.decode(bytes.subarray(from));
}

/**
 * The fields of an `application/x-www-form-urlencoded` body, read by the query's rules
 * (`formValues`): `+` is a space, percent-encoded bytes are UTF-8, bytes that are not are a 400
 * naming the parameter asked for, and only that one.
 */
export function urlEncodedBody(bytes: Uint8Array): FormBody {
  const text = urlEncodedText(bytes);
  return {
    param: (name) => formValues(text, name, true)[0],
    part: () => undefined,
  };
}

/**
 * The parts of a `multipart/form-data` body. As a parameter, a part is read only when it has no
 * filename (a file is no parameter, as in Spring), its bytes as UTF-8.
 */
export function multipartBody(parts: readonly MultipartPart[]): FormBody {
  return {
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
