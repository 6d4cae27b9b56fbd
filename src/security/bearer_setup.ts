/**
 * The bearer tokens `security()` checks, from the configuration: JWTs of one issuer
 * (`jwt.issuer-uri`, `jwk-set-uri`, a public key), of many (`jwt.issuers`), or opaque ones
 * checked by introspection (`opaquetoken.*`), one of the three; the authenticator the guard asks,
 * and the `security` health component of what it fetches.
 *
 * @module
 */
import { ConfigError } from "../config/config_error.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { ApplicationContext } from "../context/application_context.ts";
import type { Logger } from "../web/error_responder.ts";
import {
  type BearerAuthenticator,
  IssuerAuthenticator,
  JwtAuthenticator,
  type TokenValidator,
} from "./bearer_authenticator.ts";
import {
  type JwtSettings,
  jwtSettings,
  type SharedJwtSettings,
  sharedJwtSettings,
} from "./jwt_settings.ts";
import { JwtVerifier } from "./jwt_verifier.ts";
import { type OpaqueTokenSettings, opaqueTokenSettings } from "./opaque_token_settings.ts";
import { type HealthSource, securityHealth } from "./security_health.ts";
import { TokenIntrospector } from "./token_introspector.ts";
import { trustedIssuers } from "./trusted_issuers.ts";

/** What {@linkcode bearerSetup} makes. */
export interface BearerSetup {
  /** The bearer tokens' authenticator; none when no token source is configured. */
  readonly bearer: BearerAuthenticator | undefined;
  /** Whether the tokens are opaque ones (no JWT format to document). */
  readonly opaque: boolean;
}

/**
 * Reads and checks the token settings (a `ConfigError` for JWT and opaque settings together, or
 * validators with no tokens to check), makes the authenticator, and registers the health
 * component of the key sets and the introspection endpoint on `context`.
 */
export async function bearerSetup(
  settings: ThawSettings,
  validators: readonly TokenValidator[],
  logger: Logger,
  context: ApplicationContext,
): Promise<BearerSetup> {
  const jwt = jwtSettings(settings);
  const issuers = trustedIssuers(settings);
  const opaque = opaqueTokenSettings(settings);
  if (opaque !== undefined && (jwt !== undefined || issuers !== undefined)) {
    throw new ConfigError(
      `${settings.where("security.oauth2.resourceserver.opaquetoken.introspection-uri")}: ` +
        "the bearer tokens are either JWTs (security.oauth2.resourceserver.jwt.*) or opaque " +
        "ones checked by introspection: set one",
    );
  }
  if (jwt === undefined && issuers === undefined && opaque === undefined && validators.length > 0) {
    throw new ConfigError(
      "security({ validators }): the validators check bearer tokens, and none are on: set " +
        "security.oauth2.resourceserver.jwt.issuer-uri (or jwk-set-uri, public-key, " +
        "public-key-location)",
    );
  }
  const onKeyFetchFailed = (error: Error) => logger.error(`security: ${error.message}`);
  const sources: HealthSource[] = [];
  const bearer = jwt !== undefined
    ? await jwtAuthenticator(jwt, validators, onKeyFetchFailed, sources)
    : issuers !== undefined
    ? await issuerAuthenticator(issuers, validators, onKeyFetchFailed, sources)
    : opaque !== undefined
    ? introspector(opaque, sharedJwtSettings(settings), validators, sources, settings)
    : undefined;
  // Served by the actuator's health, where the app has it; a record nobody reads otherwise.
  if (sources.length > 0) context.register(securityHealth(sources));
  return { bearer, opaque: opaque !== undefined };
}

// The verifier of one issuer's tokens; its key set, where it has one, reported by the health.
async function jwtAuthenticator(
  jwt: JwtSettings,
  validators: readonly TokenValidator[],
  onKeyFetchFailed: (error: Error) => void,
  sources: HealthSource[],
): Promise<JwtAuthenticator> {
  const verifier = await JwtVerifier.create(jwt, { onKeyFetchFailed });
  // A public key has nothing to fetch: no source to report.
  if (jwt.keys.kind === "discovery" || jwt.keys.kind === "jwk-set") {
    const url = jwt.keys.kind === "jwk-set" ? jwt.keys.url : jwt.keys.issuer;
    const check = () => verifier.health() ?? Promise.resolve({ up: true });
    sources.push({ kind: "issuer", url, check });
  }
  return new JwtAuthenticator(verifier, jwt, validators);
}

function introspector(
  opaque: OpaqueTokenSettings,
  claims: SharedJwtSettings,
  validators: readonly TokenValidator[],
  sources: HealthSource[],
  settings: ThawSettings,
): TokenIntrospector {
  const made = new TokenIntrospector(opaque, claims, validators, {
    audiences: settings.get("security.oauth2.resourceserver.jwt.audiences"),
  });
  sources.push({ kind: "introspection", url: opaque.introspectionUri, check: () => made.health() });
  return made;
}

// One verifier per trusted issuer, none of which fetches anything before a token of its issuer.
async function issuerAuthenticator(
  issuers: readonly JwtSettings[],
  validators: readonly TokenValidator[],
  onKeyFetchFailed: (error: Error) => void,
  sources: HealthSource[],
): Promise<IssuerAuthenticator> {
  const byIssuer = new Map<string, JwtAuthenticator>();
  const verifiers: JwtVerifier[] = [];
  for (const issuer of issuers) {
    const authenticator = await jwtAuthenticator(issuer, validators, onKeyFetchFailed, sources);
    verifiers.push(authenticator.verifier);
    // Each entry has its issuer: trustedIssuers reads none without.
    byIssuer.set(String(issuer.issuer), authenticator);
  }
  // Any verifier's jose reads a token's claims: the first one's does.
  const [decoder] = verifiers;
  return new IssuerAuthenticator(byIssuer, (token) => decoder.unverifiedClaims(token));
}
