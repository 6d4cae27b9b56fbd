/**
 * Why a bearer token was not accepted: a closed set of reasons, for the log line and the
 * failures' metric. The token is never part of one (nor any text it carries: a claim's value
 * would let a client write into the log), so a failure can be logged and counted as it is. The
 * one text of the app's own, a validator's, is shown escaped.
 *
 * @module
 */
import { printable, shownValue } from "../shown_value.ts";

/** Every reason a token is refused for, in the order a check meets them. */
export const TOKEN_FAILURE_REASONS = [
  /** Not a compact JWS (three base64url parts, a JSON header and a JSON payload). */
  "malformed",
  /** Its `alg` is not one of the allowed ones (`none`, an HMAC one, or one not configured). */
  "algorithm-not-allowed",
  /** Its header marks as critical (`crit`) a parameter the verifier does not know (RFC 7515). */
  "unsupported-header",
  /** No key of the key set has its `kid` (after one refresh of the set, where allowed). */
  "unknown-key",
  /** The keys could not be had: the key set or the discovery document never fetched. */
  "keys-unavailable",
  /** The signature does not verify with the key. */
  "bad-signature",
  /** Its `exp` is past, beyond the clock skew. */
  "expired",
  /** Its `nbf` is ahead, beyond the clock skew. */
  "not-yet-valid",
  /** Its `iss` is not the configured issuer. */
  "wrong-issuer",
  /** Its `aud` holds none of the configured audiences. */
  "wrong-audience",
  /** A claim that must be there is missing or of the wrong type (`exp`, the principal's). */
  "missing-claim",
  /** A check of the app's own (`security({ validators })`) refused it, or could not answer. */
  "validator",
  /** The introspection endpoint says the (opaque) token is not active. */
  "inactive",
  /** The introspection endpoint could not answer: no verdict on the token (answered 503). */
  "introspection-unavailable",
] as const;

/** Why a token was refused. */
export type TokenFailureReason = typeof TOKEN_FAILURE_REASONS[number];

const DESCRIPTIONS: Readonly<Record<TokenFailureReason, string>> = {
  "malformed": "the token is not a well-formed JWT",
  "algorithm-not-allowed": "the token's algorithm is not allowed",
  "unsupported-header": "the token's header marks a parameter critical that is not known",
  "unknown-key": "no key of the issuer has the token's key id",
  "keys-unavailable": "the issuer's keys could not be fetched",
  "bad-signature": "the token's signature does not verify",
  "expired": "the token has expired",
  "not-yet-valid": "the token is not valid yet",
  "wrong-issuer": "the token is from another issuer",
  "wrong-audience": "the token is for another audience",
  "missing-claim": "the token lacks a claim it must have",
  "validator": "a validator of the app refused the token",
  "inactive": "the introspection endpoint says the token is not active",
  "introspection-unavailable": "the introspection endpoint could not check the token",
};

/** What a failure is made with besides its reason. */
export interface TokenFailureOptions extends ErrorOptions {
  /**
   * For `missing-claim`: the claim's name, as the settings or the check name it (`exp`, `iss`,
   * the principal's), never one the token chose.
   */
  readonly claim?: string | undefined;
  /** For `missing-claim`: the claim is there, but is not what it must be (a name that is no text). */
  readonly unusable?: boolean | undefined;
  /** For `validator`: which one of `security({ validators })`, from 0. */
  readonly validator?: number | undefined;
  /** For `validator`: the text it refused the token with, the client's `error_description`. */
  readonly description?: string | undefined;
}

/**
 * A token refused: its `reason`, and a message made of the reason alone (never of the token, nor
 * of what it says), and of the name of the claim that is missing. Only `keys-unavailable` has a
 * `cause`, the fetch's error (which names URLs, nothing of the token), as
 * `introspection-unavailable` has, and `validator` one that threw; jose's own errors are never kept, since they hold the token's claims.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TokenFailure } from "./token_failure.ts";
 *
 * const failure = new TokenFailure("expired");
 * assert.equal(failure.reason, "expired");
 * assert.equal(failure.message, "bearer token refused (expired): the token has expired");
 * assert.equal(
 *   new TokenFailure("missing-claim", { claim: "exp" }).message,
 *   'bearer token refused (missing-claim): the token lacks the claim "exp"',
 * );
 * ```
 */
export class TokenFailure extends Error {
  /** Why, one of {@linkcode TOKEN_FAILURE_REASONS}. */
  readonly reason: TokenFailureReason;
  /** For `missing-claim`, the claim that is missing (or not usable), where it is known. */
  readonly claim: string | undefined;
  /**
   * For `validator`, the text the app's validator refused the token with: the app's words, told
   * to the client as `error_description` (the only reason that is).
   */
  readonly description: string | undefined;

  /**
   * Creates the failure.
   *
   * @param reason why the token was refused
   * @param options the check's own error as `cause`; the claim of a `missing-claim`
   */
  constructor(reason: TokenFailureReason, options: TokenFailureOptions = {}) {
    const { claim, unusable, validator, description, ...errorOptions } = options;
    const said = reason === "validator"
      ? validatorSaid(validator, description, errorOptions.cause)
      : describe(reason, claim, unusable);
    super(`bearer token refused (${reason}): ${said}`, errorOptions);
    this.name = "TokenFailure";
    this.reason = reason;
    this.claim = reason === "missing-claim" ? claim : undefined;
    this.description = reason === "validator" ? description : undefined;
  }
}

// A validator's words, shown safely (the app may have put a claim's value in them), or why it
// could not answer.
function validatorSaid(index: number | undefined, description: string | undefined, cause: unknown) {
  const which = `validator ${index ?? "?"} of security({ validators })`;
  if (description !== undefined) return `${which}: ${shownValue(description)}`;
  const why = cause instanceof Error ? cause.message : String(cause);
  return `${which} could not answer: ${
    printable(why.length > 200 ? `${why.slice(0, 200)}...` : why)
  }`;
}

function describe(
  reason: TokenFailureReason,
  claim: string | undefined,
  unusable: boolean | undefined,
): string {
  if (reason !== "missing-claim" || claim === undefined) return DESCRIPTIONS[reason];
  // Quoted as JSON, control characters escaped: a claim's name may come from the settings.
  const name = JSON.stringify(claim);
  return unusable === true
    ? `the token's claim ${name} is missing or not a name`
    : `the token lacks the claim ${name}`;
}
