/**
 * `testTokens()`: a key pair made for one test run, the configuration that makes an app trust it,
 * and bearer tokens signed with it, so that a test calls `app.fetch` as a caller in one line on
 * every runtime, with no identity provider running. The private key never leaves the object.
 *
 * @module
 */
import { importOptional } from "../runtime/optional_module.ts";

// jose is an optional peer, as for the resource server: loaded by `testTokens()`, so that
// importing the entry point without it works.
type Jose = typeof import("jose");

/** What {@linkcode testTokens} takes. */
export interface TestTokenOptions {
  /** The tokens' `iss`, checked by the app (`issuer-uri`); none: no `iss`, none checked. */
  readonly issuer?: string;
  /** The tokens' `aud`, checked by the app (`audiences`); none: no `aud`, none checked. */
  readonly audience?: string;
  /** The claim that holds the caller's roles (`roles-claim-name`): `roles` unless given. */
  readonly rolesClaim?: string;
}

/**
 * The claims of one test token. `scope` (a list or space-separated text) gives `SCOPE_`
 * authorities, `roles` `ROLE_` ones; any other claim goes as it is, `exp`, `nbf` and `iat` too
 * (seconds since 1970), so that a test can make an expired token.
 */
export interface TestClaims {
  /** The caller's name: `user` unless given. */
  readonly sub?: string;
  /** The scopes (`SCOPE_` authorities): a list, or a space-separated text as issuers send it. */
  readonly scope?: string | readonly string[];
  /** The roles (`ROLE_` authorities), in the claim `rolesClaim` names. */
  readonly roles?: readonly string[];
  /** Any other claim, as it is. */
  readonly [claim: string]: unknown;
}

/** How long a test token is valid unless its claims say otherwise, in seconds. */
const LIFETIME_S = 300;

// ES256: the quickest of the asymmetric algorithms to make keys for and to sign with, and one
// every runtime's WebCrypto has.
const ALGORITHM = "ES256";

/**
 * The configuration {@linkcode TestTokens.config} holds, to merge into an app's. A type, not an
 * interface: it is given where a `Record<string, unknown>` is taken.
 */
export type TestTokenConfig = {
  readonly security: {
    readonly oauth2: {
      readonly resourceserver: {
        readonly jwt: Readonly<Record<string, string | readonly string[]>>;
      };
    };
  };
};

/** A key pair for tests, and the tokens it signs: made by {@linkcode testTokens}. */
export class TestTokens {
  /**
   * Merge into the app's `config`: the resource server's keys (`public-key`, the algorithm, the
   * roles claim, and `issuer-uri` and `audiences` where given). It replaces the app's own key
   * source: give it to a configuration without one (a test's), not on top of `issuer-uri` set in
   * another file.
   */
  readonly config: TestTokenConfig;
  readonly #privateKey: CryptoKey;
  readonly #options: TestTokenOptions;
  readonly #jose: Pick<Jose, "SignJWT">;

  /** Use {@linkcode testTokens}, which makes the key pair. */
  constructor(
    privateKey: CryptoKey,
    publicKeyPem: string,
    options: TestTokenOptions,
    jose: Pick<Jose, "SignJWT">,
  ) {
    this.#jose = jose;
    this.#privateKey = privateKey;
    this.#options = options;
    const jwt: Record<string, string | readonly string[]> = {
      "public-key": publicKeyPem,
      "jws-algorithms": [ALGORITHM],
      "roles-claim-name": options.rolesClaim ?? "roles",
    };
    if (options.issuer !== undefined) jwt["issuer-uri"] = options.issuer;
    if (options.audience !== undefined) jwt.audiences = [options.audience];
    this.config = Object.freeze({
      security: { oauth2: { resourceserver: { jwt: Object.freeze(jwt) } } },
    });
  }

  /** A signed token (the compact JWT) of `claims`, valid for five minutes unless `exp` says. */
  async token(claims: TestClaims = {}): Promise<string> {
    const { scope, roles, sub = "user", ...rest } = claims;
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = { iat: now, exp: now + LIFETIME_S, sub, ...rest };
    if (scope !== undefined) payload.scope = typeof scope === "string" ? scope : scope.join(" ");
    if (roles !== undefined) payload[this.#options.rolesClaim ?? "roles"] = [...roles];
    if (this.#options.issuer !== undefined) payload.iss ??= this.#options.issuer;
    if (this.#options.audience !== undefined) payload.aud ??= this.#options.audience;
    return await new this.#jose.SignJWT(payload).setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
      .sign(this.#privateKey);
  }

  /** The `Authorization` header's value for `claims`: `Bearer <token>`. */
  async bearer(claims: TestClaims = {}): Promise<string> {
    return `Bearer ${await this.token(claims)}`;
  }
}

/**
 * A key pair made now, the configuration that makes an app trust it, and tokens it signs: a test
 * acts as any caller without an identity provider. For tests only: the key is made at each call.
 *
 * @example A caller with a scope, in one line
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { security, testTokens } from "@thaw/thaw/security";
 *
 * const tokens = await testTokens();
 * const app = await bootstrap({ config: tokens.config, security: security() });
 * const answer = await app.fetch(
 *   new Request("http://localhost/nowhere", {
 *     headers: { authorization: await tokens.bearer({ sub: "ann", scope: "orders:read" }) },
 *   }),
 * );
 * // Let in (no such route): 404, not 401.
 * assert.equal(answer.status, 404);
 * // An expired token is refused.
 * const expired = await app.fetch(
 *   new Request("http://localhost/nowhere", {
 *     headers: { authorization: await tokens.bearer({ exp: Math.floor(Date.now() / 1000) - 3600 }) },
 *   }),
 * );
 * assert.equal(expired.status, 401);
 * await app.close();
 * ```
 */
export async function testTokens(options: TestTokenOptions = {}): Promise<TestTokens> {
  // The private key stays unextractable: nothing can read it out of the object. A public key is
  // always extractable.
  const jose = await importOptional(() => import("jose"), {
    packages: ["jose"],
    neededBy: "testTokens()",
    what: "jose, which makes the key pair and signs the tokens",
  });
  const { privateKey, publicKey } = await jose.generateKeyPair(ALGORITHM);
  return new TestTokens(privateKey, await jose.exportSPKI(publicKey), options, jose);
}
