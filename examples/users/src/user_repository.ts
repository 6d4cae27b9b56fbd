import { User, type UserInput } from "./user.ts";

/** The email is taken by another user. */
export class DuplicateEmailError extends Error {
  constructor(email: string) {
    super(`Email ${email} already exists`);
    this.name = "DuplicateEmailError";
  }
}

/**
 * Where users are kept: the `users` datasource (SQLite or PostgreSQL) for `main.ts`
 * (storage/sql_user_repository.ts), memory on workerd (storage/memory_user_repository.ts). Each
 * entry point registers one of them, as the bean named `userRepository`; `UserService` asks for
 * this class.
 */
export abstract class UserRepository {
  /** Every user, by id. */
  abstract findAll(): Promise<User[]>;
  abstract findById(id: number): Promise<User | undefined>;
  abstract findByEmail(email: string): Promise<User | undefined>;
  /** Stores a new user under the next id; a `DuplicateEmailError` when the email is taken. */
  abstract insert(input: UserInput): Promise<User>;
  /**
   * Replaces the user's name and email; `undefined` when there is no such user, a
   * `DuplicateEmailError` when another user has the email.
   */
  abstract update(id: number, input: UserInput): Promise<User | undefined>;
  /** Whether there was such a user. */
  abstract delete(id: number): Promise<boolean>;
}

/** A `User` of stored values. */
export function toUser(values: { id: unknown; name: unknown; email: unknown }): User {
  const user = new User();
  user.id = Number(values.id);
  user.name = String(values.name);
  user.email = String(values.email);
  return user;
}
