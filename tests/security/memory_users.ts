// The `UserDetailsService` bean the Basic tests log in against: users from a record the test fills.
import { Service } from "../../mod.ts";
import { type UserDetails, UserDetailsService } from "../../security.ts";

/**
 * A bean class `Users` (bean `users`) answering from `users()`, read at each lookup. One class per
 * call: the state stays in the test file that made it, also where every file runs in one process.
 */
export function memoryUsers(
  users: () => Readonly<Record<string, UserDetails>>,
): new () => UserDetailsService {
  @Service()
  class Users extends UserDetailsService {
    loadUserByUsername(name: string): Promise<UserDetails | undefined> {
      const known = users();
      return Promise.resolve(Object.hasOwn(known, name) ? known[name] : undefined);
    }
  }
  return Users;
}
