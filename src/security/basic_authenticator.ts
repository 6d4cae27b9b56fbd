/**
 * HTTP Basic: the header's credentials checked against the app's `UserDetailsService` and the
 * user's password hash. An unknown user, or one whose stored hash cannot be read, costs the same
 * work as a wrong password: the password is derived against a dummy hash of the default cost, so
 * the time of the answer does not tell which names exist. (A user whose hash has another cost
 * than the dummy's answers in that hash's time: rehash with `hashPassword` to keep them alike.)
 *
 * @module
 */
import { basicCredentials } from "./basic_credentials.ts";
import {
  parsePasswordHash,
  type PasswordHash,
  passwordMatches,
  PBKDF2_ITERATIONS,
} from "./password_hash.ts";
import { defaultParallelChecks, PasswordCheckQueue } from "./password_check_queue.ts";
import { authenticated, refused, type SchemeResult } from "./scheme_authentication.ts";
import type { UserDetails, UserDetailsService } from "./user_details.ts";

/** How a Basic authenticator is made. */
export interface BasicAuthenticatorOptions {
  /**
   * The cost of the dummy hash, in PBKDF2-HMAC-SHA256 iterations: that of the users' hashes
   * ({@linkcode PBKDF2_ITERATIONS}, `hashPassword`'s, when not given).
   */
  readonly iterations?: number;
  /** The bean's name, for the message of a user it returns that is not a `UserDetails`. */
  readonly beanName?: string;
  /** Password checks run at once: one fewer than the cores (at least 1) when not given. */
  readonly parallelChecks?: number;
  /** Password checks waiting for a place: 32 when not given; past them, `busy`. */
  readonly queuedChecks?: number;
}

/**
 * Checks `Authorization: Basic` headers against `users`. Made once per app;
 * {@linkcode BasicAuthenticator.authenticate} is the per-request check.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BasicAuthenticator } from "./basic_authenticator.ts";
 * import { hashPassword } from "./password_hash.ts";
 *
 * const password = await hashPassword("s3cret", { iterations: 1000 });
 * const users = {
 *   loadUserByUsername: (name: string) =>
 *     Promise.resolve(name === "ada" ? { username: "ada", password, authorities: ["ROLE_ADMIN"] } : undefined),
 * };
 * const basic = new BasicAuthenticator(users, { iterations: 1000 });
 * assert.deepEqual(await basic.authenticate("Basic " + btoa("ada:s3cret")), {
 *   kind: "authenticated",
 *   authentication: { scheme: "basic", name: "ada", authorities: ["ROLE_ADMIN"] },
 * });
 * assert.deepEqual(await basic.authenticate("Basic " + btoa("bob:s3cret")), {
 *   kind: "refused",
 *   scheme: "basic",
 *   reason: "unknown-user",
 * });
 * ```
 */
export class BasicAuthenticator {
  readonly #users: UserDetailsService;
  readonly #dummy: PasswordHash;
  readonly #beanName: string;
  readonly #checks: PasswordCheckQueue;

  /** An authenticator asking `users`. */
  constructor(users: UserDetailsService, options: BasicAuthenticatorOptions = {}) {
    this.#users = users;
    this.#beanName = options.beanName ?? "the UserDetailsService";
    this.#checks = new PasswordCheckQueue(
      options.parallelChecks ?? defaultParallelChecks(),
      options.queuedChecks ?? 32,
    );
    // Its salt and bytes need not be secret nor random (nothing derives them): only its cost counts.
    this.#dummy = Object.freeze({
      digest: "SHA-256",
      iterations: options.iterations ?? PBKDF2_ITERATIONS,
      salt: new Uint8Array(16),
      hash: new Uint8Array(32),
    });
  }

  /**
   * The caller of an `Authorization` header's value (`null`: no header): `missing` unless it is
   * of the Basic scheme. Rejects only when the `UserDetailsService` does, or returns a value that
   * is not a user (a `TypeError` naming the bean, not the user).
   */
  async authenticate(header: string | null): Promise<SchemeResult> {
    const credentials = basicCredentials(header);
    if (credentials.kind === "missing") return credentials;
    if (credentials.kind === "malformed") return refused("basic", "malformed");
    const user = await this.#users.loadUserByUsername(credentials.username);
    if (user === undefined || user === null) {
      const busy = await this.#check(credentials.password, this.#dummy) === "busy";
      return refused("basic", busy ? "busy" : "unknown-user");
    }
    checkUser(user, this.#beanName);
    const hash = parsePasswordHash(user.password);
    if (hash === undefined) {
      const busy = await this.#check(credentials.password, this.#dummy) === "busy";
      return refused("basic", busy ? "busy" : "unreadable-hash");
    }
    const matches = await this.#check(credentials.password, hash);
    if (matches !== true) return refused("basic", matches === "busy" ? "busy" : "wrong-password");
    if (user.enabled === false) return refused("basic", "disabled");
    return authenticated("basic", user.username, user.authorities);
  }

  // The password checked against `hash` when a place in the queue is free; `busy` at once when
  // none is (nothing is derived: the answer says so, not whether the user exists).
  #check(password: string, hash: PasswordHash): Promise<boolean | "busy"> {
    return this.#checks.run(() => passwordMatches(password, hash)) ?? Promise.resolve("busy");
  }
}

function checkUser(user: UserDetails, beanName: string): void {
  const { username, password, authorities, enabled } = (user ?? {}) as unknown as Record<
    string,
    unknown
  >;
  if (
    typeof username !== "string" || typeof password !== "string" ||
    !Array.isArray(authorities) || !authorities.every((a) => typeof a === "string") ||
    (enabled !== undefined && typeof enabled !== "boolean")
  ) {
    throw new TypeError(
      `${beanName}.loadUserByUsername returned what is not a UserDetails ({ username: string, ` +
        `password: string, authorities: string[], enabled?: boolean })`,
    );
  }
}
