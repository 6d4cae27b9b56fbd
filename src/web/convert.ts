import { HttpException } from "../http/http_exception.ts";
import { HttpStatus } from "../http/http_status.ts";
import type { ScalarType } from "./scalar_type.ts";

const INTEGER = /^[+-]?\d+$/;

/** A 400 whose message is shown to the client. */
export function badRequest(message: string): HttpException {
  return new HttpException(HttpStatus.BAD_REQUEST, message);
}

/** Cuts a client's text to `max` characters for an error message: no place for a megabyte. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** A client's text for an error message: at most 64 characters of it, in JSON quotes. */
export function quote(text: string): string {
  return JSON.stringify(clip(text, 64));
}

/** Compiles the conversion of a path variable, parameter or header; `label` names it. */
export function compileConverter(type: ScalarType, label: string): (text: string) => unknown {
  if (type === String) return (text) => text;
  if (type === Number) {
    return (text) => {
      const n = Number(text);
      if (!INTEGER.test(text) || !Number.isSafeInteger(n)) {
        throw badRequest(`${label} must be an integer, got ${quote(text)}`);
      }
      // As Spring's Integer.parseInt: `+5` and `007` are 5 and 7, and `-0` is 0 (not -0, which
      // `Object.is` and a division would tell from 0).
      return n === 0 ? 0 : n;
    };
  }
  if (type === Boolean) {
    return (text) => {
      const lower = text.toLowerCase();
      if (lower === "true" || lower === "1") return true;
      if (lower === "false" || lower === "0") return false;
      throw badRequest(`${label} must be true or false, got ${quote(text)}`);
    };
  }
  const convert = type as (text: string) => unknown;
  return (text) => {
    try {
      return convert(text);
    } catch (error) {
      // A converter's message may repeat the text it was given: it is clipped too.
      const why = clip(error instanceof Error ? error.message : String(error), 200);
      throw badRequest(`${label} is invalid (${quote(text)}): ${why}`);
    }
  };
}
