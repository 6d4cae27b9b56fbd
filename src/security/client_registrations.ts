/**
 * The services an app calls with a token of its own (OAuth 2.0 client credentials), read from
 * `security.oauth2.client.registration.<name>` and `security.oauth2.client.provider.<name>`
 * (Spring Boot's keys). Pure: finding a provider's token endpoint by discovery is the client's.
 *
 * @module
 */
import { ConfigError } from "../config/config_error.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { shownValue } from "../shown_value.ts";
import { checkUrl } from "./jwt_settings.ts";

const REGISTRATION = "security.oauth2.client.registration";
const PROVIDER = "security.oauth2.client.provider";
const REGISTRATION_FIELDS = [
  "client-id",
  "client-secret",
  "scope",
  "token-uri",
  "provider",
  "authorization-grant-type",
] as const;
const PROVIDER_FIELDS = ["token-uri", "issuer-uri"] as const;

/** Where a registration's tokens come from. */
export type TokenEndpoint =
  /** This URL. */
  | { readonly kind: "token-uri"; readonly url: string }
  /** The `token_endpoint` of this issuer's discovery document. */
  | { readonly kind: "issuer"; readonly issuer: string };

/** One registration, checked. */
export interface ClientRegistration {
  /** Its name: the `TokenClient` bean's. */
  readonly name: string;
  /** `client-id`. */
  readonly clientId: string;
  /** `client-secret`: sent to the token endpoint alone. */
  readonly clientSecret: string;
  /** The scopes asked for; none: the server's default. */
  readonly scopes: readonly string[];
  /** Where its tokens come from. */
  readonly endpoint: TokenEndpoint;
  /** Where it is configured, for errors. */
  readonly where: string;
}

/**
 * Each registration, in the order configured (none: empty). A registration's endpoint is its own
 * `token-uri`, else that of its `provider` (by default the provider of its own name): the
 * provider's `token-uri`, else its `issuer-uri`'s discovery. A `ConfigError` names the
 * registration and the field of what cannot be used: an unknown field, a grant other than
 * `client_credentials`, a missing client id or secret, no endpoint, a URL that is not http(s).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfig } from "../config/application_config.ts";
 * import { readSettings } from "../config/thaw_settings.ts";
 * import "../config/security_keys.ts";
 * import { clientRegistrations } from "./client_registrations.ts";
 *
 * const [billing] = clientRegistrations(readSettings(resolveConfig({
 *   security: {
 *     oauth2: {
 *       client: {
 *         registration: {
 *           billing: { "client-id": "orders", "client-secret": "s3cret", scope: "billing:write" },
 *         },
 *         provider: { billing: { "issuer-uri": "https://id.example.com" } },
 *       },
 *     },
 *   },
 * }, () => undefined)));
 * assert.equal(billing.name, "billing");
 * assert.deepEqual(billing.scopes, ["billing:write"]);
 * assert.deepEqual(billing.endpoint, { kind: "issuer", issuer: "https://id.example.com" });
 * ```
 */
export function clientRegistrations(
  settings: Pick<ThawSettings, "get" | "where">,
): readonly ClientRegistration[] {
  const registrations = mapping(settings.get(REGISTRATION), settings.where(REGISTRATION));
  const providers = mapping(settings.get(PROVIDER), settings.where(PROVIDER));
  const read: ClientRegistration[] = [];
  for (const [name, entry] of Object.entries(registrations)) {
    const at = `${settings.where(REGISTRATION)}.${name}`;
    const fields = fieldsOf(entry, at, REGISTRATION_FIELDS);
    const grant = fields["authorization-grant-type"];
    if (grant !== undefined && grant !== "client_credentials") {
      throw new ConfigError(
        `${at}.authorization-grant-type: only client_credentials is taken (a service calling ` +
          `another as itself), got ${shownValue(grant)}`,
      );
    }
    const clientId = text(fields["client-id"], `${at}.client-id`, "the client id");
    const clientSecret = text(fields["client-secret"], `${at}.client-secret`, "the client secret");
    const providerName = fields.provider === undefined
      ? name
      : text(fields.provider, `${at}.provider`, "a provider's name");
    read.push(Object.freeze({
      name,
      clientId,
      clientSecret,
      scopes: scopesOf(fields.scope, `${at}.scope`),
      endpoint: endpointOf(fields, at, providers, providerName, settings.where(PROVIDER)),
      where: at,
    }));
  }
  return Object.freeze(read);
}

function endpointOf(
  fields: Record<string, unknown>,
  at: string,
  providers: Record<string, unknown>,
  providerName: string,
  providersWhere: string,
): TokenEndpoint {
  if (fields["token-uri"] !== undefined) {
    return { kind: "token-uri", url: url(fields["token-uri"], `${at}.token-uri`) };
  }
  const provider = Object.hasOwn(providers, providerName) ? providers[providerName] : undefined;
  if (provider === undefined) {
    throw new ConfigError(
      `${at}: give token-uri, or a provider (${providersWhere}.${providerName}) with token-uri ` +
        "or issuer-uri",
    );
  }
  const pat = `${providersWhere}.${providerName}`;
  const p = fieldsOf(provider, pat, PROVIDER_FIELDS);
  if (p["token-uri"] !== undefined) {
    return { kind: "token-uri", url: url(p["token-uri"], `${pat}.token-uri`) };
  }
  if (p["issuer-uri"] !== undefined) {
    return { kind: "issuer", issuer: url(p["issuer-uri"], `${pat}.issuer-uri`) };
  }
  throw new ConfigError(`${pat}: give token-uri or issuer-uri`);
}

function mapping(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigError(`${where}: give a mapping of each name to its settings`);
  }
  return value as Record<string, unknown>;
}

function fieldsOf(
  entry: unknown,
  at: string,
  known: readonly string[],
): Record<string, unknown> {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw new ConfigError(`${at}: give a mapping of ${known.join(", ")}`);
  }
  for (const field of Object.keys(entry)) {
    if (!known.includes(field)) {
      throw new ConfigError(
        `${at}: unknown key ${shownValue(field)}; the keys are ${known.join(", ")}`,
      );
    }
  }
  return entry as Record<string, unknown>;
}

// A number is taken as its text: YAML reads `client-id: 12345` as one.
function text(value: unknown, at: string, what: string): string {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string" || value === "") throw new ConfigError(`${at}: give ${what}`);
  return value;
}

function url(value: unknown, at: string): string {
  const given = text(value, at, "an http(s) URL");
  checkUrl(given, at);
  return given;
}

function scopesOf(value: unknown, at: string): readonly string[] {
  if (value === undefined || value === null) return Object.freeze([]);
  const list = typeof value === "string" ? value.split(/[\s,]+/) : value;
  if (!Array.isArray(list) || !list.every((s) => typeof s === "string")) {
    throw new ConfigError(`${at}: give a list of scopes, got ${shownValue(value)}`);
  }
  const scopes = list.filter((s) => s !== "");
  // RFC 6749, 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
  const bad = scopes.find((s) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s));
  if (bad !== undefined) throw new ConfigError(`${at}: ${shownValue(bad)} is not a scope`);
  return Object.freeze(scopes);
}
