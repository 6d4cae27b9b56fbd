// The hostile tokens the resource server must refuse, each with the reason it is refused for: one
// list for the verifier on each runtime (tests/security/jwt_verifier_test.ts) and on workerd
// (tests/edge/workerd_jwt_test.ts), so that the two cannot drift apart.
import * as jose from "jose";
import type { TokenFailureReason } from "../../src/security/token_failure.ts";
import { type SigningKey, token } from "./issuer_server.ts";

/** One hostile token: what it tries, the token, and the reason it must be refused for. */
export interface HostileToken {
  readonly what: string;
  readonly jwt: string;
  readonly reason: TokenFailureReason;
}

/** The audience the verifier of the list is configured with: the valid tokens name it. */
export const AUDIENCE = "orders";

/**
 * The hostile tokens against a verifier that trusts `rsa` (RS256, served by the issuer `iss`
 * for the audience {@linkcode AUDIENCE}, with a clock skew below an hour), at `now` (ms): every
 * token is valid but for the one thing it tries. `stranger` is a key the issuer does not serve.
 */
export async function hostileTokens(
  rsa: SigningKey,
  stranger: SigningKey,
  iss: string,
  now: number,
): Promise<HostileToken[]> {
  const seconds = Math.floor(now / 1000);
  const claims = { iss, aud: AUDIENCE };
  const signed = (payload: jose.JWTPayload) => token(rsa, { ...claims, ...payload }, now);
  const part = (value: unknown) => jose.base64url.encode(JSON.stringify(value));
  const pem = await jose.exportSPKI(rsa.publicKey);
  // HS256 keyed with what an attacker can read of the public key: the verifier must not take
  // the public key for an HMAC secret.
  const hmac = (secret: Uint8Array) =>
    token({ kid: rsa.kid, alg: "HS256", privateKey: secret }, { ...claims, sub: "mallory" }, now);
  const [head, , signature] = (await signed({})).split(".");
  return [
    { what: "expired an hour ago", jwt: await signed({ exp: seconds - 3600 }), reason: "expired" },
    {
      what: "not valid for another hour (nbf)",
      jwt: await signed({ nbf: seconds + 3600 }),
      reason: "not-yet-valid",
    },
    {
      what: "another issuer",
      jwt: await signed({ iss: "http://evil.example" }),
      reason: "wrong-issuer",
    },
    { what: "another audience", jwt: await signed({ aud: "billing" }), reason: "wrong-audience" },
    {
      what: "alg none",
      jwt: `${part({ alg: "none", typ: "JWT" })}.${
        part({ ...claims, sub: "mallory", exp: seconds + 60 })
      }.`,
      reason: "algorithm-not-allowed",
    },
    {
      what: "HS256 keyed with the public key's PEM",
      jwt: await hmac(new TextEncoder().encode(pem)),
      reason: "algorithm-not-allowed",
    },
    {
      what: "HS256 keyed with the public JWK",
      jwt: await hmac(new TextEncoder().encode(JSON.stringify(rsa.jwk))),
      reason: "algorithm-not-allowed",
    },
    {
      what: "HS256 keyed with the modulus' bytes",
      jwt: await hmac(jose.base64url.decode(rsa.jwk.n!)),
      reason: "algorithm-not-allowed",
    },
    {
      // RFC 7515 4.1.11: a `crit` parameter the verifier does not understand refuses the token.
      what: "a critical header parameter the verifier does not know (crit)",
      jwt: await new jose.SignJWT({ ...claims, sub: "mallory", exp: seconds + 60 })
        .setProtectedHeader({ alg: rsa.alg, kid: rsa.kid, crit: ["urn:x-thaw"], "urn:x-thaw": 1 })
        .sign(rsa.privateKey, { crit: { "urn:x-thaw": true } }),
      reason: "unsupported-header",
    },
    {
      what: "a kid the issuer does not have",
      jwt: await token({ ...rsa, kid: "unknown-kid" }, claims, now),
      reason: "unknown-key",
    },
    {
      what: "another key signing under the issuer's kid",
      jwt: await token({ ...stranger, kid: rsa.kid }, claims, now),
      reason: "bad-signature",
    },
    {
      what: "the payload changed after signing",
      jwt: `${head}.${part({ ...claims, sub: "root", exp: seconds + 3600 })}.${signature}`,
      reason: "bad-signature",
    },
    { what: "not a JWT", jwt: "not.a.token", reason: "malformed" },
  ];
}
