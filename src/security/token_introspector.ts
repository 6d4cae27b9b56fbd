/**
 * Opaque bearer tokens checked by the authorization server's introspection endpoint (RFC 7662):
 * a `POST` of the token with the resource server's client credentials (HTTP Basic), whose answer
 * says whether it is `active` and what it claims. An active token's caller is kept (see
 * {@linkcode IntrospectionCache}) and one introspection serves every request that waits on the
 * same token. An endpoint that cannot answer (down, slow, a status other than 200, no JSON) is
 * not a verdict on the token: `introspection-unavailable`, which the guard answers `503`.
 *
 * @module
 */
import { maskUrls } from "../config/secrets_mask.ts";
import { deadline } from "../runtime/deadline.ts";
import { clientAuthorization } from "./client_authentication.ts";
import type { SharedJwtSettings } from "./jwt_settings.ts";
import { IntrospectionCache } from "./introspection_cache.ts";
import { type BearerAuthenticator, callerOf, type TokenValidator } from "./bearer_authenticator.ts";
import { MAX_TOKEN_LENGTH } from "./jwt_verifier.ts";
import type { OpaqueTokenSettings } from "./opaque_token_settings.ts";
import type { Authentication } from "./security_context.ts";
import { TokenFailure } from "./token_failure.ts";
import type { SourceHealth } from "./remote_key_set.ts";

/** What an introspector is made with besides its settings: for tests. */
export interface IntrospectorOptions {
  /** The wall clock, for `exp`, `nbf` and the cache (epoch ms). */
  readonly now?: () => number;
  /** The fetch of the endpoint. */
  readonly fetch?: typeof fetch;
  /** How long one introspection may take, in ms (5 s). */
  readonly timeoutMs?: number;
  /** The audiences an active token's `aud` must hold one of; none: `aud` is not checked. */
  readonly audiences?: readonly string[];
}

/** Checks opaque tokens at the introspection endpoint; see the module's note. */
export class TokenIntrospector implements BearerAuthenticator {
  readonly #settings: OpaqueTokenSettings;
  readonly #claims: SharedJwtSettings;
  readonly #validators: readonly TokenValidator[];
  readonly #cache: IntrospectionCache;
  readonly #pending = new Map<string, Promise<Authentication>>();
  readonly #authorization: string;
  readonly #now: () => number;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #audiences: readonly string[];

  /**
   * @param settings the endpoint, the client credentials and the cache's time to live
   * @param claims how a token's claims give its caller (`principal-claim-name`, the
   *   authorities' claims) and the clock skew for `exp` and `nbf`
   * @param validators the app's own checks of an active token's claims
   * @param options the clock, the fetch, the timeout, and the audiences an active token's `aud`
   *   must hold one of (`jwt.audiences`; none: not checked)
   */
  constructor(
    settings: OpaqueTokenSettings,
    claims: SharedJwtSettings,
    validators: readonly TokenValidator[],
    options: IntrospectorOptions = {},
  ) {
    this.#audiences = options.audiences ?? [];
    this.#settings = settings;
    this.#claims = claims;
    this.#validators = validators;
    this.#cache = new IntrospectionCache(settings.cacheTtlMs);
    this.#authorization = clientAuthorization(settings.clientId, settings.clientSecret);
    this.#now = options.now ?? (() => Date.now());
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#timeoutMs = options.timeoutMs ?? 5_000;
  }

  async authenticate(token: string): Promise<Authentication> {
    if (token.length > MAX_TOKEN_LENGTH) throw new TokenFailure("malformed");
    const digest = await digestOf(token);
    const kept = this.#cache.get(digest, this.#now());
    if (kept !== undefined) return kept;
    let pending = this.#pending.get(digest);
    if (pending === undefined) {
      const made: Promise<Authentication> = this.#introspect(token, digest).finally(() => {
        if (this.#pending.get(digest) === made) this.#pending.delete(digest);
      });
      pending = made;
      this.#pending.set(digest, made);
    }
    return await this.#join(pending, digest);
  }

  /**
   * Waits for the introspection under way, no longer than it may take: on workerd, a fetch whose
   * request went away never settles, and would hold every request with the same token. Given up
   * on, it is forgotten, and the next request asks again.
   */
  #join(pending: Promise<Authentication>, digest: string): Promise<Authentication> {
    return deadline(pending, this.#timeoutMs + 1_000, () => {
      if (this.#pending.get(digest) === pending) this.#pending.delete(digest);
      return new TokenFailure("introspection-unavailable", {
        cause: new Error(
          `${maskUrls(this.#settings.introspectionUri)}: the introspection did not settle`,
        ),
      });
    });
  }

  async #introspect(token: string, digest: string): Promise<Authentication> {
    const claims = await this.#ask(token);
    if (claims.active !== true) throw new TokenFailure("inactive");
    const now = this.#now();
    const skew = this.#claims.clockSkewMs;
    const exp = typeof claims.exp === "number" ? claims.exp * 1000 : undefined;
    if (exp !== undefined && exp + skew <= now) throw new TokenFailure("expired");
    if (typeof claims.nbf === "number" && claims.nbf * 1000 - skew > now) {
      throw new TokenFailure("not-yet-valid");
    }
    if (this.#audiences.length > 0 && !audienceHeld(claims.aud, this.#audiences)) {
      throw new TokenFailure("wrong-audience");
    }
    // Frozen: one caller serves every request with the token while it is kept.
    const caller = deepFrozen(callerOf(claims, this.#claims, this.#validators));
    this.#cache.set(digest, caller, now, exp === undefined ? undefined : exp + skew);
    return caller;
  }

  /**
   * Whether the endpoint answers an introspection with the client's credentials, for the health
   * check: a probe with a token no server issued, which costs the endpoint one answer.
   */
  async health(): Promise<SourceHealth> {
    try {
      await this.#ask(HEALTH_PROBE);
      return { up: true };
    } catch (error) {
      const cause = (error as Error).cause;
      return { up: false, error: cause instanceof Error ? cause.message : String(error) };
    }
  }

  /** The endpoint's answer, or `introspection-unavailable` saying why there is none. */
  async #ask(token: string): Promise<Record<string, unknown>> {
    const uri = this.#settings.introspectionUri;
    const unavailable = (why: string, cause?: unknown) =>
      new TokenFailure("introspection-unavailable", {
        cause: new Error(`${maskUrls(uri)}: ${why}`, cause === undefined ? undefined : { cause }),
      });
    let response: Response;
    try {
      response = await this.#fetch(uri, {
        method: "POST",
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
        headers: {
          authorization: this.#authorization,
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
      });
    } catch (error) {
      throw unavailable(maskUrls(`no answer: ${(error as Error).message}`), error);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw unavailable(`answered ${response.status}, not 200`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw unavailable("answered something that is not JSON", error);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw unavailable("answered JSON that is not an object");
    }
    return body as Record<string, unknown>;
  }
}

/** Whether `aud` (a text or a list) holds one of `audiences`. */
function audienceHeld(aud: unknown, audiences: readonly string[]): boolean {
  const held = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
  return held.some((a) => typeof a === "string" && audiences.includes(a));
}

function deepFrozen<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFrozen(child);
  }
  return value;
}

/** The token the health check introspects: no server issues one of this shape. */
const HEALTH_PROBE = "thaw-health-probe.not-a-token";

// The cache's key: a token is a credential, and may be 64 KiB long.
async function digestOf(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}
