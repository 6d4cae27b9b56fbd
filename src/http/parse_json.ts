import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";

/** The deepest nesting of arrays and objects a request body may have. */
export const MAX_REQUEST_BODY_DEPTH = 512;

// `__proto__` reaches a prototype through any assignment; `constructor.prototype` through the
// usual recursive merge (`target.constructor` is `Object`, its `prototype` the one every object
// has). Both are dropped, as secure-json-parse (Fastify's parser) refuses them by default: the
// `constructor` key only when its value holds a `prototype`, so a body's own `constructor` field
// of any other shape is kept.
function dropPrototypeKeys(key: string, value: unknown): unknown {
  if (key === "__proto__") return undefined;
  if (
    key === "constructor" && typeof value === "object" && value !== null &&
    Object.hasOwn(value, "prototype")
  ) {
    return undefined;
  }
  return value;
}

function malformed(why: string): HttpException {
  return new HttpException(HttpStatus.BAD_REQUEST, `Malformed JSON in request body: ${why}`);
}

// Counts nesting outside strings. A text shorter than two brackets per level cannot be too deep,
// so the common small body is never scanned.
function tooDeep(text: string): boolean {
  if (text.length <= 2 * MAX_REQUEST_BODY_DEPTH) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_REQUEST_BODY_DEPTH) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Parses a request body as JSON, for `RequestBody()` and `HttpRequest.json()` alike:
 * - every `__proto__` key is removed, and every `constructor` key whose value holds a `prototype`
 *   key, at any depth and however they are spelled (`\u005f_proto__`), so no later merge or
 *   assignment can reach a prototype;
 * - nesting deeper than {@linkcode MAX_REQUEST_BODY_DEPTH} is refused before parsing, so that neither
 *   the parser, the key filter nor the application's own recursion can overflow the stack.
 *
 * Anything it refuses is a 400 `HttpException`.
 */
export function parseJson(text: string): unknown {
  if (tooDeep(text)) throw malformed(`nested deeper than ${MAX_REQUEST_BODY_DEPTH} levels`);
  try {
    // The reviver is slow, so it runs only when the text could hold such a key (spelled out, or
    // hidden behind a `\u` escape).
    return text.includes("__proto__") || text.includes("constructor") || text.includes("\\u")
      ? JSON.parse(text, dropPrototypeKeys)
      : JSON.parse(text);
  } catch (error) {
    throw malformed((error as Error).message);
  }
}
