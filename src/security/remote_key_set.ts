/**
 * The issuer's key set (JWKS), fetched and kept: the keys of one fetch verify every token until a
 * token names a key id the set does not have, which refetches it (the issuer rotated its keys).
 * Written around jose's `createLocalJWKSet` rather than taken from `createRemoteJWKSet`, which,
 * once its set is older than its maximum age, refetches before every verification and fails them
 * all while the issuer is down, and counts its cooldown from the last fetch that succeeded (so
 * that while the host is down every unknown key id fetches again). Here:
 *
 * - fetches (of the discovery document and of the set) are one at a time, and at most one starts
 *   per cooldown, whether it succeeds or not: a flood of unknown key ids costs one fetch;
 * - but while no fetch has brought keys yet (the issuer was down, slow or answered junk at the
 *   first token), every token is refused until one does: a failure is tried again after 1 s, then
 *   after twice the last wait, up to the cooldown, each wait counted from the failure (a slow
 *   fetch may have taken most of a cooldown), so that tokens are taken seconds after the issuer is
 *   back, and a flood of tokens meanwhile costs a fetch per wait;
 * - a set older than its maximum age is refetched in the background while its keys go on
 *   verifying (on workerd, within the request: it drops a request's I/O once it is answered); a
 *   fetch that fails leaves them in place (while the host is down, the cached keys keep working);
 * - a call that joins another's fetch waits no longer than a fetch may take.
 *
 * @module
 */
import type { Clock } from "../runtime/clock.ts";
import { deadline } from "../runtime/deadline.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";
import { TokenFailure } from "./token_failure.ts";

/** The first wait after a failed fetch while there are no keys: then doubled up to the cooldown. */
const FIRST_RETRY_MS = 1_000;

/** The parts of jose the key set uses (the package is loaded by the verifier). */
export type JoseKeySets = Pick<typeof import("jose"), "createLocalJWKSet">;

/** A key for a token's protected header, as jose's `jwtVerify` takes a key function. */
export type KeyLookup = ReturnType<JoseKeySets["createLocalJWKSet"]>;

/** How a key set is fetched and kept. */
export interface RemoteKeySetOptions {
  /**
   * The least time between two fetches, in ms: 30 s (jose's and Nimbus's) when not given. Before
   * any keys were fetched, a failed fetch is tried again sooner: after 1 s, doubling up to this.
   */
  readonly cooldownMs?: number;
  /** How long a fetched set is used before it is refetched in the background: 5 min. */
  readonly maxAgeMs?: number;
  /** How long one fetch may take: 5 s. */
  readonly timeoutMs?: number;
  /** Time, for the cooldown and the age: the real clock when not given. */
  readonly clock?: Pick<Clock, "monotonic">;
  /** The fetch to use: the runtime's when not given. */
  readonly fetch?: typeof fetch;
  /** Told of a fetch that failed (the keys already fetched are kept): to log it. */
  readonly onFetchFailed?: (error: Error) => void;
  /**
   * Whether a token that finds the set stale waits for its refetch rather than leaving it to the
   * background: on workerd (the default there), which drops a request's I/O once it is answered.
   */
  readonly staleInRequest?: boolean;
}

/**
 * The key set at a URL that `locate` finds (the configured `jwk-set-uri`, or the `jwks_uri` of
 * the issuer's discovery document, looked up once it succeeds): `lookup` is the key function for
 * jose's `jwtVerify`.
 */
export class RemoteKeySet {
  readonly #jose: JoseKeySets;
  readonly #locate: (fetcher: JsonFetcher) => Promise<string>;
  readonly #cooldownMs: number;
  readonly #maxAgeMs: number;
  readonly #timeoutMs: number;
  readonly #clock: Pick<Clock, "monotonic">;
  readonly #fetch: typeof fetch;
  readonly #onFetchFailed: (error: Error) => void;
  #url: string | undefined;
  #keys: KeyLookup | undefined;
  #fetchedAt = 0;
  /** No fetch starts before this time (monotonic); none yet: any time. */
  #notBefore: number | undefined;
  /** The wait after the next failure while there are no keys. */
  #retryMs: number;
  #pending: Promise<void> | undefined;
  #lastError: Error | undefined;
  readonly #staleInRequest: boolean;

  /**
   * @param jose jose's key set functions
   * @param locate the set's URL, fetching what it needs through the fetcher it is given
   * @param options cooldown, age, timeout, clock and fetch
   */
  constructor(
    jose: JoseKeySets,
    locate: (fetcher: JsonFetcher) => Promise<string>,
    options: RemoteKeySetOptions = {},
  ) {
    this.#jose = jose;
    this.#locate = locate;
    this.#cooldownMs = options.cooldownMs ?? 30_000;
    this.#maxAgeMs = options.maxAgeMs ?? 300_000;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#clock = options.clock ?? { monotonic: () => performance.now() };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#onFetchFailed = options.onFetchFailed ?? (() => {});
    this.#staleInRequest = options.staleInRequest ?? onWorkerd();
    this.#retryMs = Math.min(FIRST_RETRY_MS, this.#cooldownMs);
  }

