/**
 * API keys: a secret in a request header (`security.api-keys.header-name`, `X-API-Key` by
 * default) that is one of the keys configured under `security.api-keys.keys`, each by a name (the
 * caller's name) with its authorities. The configured keys are kept as SHA-256 digests only, and a
 * presented key is compared as its digest with every one of them, in constant time: neither which
 * bytes match, nor the key's length, nor which key matched shows in the time. No key is ever in a
 * message: `security.api-keys` is a name configuration dumps and errors mask as a secret's.
 *
 * @module
 */
import { shownValue } from "../shown_value.ts";
import { ConfigError } from "../config/config_error.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { isMapping } from "../object_guards.ts";
import { sameBytes } from "./password_hash.ts";
import { authenticated, refused, type SchemeResult } from "./scheme_authentication.ts";

const PREFIX = "security.api-keys";

/** The least length of a configured key: shorter ones are guessable. */
export const MIN_API_KEY_LENGTH = 16;

/** A presented key longer than this is refused without a digest made of it. */
export const MAX_API_KEY_LENGTH = 1024;

// Printable ASCII but the space: what a header carries as it is, and nothing a
// header's decoding (Latin-1 bytes, trimmed spaces) could read two ways.
const KEY_TEXT = /^[\x21-\x7E]+$/;

/** One configured key, as the settings read it: its text, then only its digest is kept. */
export interface ApiKeyEntry {
  /** The caller's name when the key is presented. */
  readonly name: string;
  /** The key. */
  readonly key: string;
  /** The caller's authorities. */
  readonly authorities: readonly string[];
}

/** What `security.api-keys.*` says: the header, and the keys (none: API keys are off). */
export interface ApiKeySettings {
  /** The request header, lower case. */
  readonly header: string;
  readonly keys: readonly ApiKeyEntry[];
}

/**
 * The API keys' settings, or `undefined` when no key is configured. A `ConfigError` names the
 * key of a wrong entry (never its value, when it is a key): not a mapping of `key` and
 * `authorities`, a key shorter than {@linkcode MIN_API_KEY_LENGTH} or holding what is not
 * printable ASCII, the same key under two names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfig } from "../config/application_config.ts";
 * import { readSettings } from "../config/thaw_settings.ts";
 * import "../config/security_scheme_keys.ts";
 * import { apiKeySettings } from "./api_keys.ts";
 *
 * const read = (apiKeys: Record<string, unknown>) =>
 *   apiKeySettings(readSettings(resolveConfig({ security: { "api-keys": apiKeys } }, () => undefined)));
 * const settings = read({ keys: { batch: { key: "k-0123456789abcdef", authorities: ["ROLE_BATCH"] } } });
 * assert.equal(settings?.header, "x-api-key");
 * assert.deepEqual(settings?.keys.map((k) => k.name), ["batch"]);
 * assert.throws(() => read({ keys: { batch: { key: "short" } } }), /at least 16 characters/);
 * ```
 */
export function apiKeySettings(
  settings: Pick<ThawSettings, "get" | "where">,
): ApiKeySettings | undefined {
  const header = settings.get(`${PREFIX}.header-name`);
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(header)) {
    throw new ConfigError(
      `${settings.where(`${PREFIX}.header-name`)}: not a header name, got ${shownValue(header)}`,
    );
  }
  const given: unknown = settings.get(`${PREFIX}.keys`);
  if (given === undefined || given === null) return undefined;
  const where = settings.where(`${PREFIX}.keys`);
  if (!isMapping(given)) {
    throw new ConfigError(`${where}: give a mapping of each key's name to its key and authorities`);
  }
  const keys: ApiKeyEntry[] = [];
  for (const [name, entry] of Object.entries(given)) {
    const at = `${where}.${name}`;
    if (!isMapping(entry)) {
      throw new ConfigError(`${at}: give a mapping of key and authorities`);
    }
    for (const field of Object.keys(entry)) {
      if (field !== "key" && field !== "authorities") {
        throw new ConfigError(
          `${at}: unknown key ${JSON.stringify(field)}; the keys are key, authorities`,
        );
      }
    }
    const { key, authorities = [] } = entry;
    if (typeof key !== "string" || key.length < MIN_API_KEY_LENGTH || !KEY_TEXT.test(key)) {
      throw new ConfigError(
        `${at}.key: give a key of at least ${MIN_API_KEY_LENGTH} characters, printable ASCII ` +
          `without spaces (a random one: openssl rand -base64 32)`,
      );
    }
    if (key.length > MAX_API_KEY_LENGTH) {
      throw new ConfigError(`${at}.key: give a key of at most ${MAX_API_KEY_LENGTH} characters`);
    }
    const list = typeof authorities === "string" ? [authorities] : authorities;
    if (!Array.isArray(list) || !list.every((a) => typeof a === "string" && a !== "")) {
      throw new ConfigError(`${at}.authorities: give a list of authorities (ROLE_BATCH)`);
    }
    const same = keys.find((other) => other.key === key);
    if (same !== undefined) {
      throw new ConfigError(`${at}.key: the same key as ${where}.${same.name}: give each its own`);
    }
    keys.push(Object.freeze({ name, key, authorities: Object.freeze([...list]) }));
  }
  if (keys.length === 0) return undefined;
  return Object.freeze({ header: header.toLowerCase(), keys: Object.freeze(keys) });
}

