/**
 * The resource server's check of a bearer token: a JWT signed by the configured issuer with an
 * allowed asymmetric algorithm, for one of the configured audiences, within its `nbf` and `exp`
 * (give or take the clock skew). jose verifies (Web Crypto, on every runtime, workerd included);
 * it is loaded here, when the first verifier is made, so an app without a resource server never
 * loads it.
 *
 * @module
 */
import { definedFields } from "../defined_fields.ts";
import type { Clock } from "../runtime/clock.ts";
import { importOptional } from "../runtime/optional_module.ts";
import type { JwtSettings } from "./jwt_settings.ts";
import {
  type JsonFetcher,
  type KeyLookup,
  RemoteKeySet,
  type SourceHealth,
} from "./remote_key_set.ts";
import { TokenFailure, type TokenFailureReason } from "./token_failure.ts";

type Jose = typeof import("jose");

/** The key of a token: from the key set, or the one public key for its `alg`. */
type VerifyKey = KeyLookup | ((header: { alg?: string }) => Promise<CryptoKey>);

/** A token that verified: its protected header and its claims. */
export interface VerifiedToken {
  /** The protected header (`alg`, `kid`, `typ`). */
  readonly header: Readonly<Record<string, unknown>>;
  /** The claims (`sub`, `iss`, `aud`, `exp`, `scope`...). */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** What a verifier is made with besides its settings: for tests, and for the key set's log line. */
export interface JwtVerifierOptions {
  /** Time, for `exp`/`nbf` (`now`) and the key set's cooldown and age (`monotonic`). */
  readonly clock?: Pick<Clock, "now" | "monotonic">;
  /** The fetch of the discovery document and the key set. */
  readonly fetch?: typeof fetch;
  /** The least time between two fetches of the key set, in ms (30 s; less before any keys). */
  readonly cooldownMs?: number;
  /** How long a fetched key set is used before it is refetched in the background, in ms (5 min). */
  readonly maxAgeMs?: number;
  /** How long one fetch may take, in ms (5 s). */
  readonly timeoutMs?: number;
  /** Told of a fetch of the keys that failed (the keys already fetched are kept). */
  readonly onKeyFetchFailed?: (error: Error) => void;
  /** Whether a stale key set is refetched within the request: on workerd only, by default. */
  readonly staleInRequest?: boolean;
  /** Reads `public-key-location`: `node:fs/promises`' `readFile` when not given. */
  readonly readFile?: (path: string) => Promise<string>;
}

/** A longer token is refused before it is parsed: no issuer's token is near 64 KiB. */
export const MAX_TOKEN_LENGTH = 65_536;

/**
 * Verifies bearer tokens against the settings of `security.oauth2.resourceserver.jwt.*`. Made
 * once per app ({@linkcode JwtVerifier.create}); {@linkcode JwtVerifier.verify} is the per-request
 * check. A refused token is a {@linkcode TokenFailure} whose reason says why, and which never
 * holds the token.
 */
export class JwtVerifier {
  readonly #jose: Jose;
  readonly #key: VerifyKey;
  readonly #keySet: RemoteKeySet | undefined;
  readonly #options: Parameters<Jose["jwtVerify"]>[2];
  readonly #now: () => number;

  private constructor(
    jose: Jose,
    key: VerifyKey,
    settings: JwtSettings,
    now: () => number,
    keySet?: RemoteKeySet,
  ) {
    this.#jose = jose;
    this.#key = key;
    this.#keySet = keySet;
    this.#now = now;
    this.#options = {
      algorithms: [...settings.algorithms],
      clockTolerance: settings.clockSkewMs / 1000,
      requiredClaims: ["exp"],
      ...definedFields({
        issuer: settings.issuer,
        audience: settings.audiences.length === 0 ? undefined : [...settings.audiences],
      }),
    };
  }

