/**
 * The callers of active opaque tokens, kept by the digest of the token (never the token itself)
 * until the earlier of their `exp` and the cache's time to live, at most {@linkcode MAX_ENTRIES}
 * of them: a new one past that drops the oldest. Pure: the time is given.
 *
 * @module
 */
import type { Authentication } from "./security_context.ts";

/** The most tokens kept: a flood of valid tokens cannot grow the cache past it. */
export const MAX_ENTRIES = 10_000;

interface Entry {
  readonly caller: Authentication;
  /** When it stops being used (epoch ms). */
  readonly until: number;
}

/** Active tokens' callers by digest, each until its time. */
export class IntrospectionCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #max: number;

  /**
   * @param ttlMs how long an answer is kept at most; `0`: none is kept
   * @param max the most entries kept
   */
  constructor(ttlMs: number, max: number = MAX_ENTRIES) {
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  /** The caller kept for `digest` at `now`, if its time has not passed. */
  get(digest: string, now: number): Authentication | undefined {
    const entry = this.#entries.get(digest);
    if (entry === undefined) return undefined;
    if (entry.until <= now) {
      this.#entries.delete(digest);
      return undefined;
    }
    return entry.caller;
  }

  /**
   * Keeps `caller` for `digest` from `now` until `now + ttl`, or its `expMs` if sooner; nothing
   * when that is not after `now`.
   */
  set(digest: string, caller: Authentication, now: number, expMs: number | undefined): void {
    const until = Math.min(now + this.#ttlMs, expMs ?? Infinity);
    if (!(until > now)) return;
    this.#entries.delete(digest);
    if (this.#entries.size >= this.#max) {
      // Insertion order: the first key is the oldest.
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(digest, { caller, until });
  }

  /** How many are kept (expired ones included until read). */
  get size(): number {
    return this.#entries.size;
  }
}
