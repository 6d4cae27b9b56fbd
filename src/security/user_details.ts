/**
 * The bean HTTP Basic asks for users, as Spring Security's `UserDetailsService` is: the app's own
 * (a table, a directory, a fixed list), Thaw only asks it by name. A class rather than an interface
 * so that `security()` finds the app's bean by it, as Spring finds the bean of its interface.
 *
 * @module
 */

/**
 * A user, as the app's store has them. Fewer fields than Spring's `UserDetails`: its
 * `accountNonExpired`, `accountNonLocked` and `credentialsNonExpired` each say "refuse this user",
 * which `enabled: false` says once (or the service returns no user); Thaw would only have to
 * guess which answer each deserves.
 */
export interface UserDetails {
  /** The name the caller is known by from then on (`Authentication`'s name): the store's spelling, not the typed one. */
  readonly username: string;
  /**
   * The password's hash, never the password: `{pbkdf2-sha256}...` as `hashPassword` writes it, or
   * Spring's `{pbkdf2}`/`{pbkdf2@SpringSecurity_v5_8}`. Any other form refuses the login.
   */
  readonly password: string;
  /** What `@Secured` and `@PreAuthorize` check (`ROLE_ADMIN`, `orders:write`), as they are. */
  readonly authorities: readonly string[];
  /** `false`: refused even with the right password (a suspended account kept in the store). */
  readonly enabled?: boolean;
}

/**
 * Finds users by name, for HTTP Basic: a bean of the app that extends it turns HTTP Basic on in
 * `security()` (one such bean; `@Service() class Users extends UserDetailsService`).
 *
 * @example Any object of its shape is one, for a test; the app's bean extends the class
 * ```ts
 * import assert from "node:assert/strict";
 * import { hashPassword, type UserDetails, UserDetailsService } from "@thaw/thaw/security";
 *
 * class Users extends UserDetailsService {
 *   readonly #ada: Promise<UserDetails> = hashPassword("s3cret", { iterations: 1000 }).then(
 *     (password) => ({ username: "ada", password, authorities: ["ROLE_ADMIN"] }),
 *   );
 *   async loadUserByUsername(name: string): Promise<UserDetails | undefined> {
 *     return name === "ada" ? await this.#ada : undefined;
 *   }
 * }
 * const users = new Users();
 * assert.ok(users instanceof UserDetailsService);
 * assert.equal((await users.loadUserByUsername("ada"))?.username, "ada");
 * assert.equal(await users.loadUserByUsername("bob"), undefined);
 * ```
 */
export abstract class UserDetailsService {
  /**
   * The user named `username` (as the client sent it: any text without a `:` or a control
   * character), or `undefined` when there is none. A rejection is the store's failure, not a
   * refused login: it reaches the request as an error.
   */
  abstract loadUserByUsername(username: string): Promise<UserDetails | undefined>;
}
