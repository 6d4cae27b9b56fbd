/**
 * The resource server's settings, read from `security.oauth2.resourceserver.jwt.*` (Spring Boot's
 * keys) and checked once, before any token is: where the keys come from, what a token must say,
 * and which algorithms may sign it. Pure: reading a key file or a key set is the verifier's.
 *
 * @module
 */
import { keyOrigin } from "../config/application_config.ts";
import { shownValue } from "../shown_value.ts";
import { ConfigError } from "../config/config_error.ts";
import { durationKey } from "../config/duration.ts";
import { ASYMMETRIC_ALGORITHMS } from "../config/security_keys.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { nearestName } from "../config/thaw_settings.ts";
import { definedFields } from "../defined_fields.ts";

const PREFIX = "security.oauth2.resourceserver.jwt";

/** Where the verifier finds the issuer's public keys. */
export type JwtKeySource =
  /** The issuer's discovery document names its key set (`jwks_uri`). */
  | { readonly kind: "discovery"; readonly issuer: string }
  /** A key set (JWKS) fetched from this URL. */
  | { readonly kind: "jwk-set"; readonly url: string }
  /** One public key, PEM text. */
  | { readonly kind: "public-key"; readonly pem: string }
  /** One public key, PEM text in this file (read by the verifier, where there are files). */
  | { readonly kind: "public-key-location"; readonly path: string };

/** What the resource server checks, read once from its keys. */
export interface JwtSettings {
  /** Where the keys come from. */
  readonly keys: JwtKeySource;
  /** `issuer-uri`: every token's `iss` must be it; none: `iss` is not checked. */
  readonly issuer?: string;
  /** A token's `aud` must hold one of these; empty: `aud` is not checked. */
  readonly audiences: readonly string[];
  /** The algorithms a token may be signed with: asymmetric ones only. */
  readonly algorithms: readonly string[];
  /** The claim naming the caller (`sub`). */
  readonly principalClaim: string;
  /** The claim of the authorities; none: `scope`, else `scp`. */
  readonly authoritiesClaim?: string;
  /** Prefixed to each authority of that claim (`SCOPE_`). */
  readonly authorityPrefix: string;
  /** A claim of roles, each prefixed `ROLE_`; none: no roles. */
  readonly rolesClaim?: string;
  /** How far `exp` and `nbf` may be off the clock, in milliseconds. */
  readonly clockSkewMs: number;
}

/** Spring Security's `JwtTimestampValidator` allows 60 s. */
export const DEFAULT_CLOCK_SKEW_MS = 60_000;

/** The most skew taken: a day would make `exp` meaningless for most tokens. */
const MAX_CLOCK_SKEW_MS = 3_600_000;

/**
 * The resource server's settings, or `undefined` when none of `issuer-uri`, `jwk-set-uri`,
 * `public-key-location` and `public-key` is set (no JWT is checked). A `ConfigError` names the key
 * of a value that cannot be used: two key sources at once, a URL that is not http(s), an algorithm
 * that is not an asymmetric one (`none`, `HS256`), a clock skew that is not a duration.
 * `issuer-uri` beside another source checks the tokens' `iss` against it, the keys coming from
 * the other, where both are set in one place. Set in two places (a profile's file over
 * `application.yml`, an environment variable), the later one most likely meant to replace the
 * other, which it cannot unset: refused, as every token of the new source's issuer would be
 * refused for its `iss`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfig } from "../config/application_config.ts";
 * import { readSettings } from "../config/thaw_settings.ts";
 * import "../config/security_keys.ts";
 * import { jwtSettings } from "./jwt_settings.ts";
 *
 * const read = (jwt: Record<string, unknown>) =>
 *   jwtSettings(readSettings(resolveConfig({
 *     security: { oauth2: { resourceserver: { jwt } } },
 *   }, () => undefined)));
 * const settings = read({ "issuer-uri": "https://id.example.com" });
 * assert.deepEqual(settings?.keys, { kind: "discovery", issuer: "https://id.example.com" });
 * assert.equal(settings?.clockSkewMs, 60_000);
 * assert.throws(
 *   () => read({ "issuer-uri": "https://id.example.com", "jws-algorithms": ["HS256"] }),
 *   /jws-algorithms: HS256 is refused/,
 * );
 * ```
 */