  /**
   * A verifier for `settings`: loads jose (a `MissingPackageError` when it is not installed),
   * reads and imports a public key where one is configured (an `Error` naming the key's setting
   * when it cannot be), and otherwise fetches nothing yet: the discovery document and the key set
   * are fetched on the first token.
   */
  static async create(
    settings: JwtSettings,
    options: JwtVerifierOptions = {},
  ): Promise<JwtVerifier> {
    const jose = await importOptional(() => import("jose"), {
      packages: ["jose"],
      neededBy: "the JWT resource server (security.oauth2.resourceserver.jwt)",
      what: "jose, which verifies the tokens",
    });
    const clock = options.clock ?? { now: () => Date.now(), monotonic: () => performance.now() };
    const source = settings.keys;
    let key: VerifyKey;
    let keySet: RemoteKeySet | undefined;
    if (source.kind === "public-key" || source.kind === "public-key-location") {
      const pem = source.kind === "public-key"
        ? source.pem
        : await readKeyFile(source.path, options.readFile);
      key = await publicKey(jose, pem, settings.algorithms, source.kind);
    } else {
      keySet = new RemoteKeySet(
        jose,
        source.kind === "jwk-set" ? () => Promise.resolve(source.url) : discover(source.issuer),
        {
          clock,
          ...definedFields({
            fetch: options.fetch,
            cooldownMs: options.cooldownMs,
            maxAgeMs: options.maxAgeMs,
            timeoutMs: options.timeoutMs,
            onFetchFailed: options.onKeyFetchFailed,
            staleInRequest: options.staleInRequest,
          }),
        },
      );
      key = keySet.lookup;
    }
    return new JwtVerifier(jose, key, settings, () => clock.now(), keySet);
  }

  /**
   * The token's header and claims when it verifies; otherwise rejects with a
   * {@linkcode TokenFailure} (never another error: what jose throws is mapped to a reason, and
   * not kept, since its errors carry the token's claims).
   */
  async verify(token: string): Promise<VerifiedToken> {
    if (token.length > MAX_TOKEN_LENGTH) throw new TokenFailure("malformed");
    try {
      const { payload, protectedHeader } = await this.#jose.jwtVerify(
        token,
        this.#key as KeyLookup,
        { ...this.#options, currentDate: new Date(this.#now()) },
      );
      return { header: protectedHeader, claims: payload };
    } catch (error) {
      if (error instanceof TokenFailure) throw error;
      if ((error as { code?: unknown }).code === "ERR_JWKS_MULTIPLE_MATCHING_KEYS") {
        return await this.#eachKey(token, error as AsyncIterable<CryptoKey>);
      }
      throw failureOf(error);
    }
  }

  /**
   * The state of the issuer's key set for the health check (see `RemoteKeySet.health`);
   * `undefined` for a public key, which has nothing to fetch.
   */
  health(): Promise<SourceHealth> | undefined {
    return this.#keySet?.health();
  }

  /**
   * The token's claims as it says them, nothing verified: for choosing which issuer's verifier
   * checks it, never for trusting it. Throws on a token that is not a JWT.
   */
  unverifiedClaims(token: string): Readonly<Record<string, unknown>> {
    return this.#jose.decodeJwt(token);
  }

  /**
   * A token without a `kid` that several keys of the set fit (two RSA keys while the issuer
   * rotates): each is tried, as Spring's key selector does; jose leaves that to its caller.
   */
  async #eachKey(token: string, keys: AsyncIterable<CryptoKey>): Promise<VerifiedToken> {
    const options = { ...this.#options, currentDate: new Date(this.#now()) };
    for await (const key of keys) {
      try {
        const { payload, protectedHeader } = await this.#jose.jwtVerify(token, key, options);
        return { header: protectedHeader, claims: payload };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== "ERR_JWS_SIGNATURE_VERIFICATION_FAILED") {
          throw failureOf(error);
        }
      }
    }
    throw new TokenFailure("bad-signature");
  }
}

/**
 * The failure of one of jose's errors, naming the claim a `missing-claim` lacks: jose names one
 * of those it was told to require (`exp`, `iss`, `aud`), never one of the token's.
 */
