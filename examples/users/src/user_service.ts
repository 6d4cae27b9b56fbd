import { Autowired, Service } from "../../../mod.ts";
import type { User, UserInput } from "./user.ts";
import { UserRepository } from "./user_repository.ts";

/**
 * The users of the app. The bodies reaching it were checked by the `UserInput` schema already;
 * the repository keeps emails unique.
 */
@Service()
export class UserService {
  @Autowired(UserRepository)
  private repository!: UserRepository;

  findAll(): Promise<User[]> {
    return this.repository.findAll();
  }

  findById(id: number): Promise<User | undefined> {
    return this.repository.findById(id);
  }

  findByEmail(email: string): Promise<User | undefined> {
    return this.repository.findByEmail(email);
  }

  /** A `DuplicateEmailError` when the email is taken. */
  create(input: UserInput): Promise<User> {
    return this.repository.insert(input);
  }

  /** `undefined` when there is no such user; a `DuplicateEmailError` when the email is taken. */
  update(id: number, input: UserInput): Promise<User | undefined> {
    return this.repository.update(id, input);
  }

  delete(id: number): Promise<boolean> {
    return this.repository.delete(id);
  }
}