export function jwtSettings(
  settings: Pick<ThawSettings, "get" | "where" | "config">,
): JwtSettings | undefined {
  const where = (key: string): string => settings.where(`${PREFIX}.${key}`);
  const origin = (key: string): string => keyOrigin(settings.config, `${PREFIX}.${key}`).source;
  const issuer = settings.get(`${PREFIX}.issuer-uri`);
  const jwkSetUri = settings.get(`${PREFIX}.jwk-set-uri`);
  const location = settings.get(`${PREFIX}.public-key-location`);
  const pem = settings.get(`${PREFIX}.public-key`);
  if (issuer !== undefined) checkUrl(issuer, where("issuer-uri"));
  if (jwkSetUri !== undefined) checkUrl(jwkSetUri, where("jwk-set-uri"));
  const given = [
    ["jwk-set-uri", jwkSetUri],
    ["public-key-location", location],
    ["public-key", pem],
  ].filter(([, value]) => value !== undefined).map(([key]) => key as string);
  if (given.length > 1) {
    throw new ConfigError(
      `${where(given[0])} and ${where(given[1])}: give one of ${given.join(", ")}: each is ` +
        `where the keys come from${unsetHint(given[0], given[1], origin, settings.config.source)}`,
    );
  }
  if (issuer !== undefined && given.length === 1 && origin("issuer-uri") !== origin(given[0])) {
    throw new ConfigError(
      `${where("issuer-uri")} and ${where(given[0])}: give one of issuer-uri, ${given[0]}: each ` +
        `is where the keys come from (to check the tokens' iss against issuer-uri with the keys ` +
        `of ${given[0]}, set both in one file)` +
        unsetHint("issuer-uri", given[0], origin, settings.config.source),
    );
  }
  let keys: JwtKeySource;
  if (jwkSetUri !== undefined) keys = { kind: "jwk-set", url: jwkSetUri };
  else if (location !== undefined) keys = { kind: "public-key-location", path: location };
  else if (pem !== undefined) keys = { kind: "public-key", pem };
  else if (issuer !== undefined) keys = { kind: "discovery", issuer };
  else return undefined;
  return Object.freeze({
    ...sharedJwtSettings(settings),
    keys,
    audiences: settings.get(`${PREFIX}.audiences`),
    ...definedFields({ issuer }),
  });
}

/** What every issuer's tokens are checked and read by: all the settings but the issuer's own. */
export type SharedJwtSettings = Omit<JwtSettings, "keys" | "issuer" | "audiences">;

/**
 * The settings every issuer shares (`jws-algorithms`, `principal-claim-name`, the authorities'
 * mapping, `clock-skew`), each checked: a `ConfigError` names the key of a value that cannot be
 * used.
 */
export function sharedJwtSettings(
  settings: Pick<ThawSettings, "get" | "where">,
): SharedJwtSettings {
  const where = (key: string): string => settings.where(`${PREFIX}.${key}`);
  const authoritiesClaim = settings.get(`${PREFIX}.authorities-claim-name`);
  const rolesClaim = settings.get(`${PREFIX}.roles-claim-name`);
  return {
    algorithms: jwsAlgorithms(settings.get(`${PREFIX}.jws-algorithms`), where("jws-algorithms")),
    principalClaim: settings.get(`${PREFIX}.principal-claim-name`),
    authorityPrefix: settings.get(`${PREFIX}.authority-prefix`),
    clockSkewMs: clockSkew(settings.get(`${PREFIX}.clock-skew`), where("clock-skew")),
    ...definedFields({ authoritiesClaim, rolesClaim }),
  };
}

/**
 * How to leave one of two keys set in different places out: a profile's file adds its keys to
 * those of the files before it, and `~` (null) is what unsets one there. The key to unset is the
 * one of `application.yml` (`base`), where one is.
 */
function unsetHint(
  a: string,
  b: string,
  origin: (key: string) => string,
  base: string,
): string {
  if (origin(a) === origin(b)) return "";
  const unset = origin(b) === base ? b : a;
  return `. A profile's file keeps the keys of the files before it: unset the one it replaces ` +
    `there (${unset}: ~)`;
}

/**
 * The algorithms as given, each checked: an asymmetric one of jose's names, never `none` nor an
 * HMAC one (their key is the shared secret, which a public key is not), in the order given,
 * repeats dropped. A `ConfigError` at `where` otherwise.
 */
export function jwsAlgorithms(given: readonly string[], where: string): readonly string[] {
  if (given.length === 0) throw new ConfigError(`${where}: give at least one algorithm`);
  for (const alg of given) {
    if (ASYMMETRIC_ALGORITHMS.includes(alg)) continue;
    if (alg.toLowerCase() === "none") {
      throw new ConfigError(`${where}: none is refused: an unsigned token proves nothing`);
    }
    if (/^HS\d+$/i.test(alg)) {
      throw new ConfigError(
        `${where}: ${alg} is refused: the keys are public, and an HMAC signature made with a ` +
          `public key proves nothing; use an asymmetric one (${ASYMMETRIC_ALGORITHMS.join(", ")})`,
      );
    }
    const nearest = nearestName(alg, ASYMMETRIC_ALGORITHMS);
    throw new ConfigError(
      `${where}: unknown algorithm ${shownValue(alg)}; ` +
        (nearest === undefined
          ? `the algorithms are ${ASYMMETRIC_ALGORITHMS.join(", ")}`
          : `did you mean ${nearest}?`),
    );
  }
  return Object.freeze([...new Set(given)]);
}

/** The skew in ms: {@linkcode DEFAULT_CLOCK_SKEW_MS} when unset; a `ConfigError` at `where`. */
export function clockSkew(value: unknown, where: string): number {
  if (value === undefined || value === null) return DEFAULT_CLOCK_SKEW_MS;
  return durationKey(value, where, { max: MAX_CLOCK_SKEW_MS });
}

/** A `ConfigError` at `where` unless `value` is an http(s) URL. */
export function checkUrl(value: string, where: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new ConfigError(`${where}: give an http(s) URL, got ${shownValue(value)}`);
  }
}