  /** The key function for jose's `jwtVerify`: throws jose's no-matching-key error, or a `TokenFailure`. */
  readonly lookup: KeyLookup = (async (header, token) => {
    if (this.#keys === undefined) {
      await this.#refresh();
      if (this.#keys === undefined) {
        throw new TokenFailure("keys-unavailable", definedCause(this.#lastError));
      }
    } else if (this.#clock.monotonic() - this.#fetchedAt >= this.#maxAgeMs) {
      // In the background, the keys at hand verify this token meanwhile; but workerd drops the I/O
      // a request started once its answer is sent (the fetch would never settle), so there the
      // request waits for it (a failure keeps the keys all the same).
      if (this.#staleInRequest) await this.#refresh();
      else void this.#refresh();
    }
    const keys: KeyLookup = this.#keys;
    try {
      return await keys(header, token);
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ERR_JWKS_NO_MATCHING_KEY") throw error;
      // A fetch under way (or one the cooldown allows) may bring the key of a rotation.
      if (!(await this.#refresh()) || this.#keys === keys) throw error;
      return await this.#keys(header, token);
    }
  }) as KeyLookup;

  /**
   * Whether keys are held, for the health check: without any, a fetch is tried first (joining one
   * under way, within the backoff), and the answer names the last fetch's failure. Keys held while
   * the last fetch failed still verify: up.
   */
  async health(): Promise<SourceHealth> {
    if (this.#keys === undefined) await this.#refresh();
    if (this.#keys !== undefined) return { up: true };
    return { up: false, error: this.#lastError?.message ?? "no keys fetched yet" };
  }

  /**
   * Fetches the set unless the cooldown forbids it, joining a fetch under way. Resolves to whether
   * a fetch ran (that one or the one joined); never rejects: a failure is `onFetchFailed`'s.
   */
  #refresh(): Promise<boolean> {
    if (this.#pending !== undefined) return this.#join(this.#pending);
    const now = this.#clock.monotonic();
    if (this.#notBefore !== undefined && now < this.#notBefore) return Promise.resolve(false);
    this.#notBefore = now + this.#cooldownMs;
    const pending: Promise<void> = this.#fetchSet().then(
      (keys) => {
        this.#keys = keys;
        this.#fetchedAt = this.#clock.monotonic();
        this.#lastError = undefined;
        this.#retryMs = Math.min(FIRST_RETRY_MS, this.#cooldownMs);
      },
      (error: unknown) => {
        this.#lastError = error instanceof Error ? error : new Error(String(error));
        // One given up on (`#join`) was backed off for then.
        if (this.#pending === pending) this.#backOff();
        try {
          this.#onFetchFailed(this.#lastError);
        } catch {
          // The listener's own failure (a logger's) changes nothing of the key set's.
        }
      },
    ).finally(() => {
      // Not a later fetch's: one given up on (`#join`) may settle while the next is under way.
      if (this.#pending === pending) this.#pending = undefined;
    });
    this.#pending = pending;
    return this.#join(pending);
  }

  /**
   * Waits for a fetch, no longer than a fetch may take: on workerd, a fetch whose request went
   * away never settles, and would hold every call that joined it, and every later one.
   */
  async #join(pending: Promise<void>): Promise<boolean> {
    // `pending` never rejects: the one rejection here is the deadline's.
    await deadline(pending, this.#timeoutMs + 1_000, () => "lost").catch(() => {
      if (this.#pending !== pending) return;
      this.#pending = undefined;
      this.#lastError = new Error("the key set's fetch did not settle");
      this.#backOff();
    });
    return true;
  }

  /**
   * After a failed fetch while there are no keys, the next may start after the current wait
   * (counted from now, the failure), which then doubles up to the cooldown; with keys, the
   * cooldown stands: they go on verifying meanwhile.
   */
  #backOff(): void {
    if (this.#keys !== undefined) return;
    const retryAt = this.#clock.monotonic() + this.#retryMs;
    this.#notBefore = Math.min(this.#notBefore ?? retryAt, retryAt);
    this.#retryMs = Math.min(this.#retryMs * 2, this.#cooldownMs);
  }

  async #fetchSet(): Promise<KeyLookup> {
    const fetcher: JsonFetcher = (url, what) => this.#fetchJson(url, what);
    this.#url ??= await this.#locate(fetcher);
    const jwks = await fetcher(this.#url, "the key set (JWKS)");
    try {
      return this.#jose.createLocalJWKSet(jwks as Parameters<JoseKeySets["createLocalJWKSet"]>[0]);
    } catch (error) {
      throw new Error(`${this.#url}: the key set (JWKS) is not a JSON Web Key Set`, {
        cause: error,
      });
    }
  }

  async #fetchJson(url: string, what: string): Promise<unknown> {
    let response: Response;
    try {
      response = await this.#fetch(url, {
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
        headers: { accept: "application/json, application/jwk-set+json" },
      });
    } catch (error) {
      throw new Error(`${url}: ${what} could not be fetched: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`${url}: ${what} answered ${response.status}, not 200`);
    }
    try {
      return await response.json();
    } catch (error) {
      throw new Error(`${url}: ${what} is not JSON`, { cause: error });
    }
  }
}

/** A key source or an endpoint, as the security health component reports it. */
export interface SourceHealth {
  readonly up: boolean;
  /** Why it is down. */
  readonly error?: string;
}

/** Fetches JSON from a URL (`what` names it in errors), within the set's timeout. */
export type JsonFetcher = (url: string, what: string) => Promise<unknown>;

function definedCause(error: Error | undefined): ErrorOptions | undefined {
  return error === undefined ? undefined : { cause: error };
}
