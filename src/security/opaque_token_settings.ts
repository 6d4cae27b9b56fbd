/**
 * Opaque bearer tokens (RFC 7662), read from `security.oauth2.resourceserver.opaquetoken.*`
 * (Spring Boot's keys): the introspection endpoint, the resource server's client credentials at
 * it, and how long an active token's answer is kept. Pure.
 *
 * @module
 */
import { ConfigError } from "../config/config_error.ts";
import { durationKey } from "../config/duration.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { checkUrl } from "./jwt_settings.ts";

const PREFIX = "security.oauth2.resourceserver.opaquetoken";

/** Spring Security's `SpringOpaqueTokenIntrospector` keeps nothing; Thaw keeps an answer 60 s. */
export const DEFAULT_CACHE_TTL_MS = 60_000;

/** What the introspector is made with. */
export interface OpaqueTokenSettings {
  /** The introspection endpoint. */
  readonly introspectionUri: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** How long an active token's answer is kept, never past its `exp`; `0`: none is kept. */
  readonly cacheTtlMs: number;
}

/**
 * The settings, or `undefined` when `introspection-uri` is not set. A `ConfigError` names the key
 * of what cannot be used: a URL that is not http(s), a missing client id or secret, a cache-ttl
 * that is not a duration of at most an hour.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfig } from "../config/application_config.ts";
 * import { readSettings } from "../config/thaw_settings.ts";
 * import "../config/security_keys.ts";
 * import { opaqueTokenSettings } from "./opaque_token_settings.ts";
 *
 * const read = (opaquetoken: Record<string, unknown>) =>
 *   opaqueTokenSettings(readSettings(resolveConfig({
 *     security: { oauth2: { resourceserver: { opaquetoken } } },
 *   }, () => undefined)));
 * const settings = read({
 *   "introspection-uri": "https://id.example.com/introspect",
 *   "client-id": "orders",
 *   "client-secret": "s3cret",
 * });
 * assert.equal(settings?.cacheTtlMs, 60_000);
 * assert.throws(() => read({ "introspection-uri": "https://id.example.com/introspect" }), /client-id/);
 * ```
 */
export function opaqueTokenSettings(
  settings: Pick<ThawSettings, "get" | "where">,
): OpaqueTokenSettings | undefined {
  const where = (key: string): string => settings.where(`${PREFIX}.${key}`);
  const introspectionUri = settings.get(`${PREFIX}.introspection-uri`);
  const clientId = settings.get(`${PREFIX}.client-id`);
  const clientSecret = settings.get(`${PREFIX}.client-secret`);
  if (introspectionUri === undefined) {
    const stray = clientId !== undefined
      ? "client-id"
      : clientSecret !== undefined
      ? "client-secret"
      : undefined;
    if (stray !== undefined) {
      throw new ConfigError(`${where(stray)}: set introspection-uri too, or leave it out`);
    }
    return undefined;
  }
  checkUrl(introspectionUri, where("introspection-uri"));
  for (const [key, value] of [["client-id", clientId], ["client-secret", clientSecret]] as const) {
    if (value === undefined || value === "") {
      throw new ConfigError(
        `${where(key)}: give the resource server's ${key} at the introspection endpoint ` +
          "(RFC 7662 asks the caller to authenticate)",
      );
    }
  }
  const ttl: unknown = settings.get(`${PREFIX}.cache-ttl`);
  const cacheTtlMs = ttl === undefined || ttl === null
    ? DEFAULT_CACHE_TTL_MS
    : durationKey(ttl, where("cache-ttl"), { max: 3_600_000 });
  return Object.freeze({
    introspectionUri,
    clientId: String(clientId),
    clientSecret: String(clientSecret),
    cacheTtlMs,
  });
}
