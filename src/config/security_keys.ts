/**
 * The keys of the JWT resource server (`security.oauth2.resourceserver.jwt.*`, Spring Boot's
 * names), declared by the security modules rather than in the core's table, as the tasks' are: an
 * app that does not import them neither carries them nor has them checked, and one that does has
 * every key under `security` checked (a typo is refused with the key it was meant as).
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/**
 * The signature algorithms a public key can verify: RSA, RSA-PSS, ECDSA and EdDSA, as jose names
 * them. `none` and the HMAC ones (`HS256`...) are refused whatever the configuration says: with a
 * public key, an HMAC signature proves only that the signer read the key (anyone can).
 */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = Object.freeze([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);

/** The resource server's keys. */
export const SECURITY_KEYS = {
  "security.oauth2.resourceserver.jwt.issuer-uri": {
    type: "string",
  },
  "security.oauth2.resourceserver.jwt.jwk-set-uri": {
    type: "string",
  },
  "security.oauth2.resourceserver.jwt.public-key-location": {
    type: "string",
  },
  "security.oauth2.resourceserver.jwt.public-key": {
    type: "string",
  },
  "security.oauth2.resourceserver.jwt.audiences": {
    type: "list",
    default: [],
  },
  "security.oauth2.resourceserver.jwt.jws-algorithms": {
    type: "list",
    default: ASYMMETRIC_ALGORITHMS,
  },
  "security.oauth2.resourceserver.jwt.principal-claim-name": {
    type: "string",
    default: "sub",
  },
  "security.oauth2.resourceserver.jwt.authorities-claim-name": {
    type: "string",
  },
  "security.oauth2.resourceserver.jwt.authority-prefix": {
    type: "string",
    default: "SCOPE_",
  },
  "security.oauth2.resourceserver.jwt.roles-claim-name": {
    type: "string",
  },
  // Opaque tokens (RFC 7662), Spring Boot's names: checked by the introspection endpoint.
  "security.oauth2.resourceserver.opaquetoken.introspection-uri": {
    type: "string",
  },
  "security.oauth2.resourceserver.opaquetoken.client-id": {
    type: "string",
  },
  "security.oauth2.resourceserver.opaquetoken.client-secret": {
    type: "string",
  },
  // A duration, read by the opaque tokens' settings: how long an active token's answer is kept.
  "security.oauth2.resourceserver.opaquetoken.cache-ttl": {
    type: "feature",
  },
  // Calls to other services with a token of their own (client credentials), Spring Boot's names:
  // each registration by name, read and checked by the client registrations' settings.
  "security.oauth2.client.registration": {
    type: "feature",
  },
  "security.oauth2.client.provider": {
    type: "feature",
  },
  // Path patterns of routes any caller may reach, checked by the security feature.
  "security.permit-all": {
    type: "list",
    default: [],
  },
  // Each trusted issuer: `{ issuer-uri }` or `{ issuer, jwk-set-uri }`, with `audiences`; read and
  // checked by the trusted issuers' settings.
  "security.oauth2.resourceserver.jwt.issuers": {
    type: "feature",
  },
  // A duration, read by the settings of the resource server.
  "security.oauth2.resourceserver.jwt.clock-skew": {
    type: "feature",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(SECURITY_KEYS);
