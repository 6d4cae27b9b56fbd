import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApplicationContext } from "../../src/context/application_context.ts";
import {
  Autowired,
  Bean,
  bootstrap,
  CircularDependencyError,
  Component,
  Configuration,
  DefinitionError,
  DuplicateBeanError,
  NoSuchBeanError,
  RestController,
  Service,
} from "../../mod.ts";

@Service()
class Repo {
  readonly items = ["a"];
}

@Service()
class Catalog {
  @Autowired(Repo)
  repo!: Repo;
  // Injected fields are set before the constructor body runs.
  readonly seenInConstructor: boolean;
  constructor() {
    this.seenInConstructor = this.repo instanceof Repo;
  }
}

@Component("shelf")
class Shelf {
  @Autowired("catalog")
  #catalog!: Catalog;
  catalog(): Catalog {
    return this.#catalog;
  }
}

describe("bean registration and injection", () => {
  it("names beans after the class, or as told", async () => {
    const app = await bootstrap({ components: [Repo, Catalog, Shelf] });
    assert.ok(app.getBean("repo") instanceof Repo);
    assert.ok(app.getBean("shelf") instanceof Shelf);
    assert.throws(() => app.getBean("Shelf"), NoSuchBeanError);
  });

  it("keeps acronyms as Spring does", async () => {
    @Service()
    class URLMapper {}
    const app = await bootstrap({ components: [URLMapper] });
    assert.ok(app.getBean("URLMapper") instanceof URLMapper);
  });

  it("injects by class and by name, into private fields, before the constructor body", async () => {
    const app = await bootstrap({ components: [Shelf, Catalog, Repo] });
    const catalog = app.getBean(Catalog);
    assert.equal(catalog.repo, app.getBean(Repo));
    assert.equal(catalog.seenInConstructor, true);
    assert.equal(app.getBean(Shelf).catalog(), catalog);
  });

  it("makes singletons: one instance per bean", async () => {
    let made = 0;
    @Service()
    class Counted {
      constructor() {
        made++;
      }
    }
    @Service()
    class A {
      @Autowired(Counted)
      c!: Counted;
    }
    @Service()
    class B {
      @Autowired(Counted)
      c!: Counted;
    }
    const app = await bootstrap({ components: [A, B, Counted, Counted] });
    assert.equal(made, 1);
    assert.equal(app.getBean(A).c, app.getBean(B).c);
  });

  it("injects a subclass for its base class and inherits @Autowired fields", async () => {
    class Store {}
    @Service()
    class MemoryStore extends Store {}
    @Service()
    class Base {
      @Autowired(Store)
      store!: Store;
    }
    @Service()
    class Derived extends Base {
      @Autowired(Repo)
      repo!: Repo;
    }
    const app = await bootstrap({ components: [MemoryStore, Derived, Repo] });
    assert.ok(app.getBean(Derived).store instanceof MemoryStore);
    assert.ok(app.getBean(Derived).repo instanceof Repo);
  });

  it("leaves fields alone when constructed outside the container", () => {
    assert.equal(new Catalog().repo, undefined);
  });

  it("produces beans from @Configuration @Bean methods, sync or async", async () => {
    class Clock {
      now(): number {
        return 42;
      }
    }
    @Configuration()
    class AppConfig {
      @Autowired(Repo)
      repo!: Repo;
      @Bean()
      clock(): Clock {
        return new Clock();
      }
      @Bean("greeting")
      async greeting(): Promise<string> {
        await Promise.resolve();
        return `hello ${this.repo.items[0]}`;
      }
    }
    @Service()
    class UsesClock {
      @Autowired(Clock)
      clock!: Clock;
      @Autowired("greeting")
      greeting!: string;
    }
    const app = await bootstrap({ components: [UsesClock, AppConfig, Repo] });
    assert.equal(app.getBean(UsesClock).clock.now(), 42);
    assert.equal(app.getBean(UsesClock).greeting, "hello a");
    assert.equal(app.getBean("clock"), app.getBean(UsesClock).clock);
  });
});

