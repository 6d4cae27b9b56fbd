/**
 * The credentials of an `Authorization: Basic` header, read strictly (RFC 7617): the scheme
 * `Basic` in any case, spaces, then the canonical base64 of a UTF-8 `user-id:password`, where the
 * user-id holds no `:` (the password may), and neither holds a control character. Anything else is
 * `malformed`, never an exception (an exception's message would carry the header into a log).
 * Pure.
 *
 * @module
 */
import { quotable } from "./bearer_answer.ts";
import { fromBase64 } from "./password_hash.ts";

/** What the header gives: credentials, none (another scheme, or no header), or a malformed one. */
export type BasicCredentials =
  | { readonly kind: "credentials"; readonly username: string; readonly password: string }
  | { readonly kind: "missing" }
  | { readonly kind: "malformed" };

/** Longer headers are refused unread: no user name and password come near 4 KiB. */
export const MAX_BASIC_HEADER_LENGTH = 4096;

const BASIC = /^basic(?: +|$)/i;
// RFC 5234's CTL: what RFC 7617 forbids in both parts.
// deno-lint-ignore no-control-regex -- the control characters are what this refuses
const CONTROL = /[\x00-\x1F\x7F]/;
const MISSING: BasicCredentials = Object.freeze({ kind: "missing" });
const MALFORMED: BasicCredentials = Object.freeze({ kind: "malformed" });
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The credentials of an `Authorization` header's value (`null`: no header).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { basicCredentials } from "./basic_credentials.ts";
 *
 * assert.deepEqual(basicCredentials("Basic " + btoa("ada:pa:ss")), {
 *   kind: "credentials",
 *   username: "ada",
 *   password: "pa:ss",
 * });
 * assert.deepEqual(basicCredentials("Bearer abc"), { kind: "missing" });
 * assert.deepEqual(basicCredentials("Basic not base64!"), { kind: "malformed" });
 * ```
 */
export function basicCredentials(header: string | null): BasicCredentials {
  if (header === null) return MISSING;
  const scheme = BASIC.exec(header);
  if (scheme === null) return MISSING;
  if (header.length > MAX_BASIC_HEADER_LENGTH) return MALFORMED;
  const bytes = fromBase64(header.slice(scheme[0].length));
  if (bytes === undefined || bytes.length === 0) return MALFORMED;
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return MALFORMED;
  }
  const colon = text.indexOf(":");
  if (colon <= 0 || CONTROL.test(text)) return MALFORMED;
  return { kind: "credentials", username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/**
 * Whether a text holds a control character (RFC 5234's CTL: `\x00`-`\x1F`, `\x7F`), which
 * RFC 7617 forbids in a user name: a name with a CR or an LF would write a line of its own
 * wherever it is logged. A token's name is refused alike.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasControlCharacter } from "./basic_credentials.ts";
 *
 * assert.equal(hasControlCharacter("ada\r\nadmin"), true);
 * assert.equal(hasControlCharacter("Adélaïde"), false);
 * ```
 */
export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

/**
 * The challenge of a 401 for HTTP Basic (RFC 7617, 2.1): `Basic realm="<realm>", charset="UTF-8"`,
 * the realm's `"` and `\` escaped and what a header cannot carry (controls, non-ASCII) left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { basicChallenge } from "./basic_credentials.ts";
 *
 * assert.equal(basicChallenge('orders "EU"'), 'Basic realm="orders \\"EU\\"", charset="UTF-8"');
 * ```
 */
export function basicChallenge(realm: string): string {
  return `Basic realm="${quotable(realm)}", charset="UTF-8"`;
}
