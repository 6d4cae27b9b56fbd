import {
  ApplicationEventPublisher,
  Autowired,
  Cacheable,
  CacheEvict,
  CachePut,
  Service,
} from "../../../mod.ts";
import type { User, UserInput } from "./user.ts";
import { UserRegistered } from "./user_registered.ts";
import { UserRepository } from "./user_repository.ts";

/**
 * The users of the app. The bodies reaching it were checked by the `UserInput` schema already;
 * the repository keeps emails unique. A user read by id is cached (`thaw.cache.users` of
 * application.yml bounds the cache), and a change to it goes to the cache too.
 */
@Service()
export class UserService {
  @Autowired(UserRepository)
  private repository!: UserRepository;

  @Autowired(ApplicationEventPublisher)
  private events!: ApplicationEventPublisher;

  findAll(): Promise<User[]> {
    return this.repository.findAll();
  }

  // An id that finds no user is not cached (undefined never is): it is asked again next time.
  @Cacheable("users")
  async findById(id: number): Promise<User | undefined> {
    return await this.repository.findById(id);
  }

  findByEmail(email: string): Promise<User | undefined> {
    return this.repository.findByEmail(email);
  }

  /** A `DuplicateEmailError` when the email is taken. */
  async create(input: UserInput): Promise<User> {
    const user = await this.repository.insert(input);
    await this.events.publishEvent(new UserRegistered(user));
    return user;
  }

  /** `undefined` when there is no such user; a `DuplicateEmailError` when the email is taken. */
  @CachePut("users", { key: (id: number) => id })
  async update(id: number, input: UserInput): Promise<User | undefined> {
    return await this.repository.update(id, input);
  }

  @CacheEvict("users")
  async delete(id: number): Promise<boolean> {
    return await this.repository.delete(id);
  }
}