describe("wiring errors stop bootstrap", () => {
  it("a missing bean names the bean, the class and the field", async () => {
    class Mailer {}
    @Service()
    class Signup {
      @Autowired(Mailer)
      mailer!: Mailer;
    }
    await assert.rejects(
      bootstrap({ components: [Signup] }),
      (e: unknown) =>
        e instanceof NoSuchBeanError && /class Mailer/.test(e.message) &&
        /field 'mailer' of class Signup/.test(e.message),
    );
    @Service()
    class ByName {
      @Autowired("mailer")
      mailer!: unknown;
    }
    await assert.rejects(
      bootstrap({ components: [ByName] }),
      /No bean named 'mailer' for @Autowired\("mailer"\) on field 'mailer' of class ByName/,
    );
  });

  it("a dependency cycle is named", async () => {
    @Service()
    class Ping {
      @Autowired("pong")
      pong!: unknown;
    }
    @Service()
    class Pong {
      @Autowired(Ping)
      ping!: Ping;
    }
    await assert.rejects(
      bootstrap({ components: [Ping, Pong] }),
      (e: unknown) =>
        e instanceof CircularDependencyError &&
        e.message === "Dependency cycle: ping (field pong) -> pong (field ping) -> ping",
    );
  });

  it("two beans of one name are refused", async () => {
    @Service("dup")
    class One {}
    @Component("dup")
    class Two {}
    await assert.rejects(bootstrap({ components: [One, Two] }), (e: unknown) => {
      assert.ok(e instanceof DuplicateBeanError);
      assert.equal(e.beanName, "dup");
      assert.deepEqual(e.sources, ["class One", "class Two"]);
      return true;
    });
  });

  it("an ambiguous class asks for a name", async () => {
    class Animal {}
    @Service()
    class Cat extends Animal {}
    @Service()
    class Dog extends Animal {}
    @Service()
    class Owner {
      @Autowired(Animal)
      pet!: Animal;
    }
    await assert.rejects(
      bootstrap({ components: [Cat, Dog, Owner] }),
      /Several beans fit @Autowired\(Animal\)/,
    );
  });

  it("beans defined in code: the primary one is chosen by class, by name each is itself", async () => {
    class Store {
      constructor(readonly name: string) {}
    }
    const context = new ApplicationContext();
    const define = (name: string, primary?: boolean) =>
      context.registerBean({
        name,
        type: Store,
        source: `config line of ${name}`,
        create: () => Promise.resolve(new Store(name)),
        ...(primary === undefined ? {} : { primary }),
      });
    define("main", true);
    define("reports");
    @Service()
    class Uses {
      @Autowired(Store)
      store!: Store;
      @Autowired("reports")
      reports!: Store;
    }
    context.register(Uses);
    await context.refresh();
    const uses = context.getBean(Uses);
    assert.equal(uses.store.name, "main");
    assert.equal(uses.reports.name, "reports");
    assert.equal(context.getBean(Store).name, "main");
    assert.equal(context.getBean<Store>("reports").name, "reports");
    // Its name is taken like any bean's.
    assert.throws(() => define("main"), DuplicateBeanError);
  });

  it("beans defined in code, none primary: @Autowired and getBean by class name each one", async () => {
    class Store {}
    const context = new ApplicationContext();
    for (const name of ["a", "b"]) {
      context.registerBean({
        name,
        type: Store,
        source: `line of ${name}`,
        create: () => Promise.resolve(new Store()),
      });
    }
    await context.refresh();
    assert.throws(() => context.getBean(Store), {
      name: "DefinitionError",
      message:
        "Several beans fit getBean(Store): a (line of a), b (line of b); ask for one by name",
    });
    @Service()
    class Uses {
      @Autowired(Store)
      store!: Store;
    }
    const other = new ApplicationContext();
    for (const name of ["a", "b"]) {
      other.registerBean({ name, type: Store, source: name, create: () => Promise.resolve({}) });
    }
    other.register(Uses);
    await assert.rejects(
      other.refresh(),
      /Several beans fit @Autowired\(Store\) on field 'store' of class Uses: a \(a\), b \(b\)/,
    );
  });

  it("an undecorated class is refused by name", async () => {
    class Plain {}
    await assert.rejects(bootstrap({ components: [Plain] }), /Class Plain is not a bean/);
    class Sub extends Repo {}
    await assert.rejects(bootstrap({ components: [Sub] }), /Class Sub is not a bean/);
  });

  it("a throwing constructor or @Bean is reported with its source", async () => {
    @Service()
    class Broken {
      constructor() {
        throw new Error("no database");
      }
    }
    await assert.rejects(
      bootstrap({ components: [Broken] }),
      /Constructing class Broken threw: no database/,
    );
    @Configuration()
    class Cfg {
      @Bean()
      nothing(): unknown {
        return undefined;
      }
    }
    await assert.rejects(
      bootstrap({ components: [Cfg] }),
      (e: unknown) =>
        e instanceof DefinitionError && /@Bean Cfg.nothing\(\) returned undefined/.test(e.message),
    );
  });

  it("decorators refuse misuse at once", () => {
    assert.throws(() => Autowired(""), /class or a non-empty bean name/);
    assert.throws(() => Component(""), /non-empty string/);
    assert.throws(() => {
      @Service()
      @Component()
      class Twice {}
      return Twice;
    }, /already a component/);
    assert.throws(() => RestController({ name: "" }), /non-empty string/);
  });
});
