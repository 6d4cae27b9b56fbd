import { Service } from "../../../mod.ts";
import { User } from "./user.ts";

/** The email is taken by another user. */
export class DuplicateEmailError extends Error {
  constructor(email: string) {
    super(`Email ${email} already exists`);
    this.name = "DuplicateEmailError";
  }
}

/** In-memory storage of users; ids count up from 1. */
@Service()
export class UserService {
  readonly #users = new Map<number, User>();
  #nextId = 1;

  findAll(): User[] {
    return [...this.#users.values()];
  }

  findById(id: number): User | undefined {
    return this.#users.get(id);
  }

  findByEmail(email: string): User | undefined {
    for (const user of this.#users.values()) if (user.getEmail() === email) return user;
    return undefined;
  }

  create(user: User): User {
    validate(user);
    if (this.findByEmail(user.getEmail()) !== undefined) {
      throw new DuplicateEmailError(user.getEmail());
    }
    const created = Object.assign(new User(), user, { id: this.#nextId++ });
    this.#users.set(created.id, created);
    return created;
  }

  update(user: User): User | undefined {
    if (!this.#users.has(user.id)) return undefined;
    validate(user);
    const owner = this.findByEmail(user.getEmail());
    if (owner !== undefined && owner.id !== user.id) throw new DuplicateEmailError(user.getEmail());
    const updated = Object.assign(new User(), user);
    this.#users.set(updated.id, updated);
    return updated;
  }

  delete(id: number): boolean {
    return this.#users.delete(id);
  }
}

function validate(user: User): void {
  if (typeof user.name !== "string" || user.name.trim() === "") {
    throw new TypeError("name must be a non-empty string");
  }
  if (typeof user.email !== "string" || !/^[^@\s]+@[^@\s]+$/.test(user.email)) {
    throw new TypeError("email must be an email address");
  }
}
