/**
 * From a bearer token to its caller: the token verified (a JWT here), the app's own checks of its
 * claims (`security({ validators })`), then the caller's name and authorities as the settings map
 * them. The guard knows only {@linkcode BearerAuthenticator}: a token of another kind (many
 * issuers, an opaque one) is another implementation of it.
 *
 * @module
 */
import { authoritiesOf } from "./authorities.ts";
import { hasControlCharacter } from "./basic_credentials.ts";
import type { JwtSettings } from "./jwt_settings.ts";
import { type JwtVerifier, MAX_TOKEN_LENGTH } from "./jwt_verifier.ts";
import type { Authentication } from "./security_context.ts";
import { TokenFailure } from "./token_failure.ts";

/**
 * An app's own check of a verified token's claims: `undefined` lets the token through, a text
 * refuses it (`invalid_token`, the text as its `error_description`).
 */
export type TokenValidator = (claims: Readonly<Record<string, unknown>>) => string | undefined;

/** Checks a bearer token and makes its caller, or rejects with a `TokenFailure`. */
export interface BearerAuthenticator {
  authenticate(token: string): Promise<Authentication>;
}

/**
 * Runs `validators` in order on `claims`; the first that answers a text refuses the token with
 * it. A validator that throws, or answers anything but a text or `undefined` (a promise: they run
 * at once), refuses the token too, the log saying which one and why: a check that cannot answer
 * lets nothing through.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runValidators } from "./bearer_authenticator.ts";
 *
 * const tenant = (claims: Readonly<Record<string, unknown>>) =>
 *   claims.tenant === "acme" ? undefined : "the token is for another tenant";
 * runValidators([tenant], { tenant: "acme" });
 * assert.throws(
 *   () => runValidators([tenant], { tenant: "other" }),
 *   (error: unknown) =>
 *     error instanceof Error && (error as { description?: string }).description ===
 *       "the token is for another tenant",
 * );
 * ```
 */
export function runValidators(
  validators: readonly TokenValidator[],
  claims: Readonly<Record<string, unknown>>,
): void {
  for (let i = 0; i < validators.length; i++) {
    let answer: unknown;
    try {
      answer = validators[i](claims);
    } catch (error) {
      throw new TokenFailure("validator", { validator: i, cause: error });
    }
    if (answer === undefined) continue;
    if (typeof answer !== "string") {
      throw new TokenFailure("validator", {
        validator: i,
        cause: new TypeError(
          `it answered ${
            answer instanceof Promise ? "a promise" : typeof answer
          }: give a text (why the token is refused) or undefined, at once`,
        ),
      });
    }
    throw new TokenFailure("validator", { validator: i, description: answer });
  }
}

/**
 * A JWT of one of many trusted issuers: the token's `iss`, read before anything is verified,
 * picks the issuer whose keys check it; a token naming no trusted issuer is refused
 * (`wrong-issuer`) before any key is fetched, so that no token makes the app fetch from a host of
 * its choosing. The chosen issuer's verifier checks `iss` again with the signature.
 */
export class IssuerAuthenticator implements BearerAuthenticator {
  readonly #byIssuer: ReadonlyMap<string, BearerAuthenticator>;
  readonly #decode: (token: string) => Readonly<Record<string, unknown>>;

  /**
   * @param byIssuer each trusted issuer's `iss`, and the authenticator of its tokens
   * @param decode reads a token's claims without verifying it (jose's `decodeJwt`)
   */
  constructor(
    byIssuer: ReadonlyMap<string, BearerAuthenticator>,
    decode: (token: string) => Readonly<Record<string, unknown>>,
  ) {
    this.#byIssuer = byIssuer;
    this.#decode = decode;
  }

  authenticate(token: string): Promise<Authentication> {
    if (token.length > MAX_TOKEN_LENGTH) return Promise.reject(new TokenFailure("malformed"));
    let iss: unknown;
    try {
      iss = this.#decode(token).iss;
    } catch {
      return Promise.reject(new TokenFailure("malformed"));
    }
    const issuer = typeof iss === "string" ? this.#byIssuer.get(iss) : undefined;
    if (issuer === undefined) {
      return Promise.reject(
        iss === undefined
          ? new TokenFailure("missing-claim", { claim: "iss" })
          : new TokenFailure("wrong-issuer"),
      );
    }
    return issuer.authenticate(token);
  }
}

/** A JWT checked against one issuer's settings. */
export class JwtAuthenticator implements BearerAuthenticator {
  /** The verifier of the tokens' signatures and standard claims. */
  readonly verifier: JwtVerifier;
  readonly #jwt: JwtSettings;
  readonly #validators: readonly TokenValidator[];

  /**
   * @param verifier checks the token's signature and standard claims
   * @param jwt the settings: the principal's claim and the authorities' mapping
   * @param validators the app's own checks, run after the verifier's
   */
  constructor(
    verifier: JwtVerifier,
    jwt: JwtSettings,
    validators: readonly TokenValidator[] = [],
  ) {
    this.verifier = verifier;
    this.#jwt = jwt;
    this.#validators = validators;
  }

  async authenticate(token: string): Promise<Authentication> {
    const { claims } = await this.verifier.verify(token);
    return callerOf(claims, this.#jwt, this.#validators);
  }
}

/**
 * The caller of a verified token's `claims`: the app's validators first, then its name (the
 * principal's claim, a non-empty text without control characters) and its authorities.
 */
export function callerOf(
  claims: Readonly<Record<string, unknown>>,
  jwt: Pick<JwtSettings, "principalClaim" | "authoritiesClaim" | "authorityPrefix" | "rolesClaim">,
  validators: readonly TokenValidator[],
): Authentication {
  runValidators(validators, claims);
  const name = Object.hasOwn(claims, jwt.principalClaim) ? claims[jwt.principalClaim] : undefined;
  if (typeof name !== "string" || name === "" || hasControlCharacter(name)) {
    throw new TokenFailure("missing-claim", { claim: jwt.principalClaim, unusable: true });
  }
  return { name, authorities: authoritiesOf(claims, jwt), claims };
}
