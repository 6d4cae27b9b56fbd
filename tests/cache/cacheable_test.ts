// deno-lint-ignore-file require-await -- the beans' async methods stand for an app's I/O.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Bean,
  bootstrap,
  type Cache,
  Cacheable,
  CacheEvict,
  CacheManager,
  CachePut,
  Component,
  ConfigError,
  Configuration,
  Service,
} from "../../mod.ts";
import { propertyOptions } from "../property.ts";
import { deferred } from "../deferred.ts";

/** A logger that keeps what it is given. */
function capture() {
  const lines: string[] = [];
  const put = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, logger: { error: put("error"), warn: put("warn"), info: put("info") } };
}

/** Waits until `condition` holds, checking after each turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("@Cacheable, @CachePut and @CacheEvict", () => {
  it("behave as a model map over any sequence of calls", async () => {
    // The model: what the source holds, and what the cache holds for each key.
    type Step =
      | { op: "find"; id: number }
      | { op: "change"; id: number; value: string }
      | { op: "save"; id: number; value: string }
      | { op: "evict"; id: number }
      | { op: "clear" };
    const id = fc.integer({ min: 0, max: 3 });
    const value = fc.constantFrom("a", "b", "c");
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ op: fc.constant("find" as const), id }),
      fc.record({ op: fc.constant("change" as const), id, value }),
      fc.record({ op: fc.constant("save" as const), id, value }),
      fc.record({ op: fc.constant("evict" as const), id }),
      fc.record({ op: fc.constant("clear" as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        const source = new Map<number, string>();
        @Service()
        class Users {
          loads = 0;
          @Cacheable("users")
          async find(id: number): Promise<string> {
            this.loads++;
            return source.get(id) ?? "none";
          }
          @CachePut("users", { key: (id: number) => id })
          async save(id: number, value: string): Promise<string> {
            source.set(id, value);
            return value;
          }
          @CacheEvict("users")
          async evict(_id: number): Promise<void> {}
          @CacheEvict("users", { allEntries: true })
          async clear(): Promise<void> {}
        }
        const users = (await bootstrap({ components: [Users] })).getBean(Users);
        const cached = new Map<number, string>();
        let loads = 0;
        for (const s of steps) {
          switch (s.op) {
            case "find": {
              const expected = cached.get(s.id) ?? source.get(s.id) ?? "none";
              if (!cached.has(s.id)) loads++;
              cached.set(s.id, expected);
              assert.equal(await users.find(s.id), expected);
              break;
            }
            case "change":
              // Behind the cache's back: the cache keeps answering what it holds.
              source.set(s.id, s.value);
              break;
            case "save":
              assert.equal(await users.save(s.id, s.value), s.value);
              cached.set(s.id, s.value);
              break;
            case "evict":
              await users.evict(s.id);
              cached.delete(s.id);
              break;
            case "clear":
              await users.clear();
              cached.clear();
          }
          assert.equal(users.loads, loads);
        }
      }),
      propertyOptions(60),
    );
  });

  it("runs concurrent first calls once, and caches neither a rejection nor undefined", async () => {
    let gate = deferred<string>();
    @Service()
    class Rates {
      loads = 0;
      @Cacheable("rates")
      async rate(currency: string): Promise<string> {
        this.loads++;
        return await gate.promise + currency;
      }
      @Cacheable("maybe")
      async maybe(value: number | undefined | null): Promise<number | undefined | null> {
        this.loads++;
        return value;
      }
    }
    const rates = (await bootstrap({ components: [Rates] })).getBean(Rates);
    const first = [rates.rate("EUR"), rates.rate("EUR"), rates.rate("EUR")];
    await until(() => rates.loads >= 1);
    gate.reject(new Error("upstream down"));
    for (const call of first) await assert.rejects(call, { message: "upstream down" });
    assert.equal(rates.loads, 1);

    gate = deferred<string>();
    const second = rates.rate("EUR");
    await until(() => rates.loads >= 2);
    gate.resolve("1.1 ");
    assert.equal(await second, "1.1 EUR");
    assert.equal(await rates.rate("EUR"), "1.1 EUR");
    assert.equal(rates.loads, 2);

    await rates.maybe(undefined);
    await rates.maybe(undefined);
    assert.equal(rates.loads, 4);
    await rates.maybe(null);
    await rates.maybe(null);
    assert.equal(rates.loads, 5);
  });

  it("does not store a load that an eviction or an update overtook", async () => {
    // Each call waits on a gate of its own, so the test decides which load ends first.
    const gates = [deferred<void>(), deferred<void>(), deferred<void>()];
    let value = "old";
    @Service()
    class Docs {
      loads = 0;
      @Cacheable("docs")
      async read(id: number): Promise<string> {
        const read = value;
        await gates[this.loads++].promise;
        return `${read}-${id}`;
      }
      @CacheEvict("docs")
      async write(_id: number): Promise<void> {
        value = "new";
      }
      @CachePut("docs", { key: (id: number) => id })
      async put(id: number): Promise<string> {
        value = "put";
        return `${value}-${id}`;
      }
    }
    const docs = (await bootstrap({ components: [Docs] })).getBean(Docs);
    const stale = docs.read(1);
    await until(() => docs.loads === 1);
    await docs.write(1);
    // A call after the eviction does not join the load that began before it.
    const fresh = docs.read(1);
    await until(() => docs.loads === 2);
    gates[1].resolve();
    assert.equal(await fresh, "new-1");
    gates[0].resolve();
    assert.equal(await stale, "old-1");
    assert.equal(await docs.read(1), "new-1");
    assert.equal(docs.loads, 2);

    // The same for an update: the load that began before it does not overwrite it.
    const before = docs.read(2);
    await until(() => docs.loads === 3);
    assert.equal(await docs.put(2), "put-2");
    gates[2].resolve();
    assert.equal(await before, "new-2");
    assert.equal(await docs.read(2), "put-2");
    assert.equal(docs.loads, 3);
  });

  it("keeps at most max-entries per cache, the least recently used going first", async () => {
    @Service()
    class Squares {
      loads: number[] = [];
      @Cacheable("squares")
      async square(n: number): Promise<number> {
        this.loads.push(n);
        return n * n;
      }
      @Cacheable("other")
      async other(n: number): Promise<number> {
        this.loads.push(-n);
        return n;
      }
    }
    const app = await bootstrap({
      components: [Squares],
      config: { thaw: { cache: { squares: { "max-entries": 2 } } } },
    });
    const squares = app.getBean(Squares);
    for (const n of [1, 2, 1, 3, 1, 2]) await squares.square(n);
    // 3 pushed out 2 (1 was used after it), then 2 pushed out 3.
    assert.deepEqual(squares.loads, [1, 2, 3, 2]);
    for (const n of [1, 2, 3, 4]) await squares.other(n);
    for (const n of [1, 2, 3, 4]) await squares.other(n);
    assert.deepEqual(squares.loads.filter((n) => n < 0), [-1, -2, -3, -4]);
  });

  it("lets entries expire after the method's ttl, else the cache's configured one", async () => {
    @Service()
    class Tokens {
      loads = { short: 0, configured: 0, forever: 0 };
      @Cacheable("short", { ttl: 20 })
      async short(): Promise<number> {
        return ++this.loads.short;
      }
      @Cacheable("configured")
      async configured(): Promise<number> {
        return ++this.loads.configured;
      }
      @Cacheable("forever")
      async forever(): Promise<number> {
        return ++this.loads.forever;
      }
    }
    const app = await bootstrap({
      components: [Tokens],
      config: { thaw: { cache: { configured: { ttl: "20ms" } } } },
    });
    const tokens = app.getBean(Tokens);
    assert.equal(await tokens.short(), 1);
    assert.equal(await tokens.configured(), 1);
    assert.equal(await tokens.forever(), 1);
    // Each call either hits (the same value) or, once the entry expired, loads it again. A turn of
    // the event loop between calls: lru-cache reads the clock again on a timer.
    const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
    while (tokens.loads.short === 1) {
      assert.ok([1, 2].includes(await tokens.short()));
      await tick();
    }
    while (tokens.loads.configured === 1) {
      assert.ok([1, 2].includes(await tokens.configured()));
      await tick();
    }
    assert.equal(await tokens.forever(), 1);
  });

  it("runs the method uncached when the store fails, logging once until it answers again", async () => {
    let down = true;
    const entries = new Map<string, unknown>();
    const failing = () => down ? Promise.reject(new Error("ECONNREFUSED")) : undefined;
    @Component()
    class FlakyCacheManager extends CacheManager {
      getCache(_name: string): Cache {
        return {
          get: async (key) => await failing() ?? entries.get(key),
          put: async (key, value) => void (await failing() ?? entries.set(key, value)),
          evict: async (key) => void (await failing() ?? entries.delete(key)),
          clear: async () => void (await failing() ?? entries.clear()),
        };
      }
    }
    @Service()
    class Users {
      loads = 0;
      @Cacheable("users")
      async find(id: number): Promise<number> {
        this.loads++;
        return id;
      }
    }
    const { lines, logger } = capture();
    const app = await bootstrap({ components: [FlakyCacheManager, Users], logger });
    const users = app.getBean(Users);
    assert.equal(await users.find(1), 1);
    assert.equal(await users.find(1), 1);
    assert.equal(users.loads, 2);
    assert.deepEqual(lines, [
      'warn: @Cacheable("users") on Users.find(): the cache failed to read (ECONNREFUSED); ' +
      "its methods run uncached until it answers again",
    ]);
    down = false;
    assert.equal(await users.find(1), 1);
    assert.equal(await users.find(1), 1);
    assert.equal(users.loads, 3);
    assert.deepEqual(lines.slice(1), ["info: cache 'users' answers again"]);
  });

  it("evicts the key's entry when a @CachePut method resolves to undefined", async () => {
    const prices = new Map([["tea", 3]]);
    @Service()
    class Prices {
      @Cacheable("prices")
      async price(sku: string): Promise<number | undefined> {
        return prices.get(sku);
      }
      @CachePut("prices", { key: (sku: string) => sku })
      async setPrice(sku: string, price: number): Promise<void> {
        prices.set(sku, price);
      }
    }
    const bean = (await bootstrap({ components: [Prices] })).getBean(Prices);
    assert.equal(await bean.price("tea"), 3);
    await bean.setPrice("tea", 4);
    assert.equal(await bean.price("tea"), 4);
  });

  it("asks no unless of a @CachePut that resolves to undefined: the entry is evicted", async () => {
    const users = new Map([[7, { name: "ann", archived: false }]]);
    @Service()
    class Users {
      @Cacheable("users")
      async find(id: number): Promise<{ name: string; archived: boolean } | undefined> {
        return users.get(id);
      }
      // An update that answers nothing: unless, written for a result, has none to look at.
      @CachePut("users", {
        key: (id: number) => id,
        unless: (user: { archived: boolean }) => user.archived,
      })
      async rename(id: number, name: string): Promise<void> {
        users.set(id, { name, archived: false });
      }
    }
    const bean = (await bootstrap({ components: [Users] })).getBean(Users);
    assert.equal((await bean.find(7))?.name, "ann");
    assert.equal(await bean.rename(7, "bo"), undefined);
    assert.equal((await bean.find(7))?.name, "bo");
  });

  it("bounds each call of a store that never answers, and takes the key up again after", async () => {
    let hang = true;
    const entries = new Map<string, unknown>();
    const answer = <T>(value: () => T): Promise<T> =>
      hang ? new Promise<T>(() => {}) : Promise.resolve(value());
    @Component()
    class StuckCacheManager extends CacheManager {
      getCache(_name: string): Cache {
        return {
          get: (key) => answer(() => entries.get(key)),
          put: (key, value) => answer(() => void entries.set(key, value)),
          evict: (key) => answer(() => void entries.delete(key)),
          clear: () => answer(() => entries.clear()),
        };
      }
    }
    @Service()
    class Milk {
      loads = 0;
      @Cacheable("milk")
      async price(sku: string): Promise<number> {
        return ++this.loads + sku.length * 0;
      }
    }
    const { lines, logger } = capture();
    const app = await bootstrap({
      components: [StuckCacheManager, Milk],
      logger,
      config: { thaw: { cache: { milk: { timeout: "20ms" } } } },
    });
    const milk = app.getBean(Milk);
    assert.equal(await milk.price("milk"), 1);
    assert.match(lines[0], /the cache failed to read \(no answer within 20 ms\)/);
    hang = false;
    assert.equal(await milk.price("milk"), 2); // a miss: the first load's put never got there
    assert.equal(await milk.price("milk"), 2);
  });

  it("never fails the caller when the logger itself fails", async () => {
    @Component()
    class DownCacheManager extends CacheManager {
      getCache(_name: string): Cache {
        const down = () => Promise.reject(new Error("ECONNREFUSED"));
        return { get: down, put: down, evict: down, clear: down };
      }
    }
    @Service()
    class Users {
      @Cacheable("users")
      async find(id: number): Promise<number> {
        return id;
      }
    }
    const logger = {
      error: () => {
        throw new Error("logger down");
      },
    };
    const app = await bootstrap({ components: [DownCacheManager, Users], logger });
    assert.equal(await app.getBean(Users).find(5), 5);
  });

  it("takes a ttl of any length, not only what one timer can wait", async () => {
    @Service()
    class Catalog {
      @Cacheable("catalog", { ttl: "30d" })
      async item(id: number): Promise<number> {
        return id;
      }
      @Cacheable("other")
      async other(id: number): Promise<number> {
        return id;
      }
    }
    const app = await bootstrap({
      components: [Catalog],
      config: { thaw: { cache: { other: { ttl: "P400D" } } } },
    });
    assert.equal(await app.getBean(Catalog).item(1), 1);
  });

  it("intercepts the beans of two @Bean methods of one cached class", async () => {
    class Mailbox {
      loads = 0;
      constructor(readonly owner: string) {}
      @Cacheable("mail", { key: (folder: string) => folder })
      async count(folder: string): Promise<string> {
        this.loads++;
        return `${this.owner} ${folder}`;
      }
    }
    @Configuration()
    class Mailboxes {
      @Bean()
      ann(): Mailbox {
        return new Mailbox("ann");
      }
      @Bean()
      bo(): Mailbox {
        return new Mailbox("bo");
      }
    }
    const app = await bootstrap({ components: [Mailboxes] });
    const ann = app.getBean<Mailbox>("ann");
    assert.equal(await ann.count("inbox"), "ann inbox");
    assert.equal(await ann.count("inbox"), "ann inbox");
    assert.equal(ann.loads, 1);
  });

  it("takes the app's own CacheManager, from a class or a @Bean method", async () => {
    const entries = new Map<string, unknown>();
    class MapCacheManager extends CacheManager {
      getCache(name: string): Cache {
        return {
          get: async (key) => entries.get(`${name}/${key}`),
          put: async (key, value) => void entries.set(`${name}/${key}`, value),
          evict: async (key) => void entries.delete(`${name}/${key}`),
          clear: async () => entries.clear(),
        };
      }
    }
    @Configuration()
    class CacheConfig {
      @Bean()
      cacheManager(): MapCacheManager {
        return new MapCacheManager();
      }
    }
    @Service()
    class Greeter {
      @Cacheable("greetings")
      async greet(name: string, punctuation: string): Promise<string> {
        return `Hello, ${name}${punctuation}`;
      }
    }
    const app = await bootstrap({ components: [CacheConfig, Greeter] });
    assert.equal(await app.getBean(Greeter).greet("Ada", "!"), "Hello, Ada!");
    assert.deepEqual([...entries], [['greetings/("Ada","!")', "Hello, Ada!"]]);
    assert.ok(app.getBean(CacheManager) instanceof MapCacheManager);
  });

  it("refuses an argument with no key, naming the method, and calls nothing", async () => {
    @Service()
    class Reports {
      loads = 0;
      @Cacheable("reports")
      async render(_format: () => string): Promise<string> {
        this.loads++;
        return "";
      }
    }
    const reports = (await bootstrap({ components: [Reports] })).getBean(Reports);
    await assert.rejects(reports.render(() => "pdf"), {
      name: "TypeError",
      message: '@Cacheable("reports") on Reports.render(): no cache key: argument 1 is a ' +
        "function, which has no cache key; give { key: (...args) => ... }",
    });
    assert.equal(reports.loads, 0);
  });

  it("refuses at bootstrap a caching decorator on a method not declared async, naming it", async () => {
    // tsx and Bun do not type-check: what the compiler refuses must be refused when it runs.
    @Service()
    class Permissions {
      // @ts-expect-error: a cached method returns a promise.
      @Cacheable("admins")
      isAdmin(user: string): boolean {
        return user === "root";
      }
    }
    @Service()
    class Rates {
      // @ts-expect-error: a cached method returns a promise.
      @CachePut("rates")
      rate(currency: string): number {
        return currency.length;
      }
    }
    @Service()
    class Sessions {
      // @ts-expect-error: a cached method returns a promise.
      @CacheEvict("sessions", { beforeInvocation: true })
      drop(_id: string): boolean {
        return true;
      }
    }
    for (
      const [component, where, decorator] of [
        [Permissions, "Permissions.isAdmin()", '@Cacheable("admins")'],
        [Rates, "Rates.rate()", '@CachePut("rates")'],
        [Sessions, "Sessions.drop()", '@CacheEvict("sessions")'],
      ] as const
    ) {
      await assert.rejects(bootstrap({ components: [component] }), {
        name: "DefinitionError",
        message: `${where} is not declared async, and ${decorator} makes it return a promise: ` +
          "declare it async (a cached call may wait on the store), or leave it uncached",
      });
    }
  });

  it("refuses at bootstrap a thaw.cache name no method uses, with the name it was meant as", async () => {
    @Service()
    class Catalog {
      @Cacheable("prices")
      async price(sku: string): Promise<number> {
        return sku.length;
      }
      @CacheEvict("stock", { allEntries: true })
      async restock(): Promise<void> {}
    }
    for (const name of ["prics", "Prices", "PRICES"]) {
      await assert.rejects(
        bootstrap({
          components: [Catalog],
          config: { thaw: { cache: { [name]: { ttl: "5m" } } } },
        }),
        {
          name: "ConfigError",
          message: new RegExp(
            `thaw\\.cache\\.${name}: no @Cacheable, @CachePut or @CacheEvict method uses a ` +
              `cache named ${name}; did you mean prices\\?$`,
          ),
        },
      );
    }
    await assert.rejects(
      bootstrap({
        components: [Catalog],
        config: { thaw: { cache: { sessions: { ttl: "5m" } } } },
      }),
      {
        name: "ConfigError",
        message:
          /thaw\.cache\.sessions: no @Cacheable, @CachePut or @CacheEvict method uses a cache named sessions; the caches of the app's methods are prices, stock$/,
      },
    );
    @Service()
    class Plain {
      async find(id: number): Promise<number> {
        return id;
      }
    }
    await assert.rejects(
      bootstrap({ components: [Plain], config: { thaw: { cache: { users: { ttl: "5m" } } } } }),
      {
        name: "ConfigError",
        message:
          /thaw\.cache\.users: no @Cacheable, @CachePut or @CacheEvict method uses a cache named users; no method of the app uses a cache$/,
      },
    );
    // Every cache named is used (one by an eviction alone): the app starts.
    const app = await bootstrap({
      components: [Catalog],
      config: { thaw: { cache: { prices: { ttl: "5m" }, stock: { ttl: "1h" } } } },
    });
    assert.equal(await app.getBean(Catalog).price("tea"), 3);
  });

  it("warns at bootstrap of @Cacheable methods that share a cache with default keys, naming them", async () => {
    @Service()
    class Users {
      @Cacheable("users")
      async find(id: number): Promise<string> {
        return `user ${id}`;
      }
      // find(7) and posts(7) have one key: each would get what the other stored.
      @Cacheable("users")
      async posts(id: number): Promise<number> {
        return id;
      }
      @Cacheable("users", { key: (id: number) => ["name", id] })
      async name(id: number): Promise<string> {
        return `name ${id}`;
      }
      @CacheEvict("users")
      async drop(_id: number): Promise<void> {}
    }
    @Service()
    class Prices {
      @Cacheable("prices")
      async price(sku: string): Promise<number> {
        return sku.length;
      }
      // An update of what price() reads: sharing its keys is the point.
      @CachePut("prices")
      async refresh(sku: string): Promise<number> {
        return sku.length + 1;
      }
    }
    const { lines, logger } = capture();
    await bootstrap({ components: [Users, Prices], logger });
    assert.deepEqual(lines, [
      "warn: cache 'users': Users.find() and Users.posts() are @Cacheable with the default key " +
      "(their arguments), so a call of one gets what the other stored for the same arguments; " +
      'give them a key of their own (key: (...args) => ["find", ...args]) or a cache each',
    ]);
  });

  it("warns of an inherited @Cacheable method whose beans share its entries", async () => {
    abstract class Repository {
      abstract readonly kind: string;
      @Cacheable("entities")
      async find(id: number): Promise<string> {
        return `${this.kind} ${id}`;
      }
    }
    @Service()
    class UserRepository extends Repository {
      readonly kind = "user";
    }
    @Service()
    class OrderRepository extends Repository {
      readonly kind = "order";
    }
    class Mailbox {
      constructor(readonly owner: string) {}
      @Cacheable("mail")
      async count(folder: string): Promise<string> {
        return `${this.owner} ${folder}`;
      }
    }
    @Configuration()
    class Mailboxes {
      @Bean()
      ann(): Mailbox {
        return new Mailbox("ann");
      }
      @Bean()
      bo(): Mailbox {
        return new Mailbox("bo");
      }
    }
    const { lines, logger } = capture();
    const app = await bootstrap({
      components: [UserRepository, OrderRepository, Mailboxes],
      logger,
    });
    // What the warning is for: one bean's call gets what the other's stored.
    assert.equal(await app.getBean(UserRepository).find(7), "user 7");
    assert.equal(await app.getBean(OrderRepository).find(7), "user 7");
    const hint = "a key is made of the arguments alone and cannot tell them apart: give each " +
      "class or bean a cache of its own (declaring an inherited method again where it needs one)";
    assert.deepEqual(lines, [
      "warn: cache 'entities': UserRepository.find() and OrderRepository.find() are @Cacheable " +
      "with the default key (their arguments), so a call of one gets what the other stored for " +
      `the same arguments; ${hint}`,
      "warn: cache 'mail': Mailbox.count() of 2 beans is @Cacheable with the default key (its " +
      "arguments), so a call of one gets what the other stored for the same arguments; " + hint,
    ]);
  });

  it("refuses an option the decorator does not take, naming it, the method and the near one", () => {
    const cases: [() => void, string][] = [
      [() => {
        class _Drop {
          @CacheEvict("users", { allEntires: true } as never)
          async drop(): Promise<void> {}
        }
      }, '@CacheEvict("users") on drop: unknown option allEntires; did you mean allEntries?'],
      [() => {
        class _Find {
          @Cacheable("users", { tll: "5m" } as never)
          async find(): Promise<void> {}
        }
      }, '@Cacheable("users") on find: unknown option tll; did you mean ttl?'],
      [
        () => {
          class _Save {
            @CachePut("users", { beforeInvocation: true } as never)
            async save(): Promise<void> {}
          }
        },
        '@CachePut("users") on save: unknown option beforeInvocation; the options of @CachePut are key, ttl, condition, unless',
      ],
      [
        () => {
          class _Find {
            @Cacheable("users", { sync: true } as never)
            async find(): Promise<void> {}
          }
        },
        '@Cacheable("users") on find: unknown option sync; the options of @Cacheable are key, ttl, condition, unless',
      ],
    ];
    for (const [make, message] of cases) assert.throws(make, { name: "TypeError", message });
  });

  it("applies each decorator only where its condition holds, and stores nothing its unless refuses", async () => {
    @Service()
    class Squares {
      loads: number[] = [];
      @Cacheable("squares", {
        condition: (n: number) => n > 0,
        unless: (result: number) => result > 100,
      })
      async square(n: number): Promise<number> {
        this.loads.push(n);
        return n * n;
      }
      @CachePut("squares", { unless: (result: number, n: number) => result === n })
      async set(n: number): Promise<number> {
        return n === 5 ? 5 : n * n + 1;
      }
      @CacheEvict("squares", { condition: (n: number) => n !== 3 })
      async forget(_n: number): Promise<void> {}
    }
    const squares = (await bootstrap({ components: [Squares] })).getBean(Squares);
    for (const n of [-2, -2, 3, 3, 20, 20]) await squares.square(n);
    // -2: not cached (its condition fails); 20: 400 is not stored (unless holds).
    assert.deepEqual(squares.loads, [-2, -2, 3, 20, 20]);
    await squares.set(4);
    assert.equal(await squares.square(4), 17);
    await squares.set(5); // unless holds: 5 is not stored, and square(5) is loaded
    assert.equal(await squares.square(5), 25);
    await squares.forget(3); // its condition fails: 3 stays
    await squares.square(3);
    await squares.forget(4);
    assert.equal(await squares.square(4), 16);
    assert.deepEqual(squares.loads, [-2, -2, 3, 20, 20, 5, 4]);
  });

  it("hands a result its unless refuses to no concurrent caller of the key", async () => {
    const gate = deferred<void>();
    @Service()
    class Profiles {
      viewers: string[] = [];
      // The key leaves the viewer out: what an admin is shown is never to be cached.
      @Cacheable("profiles", {
        key: (id: number) => id,
        unless: (_profile: string, _id: number, viewer: string) => viewer === "admin",
      })
      async profile(id: number, viewer: string): Promise<string> {
        this.viewers.push(viewer);
        if (viewer === "admin") await gate.promise;
        return viewer === "admin" ? `${id}, mail and phone` : `${id}`;
      }
    }
    const profiles = (await bootstrap({ components: [Profiles] })).getBean(Profiles);
    const admin = profiles.profile(7, "admin");
    await until(() => profiles.viewers.length === 1);
    const mallory = profiles.profile(7, "mallory");
    gate.resolve();
    assert.equal(await admin, "7, mail and phone");
    assert.equal(await mallory, "7");
    assert.deepEqual(profiles.viewers, ["admin", "mallory"]);
    // Mallory's own answer is stored, as unless lets it be.
    assert.equal(await profiles.profile(7, "eve"), "7");
    assert.deepEqual(profiles.viewers, ["admin", "mallory"]);
  });

  it("refuses a condition or unless that answers anything but true or false, naming the method", async () => {
    @Service()
    class Lookups {
      loads = 0;
      @Cacheable("a", { condition: (() => "yes") as never })
      async a(): Promise<number> {
        return ++this.loads;
      }
      @Cacheable("b", { unless: (async () => false) as never })
      async b(): Promise<number> {
        return ++this.loads;
      }
    }
    const lookups = (await bootstrap({ components: [Lookups] })).getBean(Lookups);
    await assert.rejects(lookups.a(), {
      name: "TypeError",
      message: '@Cacheable("a") on Lookups.a(): condition must answer true or false, got a string',
    });
    assert.equal(lookups.loads, 0);
    await assert.rejects(lookups.b(), {
      name: "TypeError",
      message: '@Cacheable("b") on Lookups.b(): unless must answer true or false, got a promise ' +
        "(it must answer at once)",
    });
    assert.throws(() => Cacheable("a", { condition: true as never }), {
      name: "TypeError",
      message: /condition must be a function of the method's arguments/,
    });
  });

  it("refuses bad options at the decorator, and bad thaw.cache keys at bootstrap", async () => {
    const bad: [() => unknown, RegExp][] = [
      [() => Cacheable(""), /^@Cacheable\(""\): name the cache/],
      [() => Cacheable("a", { ttl: "5 minutes" }), /ttl: give milliseconds \(250\) or a duration/],
      [() => Cacheable("a", { ttl: 0 }), /ttl: give milliseconds .*, above 0, got 0/],
      [() => Cacheable("a", { key: "id" as never }), /key must be a function/],
      [
        () => CacheEvict("a", { allEntries: true, key: (x: number) => x } as never),
        /give key or allEntries, not both/,
      ],
    ];
    for (const [make, message] of bad) assert.throws(make, { name: "TypeError", message });
    assert.throws(
      () => {
        class _Twice {
          @Cacheable("a")
          @CachePut("a")
          async m(): Promise<void> {}
        }
      },
      { message: '@Cacheable("a") on m: a method is @Cacheable or @CachePut once' },
    );
    assert.throws(
      () => {
        class _Static {
          @Cacheable("a")
          static async m(): Promise<void> {}
        }
      },
      { message: '@Cacheable("a") on m: it caches public instance methods only' },
    );

    @Service()
    class Users {
      @Cacheable("users")
      async find(id: number): Promise<number> {
        return id;
      }
    }
    for (
      const [cache, message] of [
        [
          { users: { tll: "5m" } },
          /thaw\.cache\.users\.tll: unknown key; the keys of a cache are ttl, max-entries, max-bytes, timeout/,
        ],
        [
          { users: { ttl: "soon" } },
          /thaw\.cache\.users\.ttl: give milliseconds \(250\) or a duration/,
        ],
        [
          { users: { "max-entries": 0 } },
          /thaw\.cache\.users\.max-entries must be a whole number from 1, got 0/,
        ],
        [
          { users: 5 },
          /thaw\.cache\.users must be a mapping of ttl, max-entries, max-bytes, timeout/,
        ],
      ] as const
    ) {
      await assert.rejects(
        bootstrap({ components: [Users], config: { thaw: { cache: cache } } }),
        (e) => e instanceof ConfigError && message.test(e.message),
      );
    }
  });
});