interface StoredKey {
  readonly name: string;
  readonly digest: Uint8Array;
  readonly authorities: readonly string[];
}

/**
 * Checks the API key header of requests against the configured keys. Made once per app
 * ({@linkcode ApiKeyAuthenticator.create}, which digests the keys and keeps only the digests);
 * {@linkcode ApiKeyAuthenticator.authenticate} is the per-request check.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiKeyAuthenticator } from "./api_keys.ts";
 *
 * const keys = await ApiKeyAuthenticator.create({
 *   header: "x-api-key",
 *   keys: [{ name: "batch", key: "k-0123456789abcdef", authorities: ["ROLE_BATCH"] }],
 * });
 * assert.equal(keys.header, "x-api-key");
 * assert.deepEqual(await keys.authenticate("k-0123456789abcdef"), {
 *   kind: "authenticated",
 *   authentication: { scheme: "api-key", name: "batch", authorities: ["ROLE_BATCH"] },
 * });
 * assert.deepEqual(await keys.authenticate("k-0123456789abcdeX"), {
 *   kind: "refused",
 *   scheme: "api-key",
 *   reason: "unknown-key",
 * });
 * assert.deepEqual(await keys.authenticate(null), { kind: "missing" });
 * ```
 */
export class ApiKeyAuthenticator {
  /** The header the key is read from, lower case. */
  readonly header: string;
  readonly #keys: readonly StoredKey[];

  private constructor(header: string, keys: readonly StoredKey[]) {
    this.header = header;
    this.#keys = keys;
  }

  /** An authenticator of `settings`' keys. */
  static async create(settings: ApiKeySettings): Promise<ApiKeyAuthenticator> {
    const keys: StoredKey[] = [];
    for (const { name, key, authorities } of settings.keys) {
      keys.push({ name, digest: await digestOf(key), authorities });
    }
    return new ApiKeyAuthenticator(settings.header.toLowerCase(), keys);
  }

  /**
   * The caller of the header's value (`null`: no such header; the entry point reads
   * {@linkcode ApiKeyAuthenticator.header}): `missing` when absent or empty, `malformed` when it
   * is not printable ASCII or is longer than {@linkcode MAX_API_KEY_LENGTH}, `unknown-key` when
   * it is no configured key.
   */
  async authenticate(value: string | null): Promise<SchemeResult> {
    if (value === null || value === "") return { kind: "missing" };
    if (value.length > MAX_API_KEY_LENGTH || !KEY_TEXT.test(value)) {
      return refused("api-key", "malformed");
    }
    const digest = await digestOf(value);
    let found: StoredKey | undefined;
    // Every key compared, none skipped once one matched: the time says nothing of which it was.
    for (const key of this.#keys) {
      if (sameBytes(digest, key.digest) && found === undefined) found = key;
    }
    return found === undefined
      ? refused("api-key", "unknown-key")
      : authenticated("api-key", found.name, found.authorities);
  }
}

async function digestOf(key: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
}
