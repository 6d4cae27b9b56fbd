/**
 * The bearer token of a request's `Authorization` header, as Spring Security's
 * `DefaultBearerTokenResolver` reads it: the scheme `Bearer` in any case, one space, then a
 * `b64token` (RFC 6750, 2.1: letters, digits and `-._~+/`, then `=` padding). A header of another
 * scheme is no token at all (Basic is another scheme's to check); a `Bearer` header whose token is
 * not a `b64token` is an invalid request, answered 400 without reading it further. Pure.
 *
 * @module
 */

/** What the header gives: a token, none, or a malformed one. */
export type BearerToken =
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "missing" }
  | { readonly kind: "invalid-request" };

const BEARER = /^bearer /i;
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MISSING: BearerToken = Object.freeze({ kind: "missing" });
const INVALID: BearerToken = Object.freeze({ kind: "invalid-request" });

/**
 * The token of an `Authorization` header's value (`null`: no header).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bearerToken } from "./bearer_token.ts";
 *
 * assert.deepEqual(bearerToken("Bearer eyJhbGciOi.eyJzdWIi.c2ln"), {
 *   kind: "token",
 *   token: "eyJhbGciOi.eyJzdWIi.c2ln",
 * });
 * assert.deepEqual(bearerToken("Basic dXNlcjpwYXNz"), { kind: "missing" });
 * assert.deepEqual(bearerToken("Bearer a b"), { kind: "invalid-request" });
 * ```
 */
export function bearerToken(header: string | null): BearerToken {
  if (header === null || !BEARER.test(header)) return MISSING;
  const token = header.slice(7);
  return B64TOKEN.test(token) ? { kind: "token", token } : INVALID;
}
