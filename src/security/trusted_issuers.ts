/**
 * Many issuers (`security.oauth2.resourceserver.jwt.issuers`, Spring's
 * `JwtIssuerAuthenticationManagerResolver.fromTrustedIssuers`): each entry one issuer with its own
 * keys and audiences, every other setting shared. Pure: reading the list; the verifiers are made
 * from what it gives.
 *
 * @module
 */
import { ConfigError } from "../config/config_error.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { shownValue } from "../shown_value.ts";
import { checkUrl, type JwtSettings, sharedJwtSettings } from "./jwt_settings.ts";

const KEY = "security.oauth2.resourceserver.jwt.issuers";
const FIELDS = ["issuer-uri", "issuer", "jwk-set-uri", "audiences"] as const;
// The keys of one issuer's key source, which the list replaces.
const SINGLE_SOURCES = [
  "security.oauth2.resourceserver.jwt.issuer-uri",
  "security.oauth2.resourceserver.jwt.jwk-set-uri",
  "security.oauth2.resourceserver.jwt.public-key",
  "security.oauth2.resourceserver.jwt.public-key-location",
] as const;

/**
 * The settings of each trusted issuer, in the order listed, or `undefined` when `issuers` is not
 * set. An entry is `{ issuer-uri }` (its keys found by discovery) or `{ issuer, jwk-set-uri }`,
 * with `audiences` of its own (else the shared `audiences`). A `ConfigError` names the entry and
 * the field: an entry of neither shape, a URL that is not http(s), an issuer listed twice, and
 * `issuers` beside a single issuer's key source (`issuer-uri`, `jwk-set-uri`, `public-key`,
 * `public-key-location`), which would leave it unclear which tokens count.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfig } from "../config/application_config.ts";
 * import { readSettings } from "../config/thaw_settings.ts";
 * import "../config/security_keys.ts";
 * import { trustedIssuers } from "./trusted_issuers.ts";
 *
 * const read = (issuers: unknown) =>
 *   trustedIssuers(readSettings(resolveConfig({
 *     security: { oauth2: { resourceserver: { jwt: { issuers } } } },
 *   }, () => undefined)));
 * const [a, b] = read([
 *   { "issuer-uri": "https://a.example.com" },
 *   { issuer: "https://b.example.com", "jwk-set-uri": "https://b.example.com/keys", audiences: ["orders"] },
 * ]) ?? [];
 * assert.deepEqual(a.keys, { kind: "discovery", issuer: "https://a.example.com" });
 * assert.equal(b.issuer, "https://b.example.com");
 * assert.deepEqual(b.audiences, ["orders"]);
 * assert.throws(() => read([{ issuer: "https://c.example.com" }]), /issuers\[0\]: give issuer-uri/);
 * ```
 */
export function trustedIssuers(
  settings: Pick<ThawSettings, "get" | "where">,
): readonly JwtSettings[] | undefined {
  const given: unknown = settings.get(KEY);
  if (given === undefined || given === null) return undefined;
  const where = settings.where(KEY);
  if (!Array.isArray(given) || given.length === 0) {
    throw new ConfigError(
      `${where}: give a list of issuers, each { issuer-uri } or { issuer, jwk-set-uri }, ` +
        "with audiences of its own if need be",
    );
  }
  const single = SINGLE_SOURCES.find((key) => settings.get(key) !== undefined);
  if (single !== undefined) {
    throw new ConfigError(
      `${where} and ${settings.where(single)}: give one: the list names every issuer trusted ` +
        "(put this one in it)",
    );
  }
  const shared = sharedJwtSettings(settings);
  const audiences = settings.get("security.oauth2.resourceserver.jwt.audiences");
  const read: JwtSettings[] = [];
  for (const [i, entry] of given.entries()) {
    const issuer = entrySettings(entry, `${where}[${i}]`, shared, audiences);
    const same = read.findIndex((other) => other.issuer === issuer.issuer);
    if (same >= 0) {
      throw new ConfigError(
        `${where}[${i}]: the issuer ${shownValue(issuer.issuer)} is listed at ${where}[${same}] ` +
          "too: list each once",
      );
    }
    read.push(issuer);
  }
  return Object.freeze(read);
}

function entrySettings(
  entry: unknown,
  at: string,
  shared: ReturnType<typeof sharedJwtSettings>,
  sharedAudiences: readonly string[],
): JwtSettings {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw new ConfigError(`${at}: give { issuer-uri } or { issuer, jwk-set-uri }`);
  }
  const fields = entry as Record<string, unknown>;
  for (const field of Object.keys(fields)) {
    if (!(FIELDS as readonly string[]).includes(field)) {
      throw new ConfigError(
        `${at}: unknown key ${shownValue(field)}; the keys are ${FIELDS.join(", ")}`,
      );
    }
  }
  const text = (field: string): string | undefined => {
    const value = fields[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value === "") {
      throw new ConfigError(`${at}.${field}: give a URL, got ${shownValue(value)}`);
    }
    checkUrl(value, `${at}.${field}`);
    return value;
  };
  const issuerUri = text("issuer-uri");
  const issuer = text("issuer");
  const jwkSetUri = text("jwk-set-uri");
  const audiences = audiencesOf(fields.audiences, `${at}.audiences`) ?? sharedAudiences;
  const common = { ...shared, audiences: Object.freeze([...audiences]) };
  if (issuerUri !== undefined && issuer === undefined && jwkSetUri === undefined) {
    return Object.freeze({
      ...common,
      issuer: issuerUri,
      keys: { kind: "discovery" as const, issuer: issuerUri },
    });
  }
  if (issuerUri === undefined && issuer !== undefined && jwkSetUri !== undefined) {
    return Object.freeze({
      ...common,
      issuer,
      keys: { kind: "jwk-set" as const, url: jwkSetUri },
    });
  }
  throw new ConfigError(
    `${at}: give issuer-uri (its keys found by discovery), or issuer and jwk-set-uri; ` +
      `got ${Object.keys(fields).join(", ") || "nothing"}`,
  );
}

function audiencesOf(value: unknown, at: string): readonly string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || !list.every((a) => typeof a === "string" && a !== "")) {
    throw new ConfigError(`${at}: give a list of audiences, got ${shownValue(value)}`);
  }
  // An empty list would check no audience, the shared ones dropped without a word.
  if (list.length === 0) {
    throw new ConfigError(
      `${at}: give one audience at least, or leave it out for the shared jwt.audiences`,
    );
  }
  return list;
}
