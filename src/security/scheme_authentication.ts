/**
 * What the schemes other than the bearer token (HTTP Basic, API keys) give the entry point: the
 * caller's name and authorities, and the scheme, from which it makes the same `Authentication` a
 * verified token gives (these schemes have no claims); or no credentials of the scheme at all; or
 * a refusal with a reason from a closed set, for the log line and the failures' metric. A reason
 * never holds what the client sent (a user name, a key), so it can be logged and counted as it is.
 *
 * @module
 */

/** The schemes of this module. */
export type CredentialScheme = "basic" | "api-key";

/** Every reason credentials are refused for. */
export const CREDENTIAL_FAILURE_REASONS = [
  /** The header is not one the scheme's grammar allows (bad base64, no `:`, a control character, too long). */
  "malformed",
  /** Basic: the `UserDetailsService` knows no such user (checked against a dummy hash all the same). */
  "unknown-user",
  /** Basic: the password does not derive the user's hash. */
  "wrong-password",
  /** Basic: the password is right, but the user is not `enabled`. */
  "disabled",
  /** Basic: the user's stored hash is of no form Thaw reads (`{bcrypt}`, plain text, cut). */
  "unreadable-hash",
  /** API key: no configured key is the one given. */
  "unknown-key",
  /**
   * Basic: every place to check a password was taken (a flood of them): not checked, answered
   * 503 with `Retry-After` at once.
   */
  "busy",
] as const;

/** Why credentials were refused. */
export type CredentialFailureReason = typeof CREDENTIAL_FAILURE_REASONS[number];

/** A caller the scheme recognised. */
export interface SchemeAuthentication {
  /** Which scheme recognised them. */
  readonly scheme: CredentialScheme;
  /** Basic: the `username` of the `UserDetails` found; API key: the configured key's name. */
  readonly name: string;
  /** As given by the `UserDetails` or the key's configuration, each once, in their order. */
  readonly authorities: readonly string[];
}

/** What one request's credentials come to. */
export type SchemeResult =
  | { readonly kind: "authenticated"; readonly authentication: SchemeAuthentication }
  /** The request carries none of this scheme's credentials: another scheme may have it. */
  | { readonly kind: "missing" }
  | {
    readonly kind: "refused";
    readonly scheme: CredentialScheme;
    readonly reason: CredentialFailureReason;
  };

/** The result of a scheme's refusal. */
export function refused(scheme: CredentialScheme, reason: CredentialFailureReason): SchemeResult {
  return { kind: "refused", scheme, reason };
}

/** The result of a recognised caller (authorities copied and frozen: the bean's list may change). */
export function authenticated(
  scheme: CredentialScheme,
  name: string,
  authorities: readonly string[],
): SchemeResult {
  return {
    kind: "authenticated",
    authentication: Object.freeze({
      scheme,
      name,
      authorities: Object.freeze([...new Set(authorities)]),
    }),
  };
}
