import { Component } from "../../../mod.ts";
import type { User, UserInput } from "../src/user.ts";
import { DuplicateEmailError, toUser, UserRepository } from "../src/user_repository.ts";

/**
 * Users in memory, for runtimes without SQLite (workerd, Cloudflare Workers): ids count up from 1
 * and are never reused; everything is gone when the isolate is. Registered by the entry points
 * that use it (worker.ts, worker_explicit.ts), never by component scanning: it lives outside
 * `src/`, so it cannot end up beside the SQL storage.
 */
@Component("userRepository")
export class MemoryUserRepository extends UserRepository {
  readonly #users = new Map<number, User>();
  #nextId = 1;

  findAll(): Promise<User[]> {
    return Promise.resolve([...this.#users.values()].map(toUser));
  }

  findById(id: number): Promise<User | undefined> {
    const user = this.#users.get(id);
    return Promise.resolve(user && toUser(user));
  }

  findByEmail(email: string): Promise<User | undefined> {
    return Promise.resolve(this.#byEmail(email));
  }

  insert(input: UserInput): Promise<User> {
    if (this.#byEmail(input.email) !== undefined) {
      return Promise.reject(new DuplicateEmailError(input.email));
    }
    const user = toUser({ id: this.#nextId++, name: input.name, email: input.email });
    this.#users.set(user.id, user);
    return Promise.resolve(toUser(user));
  }

  update(id: number, input: UserInput): Promise<User | undefined> {
    if (!this.#users.has(id)) return Promise.resolve(undefined);
    const owner = this.#byEmail(input.email);
    if (owner !== undefined && owner.id !== id) {
      return Promise.reject(new DuplicateEmailError(input.email));
    }
    const user = toUser({ id, name: input.name, email: input.email });
    this.#users.set(id, user);
    return Promise.resolve(toUser(user));
  }

  delete(id: number): Promise<boolean> {
    return Promise.resolve(this.#users.delete(id));
  }

  #byEmail(email: string): User | undefined {
    for (const user of this.#users.values()) if (user.email === email) return toUser(user);
    return undefined;
  }
}
