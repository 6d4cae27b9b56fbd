/**
 * A `TokenClient` could not get a token: the token endpoint (or the issuer's discovery document)
 * did not answer, refused the client, or answered something unusable.
 *
 * @module
 */

/**
 * Why a token could not be had, naming the registration (as configured) and the endpoint, never
 * the client secret nor a token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TokenClientError } from "@thaw/thaw/security";
 *
 * const error = new TokenClientError(
 *   "application.yml:12: security.oauth2.client.registration.billing",
 *   "the token endpoint https://id.example.com/token answered 401 (\"invalid_client\")",
 *   401,
 * );
 * assert.equal(error.status, 401);
 * assert.match(error.message, /registration\.billing: no token: the token endpoint/);
 * ```
 */
export class TokenClientError extends Error {
  /** Where the registration is configured. */
  readonly registration: string;
  /** The endpoint's status, when it answered one. */
  readonly status: number | undefined;

  /**
   * Makes the error, its message naming the registration first.
   *
   * @param registration where the registration is configured
   * @param why what went wrong
   * @param status the endpoint's status, when it answered one
   */
  constructor(registration: string, why: string, status?: number) {
    super(`${registration}: no token: ${why}`);
    this.name = "TokenClientError";
    this.registration = registration;
    this.status = status;
  }
}
