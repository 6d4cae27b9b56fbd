import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Autowired,
  Bean,
  bootstrap,
  Configuration,
  DefinitionError,
  GetMapping,
  PostConstruct,
  PreDestroy,
  RestController,
  Service,
  Value,
} from "../../mod.ts";

/** Counts what the real repository does, so a test can show it never ran. */
const real = { constructed: 0, started: 0, stopped: 0 };

@Service()
class UserRepository {
  // A key no test configures: building this class would stop bootstrap.
  @Value("${db.url}")
  url!: string;
  constructor() {
    real.constructed++;
  }
  @PostConstruct()
  open(): void {
    real.started++;
  }
  @PreDestroy()
  close(): void {
    real.stopped++;
  }
  find(id: number): string {
    return `real ${id}`;
  }
}

@Service()
class UserService {
  @Autowired(UserRepository)
  repository!: UserRepository;
  name(id: number): string {
    return this.repository.find(id);
  }
}

@RestController()
class UserController {
  @Autowired(UserService)
  users!: UserService;
  @GetMapping("/users/1")
  one(): string {
    return this.users.name(1);
  }
}

const fake = { find: (id: number): string => `fake ${id}` };

function resetCounts(): void {
  real.constructed = 0;
  real.started = 0;
  real.stopped = 0;
}

describe("bootstrap({ overrides })", () => {
  it("gives dependents the instance for a class token; the class is never constructed", async () => {
    resetCounts();
    const app = await bootstrap({
      controllers: [UserController],
      components: [UserService, UserRepository],
      overrides: [[UserRepository, fake]],
    });
    assert.equal(app.getBean(UserService).repository, fake);
    assert.equal(app.getBean(UserRepository), fake);
    assert.equal(app.getBean("userRepository"), fake);
    assert.equal(await (await app.fetch(new Request("http://x/users/1"))).text(), "fake 1");
    await app.close();
    assert.deepEqual(real, { constructed: 0, started: 0, stopped: 0 });
  });

  it("finds the bean by name", async () => {
    resetCounts();
    const app = await bootstrap({
      components: [UserService, UserRepository],
      overrides: [["userRepository", fake]],
    });
    assert.equal(app.getBean(UserService).name(2), "fake 2");
    assert.equal(real.constructed, 0);
  });

  it("does not start or stop the given instance, even one of a class with hooks", async () => {
    resetCounts();
    // An instance built by the test itself: its own constructor runs, the container's hooks not.
    const given = new UserRepository();
    const app = await bootstrap({
      components: [UserService, UserRepository],
      overrides: [[UserRepository, given]],
    });
    await app.close();
    assert.equal(app.getBean(UserService).repository, given);
    assert.deepEqual(real, { constructed: 1, started: 0, stopped: 0 });
  });

  it("finds a subclass's bean through its base class, as @Autowired does", async () => {
    abstract class Store {
      abstract get(): string;
    }
    @Service()
    class DiskStore extends Store {
      constructor() {
        super();
        throw new Error("no disk in tests");
      }
      get(): string {
        return "disk";
      }
    }
    @Service()
    class Reader {
      @Autowired(Store)
      store!: Store;
    }
    const memory = { get: (): string => "memory" };
    const app = await bootstrap({
      components: [Reader, DiskStore],
      overrides: [[Store, memory]],
    });
    assert.equal(app.getBean(Reader).store, memory);
    assert.equal(app.getBean("diskStore"), memory);
  });

  it("replaces a @Bean method's bean by its name, without calling the method", async () => {
    let called = false;
    @Configuration()
    class Clocks {
      @Bean()
      clock(): () => number {
        called = true;
        return () => Date.now();
      }
    }
    @Service()
    class Stamp {
      @Autowired("clock")
      clock!: () => number;
    }
    const app = await bootstrap({
      components: [Stamp, Clocks],
      overrides: [["clock", () => 42]],
    });
    assert.equal(app.getBean(Stamp).clock(), 42);
    assert.equal(called, false);
  });

  it("says why a @Bean method's bean replaced by a stand-in is not found by class", async () => {
    class Client {
      name = "real";
    }
    @Configuration()
    class Clients {
      @Bean()
      client(): Client {
        return new Client();
      }
    }
    @Service()
    class User {
      @Autowired(Client)
      client!: Client;
    }
    await assert.rejects(
      bootstrap({ components: [User, Clients], overrides: [["client", { name: "fake" }]] }),
      /The override of 'client' is not an instance of Client: .*@Autowired\("client"\)/,
    );
    const fake = Object.assign(Object.create(Client.prototype), { name: "fake" }) as Client;
    const app = await bootstrap({ components: [User, Clients], overrides: [["client", fake]] });
    assert.equal(app.getBean(User).client.name, "fake");
  });

  it("refuses a token that names no bean, naming the token", async () => {
    class Mailer {}
    await assert.rejects(
      bootstrap({ components: [UserService], overrides: [[Mailer, {}]] }),
      (e: unknown) =>
        e instanceof DefinitionError && e.message.startsWith("No bean of class Mailer to override"),
    );
    await assert.rejects(
      bootstrap({ components: [UserService], overrides: [["mailer", {}]] }),
      (e: unknown) =>
        e instanceof DefinitionError && e.message.startsWith("No bean named 'mailer' to override"),
    );
    // A @Bean method's bean shows its class only once built, so a class cannot name it.
    @Configuration()
    class Clocks {
      @Bean()
      clock(): Date {
        return new Date();
      }
    }
    await assert.rejects(
      bootstrap({ components: [Clocks], overrides: [[Date, new Date(0)]] }),
      /No bean of class Date to override \(a @Bean method's bean is overridden by its name\)/,
    );
  });

  it("refuses an ambiguous class, naming the beans it fits", async () => {
    class Animal {}
    @Service()
    class Cat extends Animal {}
    @Service()
    class Dog extends Animal {}
    await assert.rejects(
      bootstrap({ components: [Cat, Dog], overrides: [[Animal, {}]] }),
      (e: unknown) =>
        e instanceof DefinitionError &&
        e.message ===
          "Several beans fit the override of Animal: cat (class Cat), dog (class Dog); " +
            "override one by its name",
    );
    // The exact class is no longer ambiguous, as with @Autowired.
    @Service()
    class Kitten extends Cat {}
    const kitten = new Kitten();
    const app = await bootstrap({ components: [Cat, Kitten], overrides: [[Cat, kitten]] });
    assert.equal(app.getBean("cat"), kitten);
  });

  it("refuses overriding one bean twice, and a missing instance", async () => {
    await assert.rejects(
      bootstrap({
        components: [UserService, UserRepository],
        overrides: [[UserRepository, fake], ["userRepository", fake]],
      }),
      /The bean 'userRepository' \(class UserRepository\) is overridden twice/,
    );
    await assert.rejects(
      bootstrap({ components: [UserService, UserRepository], overrides: [["userService", null]] }),
      /The override of bean 'userService' \(class UserService\) is null/,
    );
  });
});