function failureOf(error: unknown): TokenFailure {
  const reason = reasonOf(error);
  const { claim } = (error ?? {}) as { claim?: unknown };
  return reason === "missing-claim" && typeof claim === "string"
    ? new TokenFailure(reason, { claim })
    : new TokenFailure(reason);
}

/** The reason of one of jose's errors (by its `code`, which every jose error has). */
export function reasonOf(error: unknown): TokenFailureReason {
  const { code, claim, reason, message } = (error ?? {}) as {
    code?: unknown;
    claim?: unknown;
    reason?: unknown;
    message?: unknown;
  };
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "expired";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      if (reason === "missing") return "missing-claim";
      if (reason !== "check_failed") return "malformed";
      return claim === "nbf"
        ? "not-yet-valid"
        : claim === "iss"
        ? "wrong-issuer"
        : claim === "aud"
        ? "wrong-audience"
        : "malformed";
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return "algorithm-not-allowed";
    case "ERR_JOSE_NOT_SUPPORTED":
      // jose says so for an unknown `crit` parameter as for an unknown algorithm.
      return /Extension Header Parameter/.test(String(message))
        ? "unsupported-header"
        : "algorithm-not-allowed";
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "bad-signature";
    case "ERR_JWKS_NO_MATCHING_KEY":
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return "unknown-key";
    default:
      // ERR_JWS_INVALID, ERR_JWT_INVALID, and a key of the wrong type for the header's `alg`.
      return "malformed";
  }
}

/**
 * The `jwks_uri` of the issuer's discovery document (`{issuer}/.well-known/openid-configuration`),
 * whose `issuer` must be the configured one (OpenID Connect Discovery 1.0, section 4.3: else a
 * document served elsewhere could name keys of its own).
 */
function discover(issuer: string): (fetcher: JsonFetcher) => Promise<string> {
  return async (fetcher) => {
    const url = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    const document = await fetcher(url, "the discovery document");
    const { issuer: named, jwks_uri: jwksUri } = (document ?? {}) as Record<string, unknown>;
    if (named !== issuer) {
      throw new Error(
        `${url}: the discovery document names the issuer ${
          JSON.stringify(named)
        }, not ${issuer} (security.oauth2.resourceserver.jwt.issuer-uri)`,
      );
    }
    if (typeof jwksUri !== "string" || !/^https?:\/\//.test(jwksUri)) {
      throw new Error(`${url}: the discovery document has no http(s) jwks_uri`);
    }
    return jwksUri;
  };
}

async function readKeyFile(
  path: string,
  readFile: ((path: string) => Promise<string>) | undefined,
): Promise<string> {
  const where = `security.oauth2.resourceserver.jwt.public-key-location (${path})`;
  try {
    if (readFile !== undefined) return await readFile(path);
    const fs = await import("node:fs/promises");
    return await fs.readFile(path.replace(/^file:/, ""), "utf8");
  } catch (error) {
    throw new Error(`${where}: cannot be read: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * The key function of a single public key: the PEM imported for each allowed algorithm its key
 * type fits (an RSA key for RS* and PS*), refused at start when it fits none.
 */
async function publicKey(
  jose: Jose,
  pem: string,
  algorithms: readonly string[],
  setting: string,
): Promise<(header: { alg?: string }) => Promise<CryptoKey>> {
  const keys = new Map<string, CryptoKey>();
  for (const alg of algorithms) {
    try {
      keys.set(alg, await jose.importSPKI(pem.trim(), alg));
    } catch {
      // The key is not of this algorithm's type: tokens signed with it find no key.
    }
  }
  if (keys.size === 0) {
    throw new Error(
      `security.oauth2.resourceserver.jwt.${setting}: not a PEM public key (-----BEGIN PUBLIC ` +
        `KEY-----) of any algorithm of jws-algorithms (${algorithms.join(", ")})`,
    );
  }
  return (header) => {
    const key = header.alg === undefined ? undefined : keys.get(header.alg);
    if (key === undefined) return Promise.reject(new TokenFailure("unknown-key"));
    return Promise.resolve(key);
  };
}
