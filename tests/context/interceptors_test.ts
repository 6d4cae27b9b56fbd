// deno-lint-ignore-file require-await -- the beans' async methods stand for an app's I/O.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApplicationEventPublisher,
  Autowired,
  Bean,
  bootstrap,
  Component,
  Configuration,
  DefinitionError,
  EventListener,
  GetMapping,
  type MethodInterceptor,
  type MethodInvocation,
  NoSuchBeanError,
  PathVariable,
  PostConstruct,
  PreDestroy,
  RestController,
  Service,
  UseInterceptors,
} from "../../mod.ts";

/** Interceptors that write where they run into one shared log. */
function recorder() {
  const log: string[] = [];
  const named = (tag: string) => {
    @Component()
    class Tagged implements MethodInterceptor {
      intercept(invocation: MethodInvocation, next: () => unknown): unknown {
        log.push(`${tag}>${invocation.method}`);
        const result = next();
        log.push(`${tag}<`);
        return result;
      }
    }
    Object.defineProperty(Tagged, "name", { value: tag });
    return Tagged;
  };
  return { log, named };
}

describe("@UseInterceptors", () => {
  it("runs the class's interceptors, then the method's, as written, the first outermost", async () => {
    const { log, named } = recorder();
    const [A, B, C, D] = ["A", "B", "C", "D"].map(named);
    @Service()
    @UseInterceptors(A)
    @UseInterceptors(B)
    class Orders {
      @UseInterceptors(C, D)
      place(): string {
        log.push("place");
        return "placed";
      }
    }
    const app = await bootstrap({ components: [A, B, C, D, Orders] });
    assert.equal(app.getBean(Orders).place(), "placed");
    assert.deepEqual(log, [
      "A>place",
      "B>place",
      "C>place",
      "D>place",
      "place",
      "D<",
      "C<",
      "B<",
      "A<",
    ]);
  });

  it("runs an interceptor named twice for a method once, where it first appears", async () => {
    const { log, named } = recorder();
    const [A, B] = ["A", "B"].map(named);
    @Service()
    @UseInterceptors(A)
    class Orders {
      @UseInterceptors(B, A)
      @UseInterceptors(B)
      place(): void {}
    }
    const app = await bootstrap({ components: [A, B, Orders] });
    app.getBean(Orders).place();
    assert.deepEqual(log, ["A>place", "B>place", "B<", "A<"]);
  });

  it("builds interceptors as beans: they get their own dependencies, and one instance serves all", async () => {
    @Service()
    class Clock {
      now(): number {
        return 42;
      }
    }
    const seen: object[] = [];
    @Component()
    class Stamp implements MethodInterceptor {
      @Autowired(Clock)
      clock!: Clock;
      intercept(_invocation: MethodInvocation, next: () => unknown): unknown {
        seen.push(this);
        return `${next()}@${this.clock.now()}`;
      }
    }
    @Service()
    @UseInterceptors(Stamp)
    class Notes {
      a(): string {
        return "a";
      }
      b(): string {
        return "b";
      }
    }
    const app = await bootstrap({ components: [Notes, Stamp, Clock] });
    const notes = app.getBean(Notes);
    assert.equal(notes.a(), "a@42");
    assert.equal(notes.b(), "b@42");
    assert.equal(seen[0], app.getBean(Stamp));
    assert.equal(seen[1], seen[0]);
  });

  it("passes async results and errors through unchanged", async () => {
    @Component()
    class Pass implements MethodInterceptor {
      intercept(_invocation: MethodInvocation, next: () => unknown): unknown {
        return next();
      }
    }
    const failure = new RangeError("no such account");
    @Service()
    @UseInterceptors(Pass)
    class Accounts {
      async balance(id: number): Promise<number> {
        await Promise.resolve();
        if (id < 0) throw failure;
        return id * 2;
      }
      check(id: number): number {
        if (id < 0) throw failure;
        return id;
      }
    }
    const app = await bootstrap({ components: [Pass, Accounts] });
    const accounts = app.getBean(Accounts);
    const pending = accounts.balance(4);
    assert.ok(pending instanceof Promise);
    assert.equal(await pending, 8);
    await assert.rejects(accounts.balance(-1), (e) => e === failure);
    assert.equal(accounts.check(3), 3);
    assert.throws(() => accounts.check(-1), (e) => e === failure);
  });

  it("lets an interceptor change the arguments, skip the method or run it again", async () => {
    let runs = 0;
    @Component()
    class Retry implements MethodInterceptor {
      async intercept(_invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
        for (let attempt = 1;; attempt++) {
          try {
            return await next();
          } catch (error) {
            if (attempt === 3) throw error;
          }
        }
      }
    }
    @Component()
    class Doubling implements MethodInterceptor {
      intercept(invocation: MethodInvocation, next: () => unknown): unknown {
        invocation.args[0] = (invocation.args[0] as number) * 2;
        return next();
      }
    }
    @Component()
    class Refuse implements MethodInterceptor {
      intercept(invocation: MethodInvocation, next: () => unknown): unknown {
        return invocation.args[0] === "no" ? "refused" : next();
      }
    }
    @Service()
    class Flaky {
      @UseInterceptors(Retry)
      async fetch(): Promise<string> {
        runs++;
        if (runs < 3) throw new Error(`attempt ${runs} failed`);
        return `ok after ${runs}`;
      }
      @UseInterceptors(Doubling)
      twice(n: number): number {
        return n;
      }
      @UseInterceptors(Refuse)
      answer(word: string): string {
        runs += 100;
        return word;
      }
    }
    const app = await bootstrap({ components: [Retry, Doubling, Refuse, Flaky] });
    const flaky = app.getBean(Flaky);
    assert.equal(await flaky.fetch(), "ok after 3");
    assert.equal(flaky.twice(21), 42);
    assert.equal(flaky.answer("no"), "refused");
    assert.equal(runs, 3);
  });

  it("intercepts the bean's own calls, and every method of its class but its lifecycle hooks", async () => {
    const { log, named } = recorder();
    const A = named("A");
    @Service()
    @UseInterceptors(A)
    class Users {
      @PostConstruct()
      open(): void {
        log.push("open");
      }
      @PreDestroy()
      close(): void {
        log.push("close");
      }
      find(id: number): number {
        return id;
      }
      findTwice(id: number): number {
        return this.find(id) + this.find(id);
      }
    }
    const app = await bootstrap({ components: [A, Users] });
    assert.deepEqual(log, ["open"]);
    log.length = 0;
    assert.equal(app.getBean(Users).findTwice(2), 4);
    assert.deepEqual(log, ["A>findTwice", "A>find", "A<", "A>find", "A<", "A<"]);
    log.length = 0;
    await app.close();
    assert.deepEqual(log, ["close"]);
  });

  it("keeps a parent's interceptors for a subclass, on inherited and overriding methods", async () => {
    const { log, named } = recorder();
    const [A, B] = ["A", "B"].map(named);
    @UseInterceptors(A)
    class Base {
      hello(): string {
        return "base";
      }
      @UseInterceptors(B)
      bye(): string {
        return "bye";
      }
    }
    @Service()
    class Derived extends Base {
      override bye(): string {
        return "derived bye";
      }
    }
    const app = await bootstrap({ components: [A, B, Derived] });
    const bean = app.getBean(Derived);
    assert.equal(bean.hello(), "base");
    assert.equal(bean.bye(), "derived bye");
    assert.deepEqual(log, ["A>hello", "A<", "A>bye", "B>bye", "B<", "A<"]);
  });

  it("intercepts a @Bean method's bean, and leaves an object made with new alone", async () => {
    const { log, named } = recorder();
    const A = named("A");
    @UseInterceptors(A)
    class Mailer {
      send(): string {
        return "sent";
      }
    }
    @Configuration()
    class MailConfig {
      @Bean()
      mailer(): Mailer {
        return new Mailer();
      }
    }
    const app = await bootstrap({ components: [A, MailConfig] });
    assert.equal(app.getBean(Mailer).send(), "sent");
    assert.equal(new Mailer().send(), "sent");
    assert.deepEqual(log, ["A>send", "A<"]);
  });

  it("intercepts a @Configuration class's @Bean methods on every runtime", async () => {
    const { log, named } = recorder();
    const A = named("A");
    @Configuration()
    @UseInterceptors(A)
    class Clocks {
      @Bean()
      greeting(): string {
        return "hello";
      }
    }
    const app = await bootstrap({ components: [A, Clocks] });
    assert.equal(app.getBean("greeting"), "hello");
    assert.deepEqual(log, ["A>greeting", "A<"]);
  });

  it("wraps an object two apps share once, with the latest app's interceptors", async () => {
    const { log, named } = recorder();
    const A = named("A");
    @UseInterceptors(A)
    class Mailer {
      send(): string {
        return "sent";
      }
    }
    const shared = new Mailer();
    @Configuration()
    class MailConfig {
      @Bean()
      mailer(): Mailer {
        return shared;
      }
    }
    const first = await bootstrap({ components: [A, MailConfig] });
    await first.close();
    const second = await bootstrap({ components: [A, MailConfig] });
    assert.equal(shared.send(), "sent");
    assert.deepEqual(log, ["A>send", "A<"]);
    assert.equal(second.getBean(Mailer), shared);
  });

  it("intercepts a controller's handlers, whose binders are still checked against the method", async () => {
    const { log, named } = recorder();
    const A = named("A");
    @RestController()
    class Items {
      @UseInterceptors(A)
      @GetMapping("/items/{id}", PathVariable("id", Number))
      item(id: number): { id: number } {
        return { id };
      }
    }
    const app = await bootstrap({ controllers: [Items], components: [A] });
    const response = await app.fetch(new Request("http://localhost/items/7"));
    assert.deepEqual(await response.json(), { id: 7 });
    assert.deepEqual(log, ["A>item", "A<"]);

    @RestController()
    class Missing {
      @UseInterceptors(A)
      // @ts-expect-error: the compiler refuses it too; this is the check at bootstrap.
      @GetMapping("/x")
      x(_a: string): string {
        return "";
      }
    }
    await assert.rejects(bootstrap({ controllers: [Missing], components: [A] }), {
      message: /Missing\.x .*the method takes 1 argument\(s\) but 0 binder\(s\)/,
    });
  });

  it("stops bootstrap, naming the interceptor and the method, when it is not a bean", async () => {
    class Unregistered implements MethodInterceptor {
      intercept(_invocation: MethodInvocation, next: () => unknown): unknown {
        return next();
      }
    }
    @Service()
    class Users {
      @UseInterceptors(Unregistered)
      find(): void {}
    }
    await assert.rejects(bootstrap({ components: [Users] }), (e) => {
      assert.ok(e instanceof NoSuchBeanError);
      assert.match(
        (e as Error).message,
        /^No bean of class Unregistered for @UseInterceptors\(Unregistered\) on Users\.find\(\): /,
      );
      return true;
    });

    @Component()
    class NotAnInterceptor {}
    @Service()
    class Orders {
      @UseInterceptors(NotAnInterceptor as never)
      place(): void {}
    }
    await assert.rejects(bootstrap({ components: [NotAnInterceptor, Orders] }), (e) => {
      assert.ok(e instanceof DefinitionError);
      assert.equal(
        (e as Error).message,
        "The interceptor NotAnInterceptor of Orders.place() has no intercept(invocation, next) method",
      );
      return true;
    });
  });

  it("refuses, at the decorator, no interceptor, one that is not a class, and methods it cannot wrap", () => {
    assert.throws(
      () => {
        @UseInterceptors()
        class _Empty {}
      },
      { message: "@UseInterceptors on class _Empty: name at least one interceptor class" },
    );
    assert.throws(
      () => {
        class _Bad {
          @UseInterceptors(undefined as never)
          m(): void {}
        }
      },
      { message: /^@UseInterceptors on m: item 1 is undefined, not a class/ },
    );
    @Component()
    class A implements MethodInterceptor {
      intercept(_invocation: MethodInvocation, next: () => unknown): unknown {
        return next();
      }
    }
    assert.throws(
      () => {
        class _Static {
          @UseInterceptors(A)
          static m(): void {}
        }
      },
      { message: "Interceptors on m: they run around public instance methods only" },
    );
    assert.throws(
      () => {
        class _Private {
          @UseInterceptors(A)
          #m(): void {}
        }
      },
      { message: "Interceptors on #m: they run around public instance methods only" },
    );
    assert.throws(
      // What a legacy (experimentalDecorators) call passes: the prototype and the name.
      () => (UseInterceptors(A) as (...args: unknown[]) => void)({}, "m", {}),
      { message: /called as a legacy decorator/ },
    );
  });

  it("never makes a method that returns a value return a promise: the call fails, naming both", async () => {
    // The docs' own timing interceptor, on a class with a method that answers at once.
    @Component()
    class Timing implements MethodInterceptor {
      readonly lines: string[] = [];
      async intercept(invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
        try {
          return await next();
        } finally {
          this.lines.push(invocation.method);
        }
      }
    }
    @Service()
    @UseInterceptors(Timing)
    class Permissions {
      checks = 0;
      isAdmin(user: string): boolean {
        this.checks++;
        return user === "root";
      }
      async role(user: string): Promise<string> {
        return user === "root" ? "admin" : "user";
      }
      // Not declared async, but returns a promise: the interceptor keeps it one.
      count(): Promise<number> {
        return Promise.resolve(this.checks);
      }
    }
    const app = await bootstrap({ components: [Timing, Permissions] });
    const permissions = app.getBean(Permissions);
    assert.throws(() => permissions.isAdmin("mallory"), {
      name: "TypeError",
      message: "Timing.intercept() returned a promise around Permissions.isAdmin(), which " +
        "returned a boolean, not a promise: an interceptor must return what next() returns in " +
        "kind, or a caller's `if (permissions.isAdmin(...))` holds whatever the answer; declare " +
        "the method async if it is meant to return a promise, or let the interceptor return " +
        "next()'s value as it is when it is not a promise",
    });
    assert.equal(await permissions.role("root"), "admin");
    assert.equal(await permissions.count(), 1);
    assert.deepEqual(app.getBean(Timing).lines, ["isAdmin", "role", "count"]);
  });

  it("refuses an interceptor that awaits before next() around a method not declared async", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => release = resolve);
    let refusedLater!: (error: unknown) => void;
    const later = new Promise<unknown>((resolve) => refusedLater = resolve);
    @Component()
    class Audit implements MethodInterceptor {
      async intercept(_invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
        await gate;
        try {
          return next();
        } catch (error) {
          refusedLater(error);
          throw error;
        }
      }
    }
    @Service()
    class Vault {
      opened = 0;
      @UseInterceptors(Audit)
      open(): boolean {
        this.opened++;
        return true;
      }
    }
    const app = await bootstrap({ components: [Audit, Vault] });
    const vault = app.getBean(Vault);
    assert.throws(() => vault.open(), {
      name: "TypeError",
      message:
        /^Audit\.intercept\(\) returned a promise before calling next\(\) around Vault\.open\(\), which is not declared async: /,
    });
    release();
    // The interceptor's late next() does not run the method the caller was refused.
    assert.match(String(await later), /Audit\.intercept\(\) returned a promise before/);
    assert.equal(vault.opened, 0);
  });

  it("never makes a thenable that is not a promise (a query builder) a promise", async () => {
    @Component()
    class Timing implements MethodInterceptor {
      async intercept(_invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
        return await next();
      }
    }
    @Component()
    class Passing implements MethodInterceptor {
      intercept(_invocation: MethodInvocation, next: () => unknown): unknown {
        return next();
      }
    }
    // Awaited, it runs; its type says a Query, whose where() the caller goes on to call.
    class Query implements PromiseLike<number[]> {
      readonly filters: string[] = [];
      where(filter: string): Query {
        this.filters.push(filter);
        return this;
      }
      then<A = number[], B = never>(
        ok?: ((rows: number[]) => A | PromiseLike<A>) | null,
        failed?: ((reason: unknown) => B | PromiseLike<B>) | null,
      ): PromiseLike<A | B> {
        return Promise.resolve([1, 2]).then(ok, failed);
      }
    }
    @Service()
    @UseInterceptors(Timing)
    class Orders {
      ran = 0;
      query(): Query {
        this.ran++;
        return new Query();
      }
    }
    @Service()
    @UseInterceptors(Passing)
    class Items {
      query(): Query {
        return new Query();
      }
    }
    const app = await bootstrap({ components: [Timing, Passing, Orders, Items] });
    const orders = app.getBean(Orders);
    assert.throws(() => orders.query().where("paid"), {
      name: "TypeError",
      message:
        /^Timing\.intercept\(\) returned a promise around Orders\.query\(\), which returned a thenable that is not a promise, /,
    });
    assert.equal(orders.ran, 1);
    // An interceptor that hands on what next() gave keeps it as it is.
    const query = app.getBean(Items).query().where("paid");
    assert.ok(query instanceof Query);
    assert.deepEqual(await query, [1, 2]);
  });

  it("runs none of a lazy thenable it refuses: an interceptor's query is not sent", () => {
    // Sent to the database once awaited (`then` called), as query builders are.
    class LazyQuery implements PromiseLike<number> {
      sent = 0;
      then<A = number, B = never>(
        ok?: ((count: number) => A | PromiseLike<A>) | null,
        failed?: ((reason: unknown) => B | PromiseLike<B>) | null,
      ): PromiseLike<A | B> {
        this.sent++;
        return Promise.resolve(1).then(ok, failed);
      }
    }
    const made: LazyQuery[] = [];
    @Component()
    class Counting implements MethodInterceptor {
      intercept(_invocation: MethodInvocation, next: () => unknown): unknown {
        next();
        const query = new LazyQuery();
        made.push(query);
        return query;
      }
    }
    @Service()
    @UseInterceptors(Counting)
    class Permissions {
      isAdmin(_user: string): boolean {
        return false;
      }
    }
    return bootstrap({ components: [Counting, Permissions] }).then(async (app) => {
      assert.throws(() => app.getBean(Permissions).isAdmin("mallory"), { name: "TypeError" });
      assert.equal(made.length, 1);
      // Adopting a thenable calls its `then` in a microtask: every one has run by the next task.
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.equal(made[0].sent, 0);
    });
  });

  it("lets an interceptor answer with a promise where Thaw awaits the answer: a route, a listener, a @Bean method", async () => {
    @Component()
    class Audit implements MethodInterceptor {
      readonly seen: string[] = [];
      async intercept(invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
        const result = await next();
        this.seen.push(invocation.method);
        return result;
      }
    }
    class Ping {}
    @RestController()
    @UseInterceptors(Audit)
    class Health {
      heard = 0;
      @GetMapping("/ping")
      ping(): { ok: boolean } {
        return { ok: true };
      }
      @EventListener(Ping)
      hear(_event: Ping): void {
        this.heard++;
      }
    }
    @Service()
    class Pinger {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
    }
    @Configuration()
    @UseInterceptors(Audit)
    class Greetings {
      @Bean()
      greeting(): string {
        return "hello";
      }
    }
    const app = await bootstrap({
      controllers: [Health],
      components: [Audit, Pinger, Greetings],
    });
    assert.equal(app.getBean("greeting"), "hello");
    const response = await app.fetch(new Request("http://localhost/ping"));
    assert.deepEqual(await response.json(), { ok: true });
    await app.getBean(Pinger).events.publishEvent(new Ping());
    assert.equal(app.getBean(Health).heard, 1);
    assert.deepEqual(app.getBean(Audit).seen, ["greeting", "ping", "hear"]);
    // Called by code of one's own, the handler still answers with a value or fails.
    assert.throws(() => app.getBean(Health).ping(), { name: "TypeError" });
  });

  it("keeps an async method's answer a promise, whatever its interceptor returns or throws", async () => {
    const failure = new RangeError("refused");
    @Component()
    class Shortcut implements MethodInterceptor {
      intercept(invocation: MethodInvocation, next: () => unknown): unknown {
        if (invocation.args[0] === "cached") return 7;
        if (invocation.args[0] === "denied") throw failure;
        return next();
      }
    }
    @Service()
    @UseInterceptors(Shortcut)
    class Lookups {
      async find(_what: string): Promise<number> {
        return 1;
      }
    }
    const app = await bootstrap({ components: [Shortcut, Lookups] });
    const lookups = app.getBean(Lookups);
    const cached = lookups.find("cached");
    assert.ok(cached instanceof Promise);
    assert.equal(await cached, 7);
    const denied = lookups.find("denied");
    assert.ok(denied instanceof Promise);
    await assert.rejects(denied, (e) => e === failure);
    assert.equal(await lookups.find("other"), 1);
  });

  it("reports a cycle through an interceptor as a cycle", async () => {
    @Component()
    class Guard implements MethodInterceptor {
      @Autowired("vault")
      vault!: unknown;
      intercept(_invocation: MethodInvocation, next: () => unknown): unknown {
        return next();
      }
    }
    @Service()
    class Vault {
      @UseInterceptors(Guard)
      open(): void {}
    }
    await assert.rejects(bootstrap({ components: [Vault, Guard] }), (e) => {
      assert.equal((e as Error).name, "CircularDependencyError");
      assert.match((e as Error).message, /vault.*guard.*vault/);
      return true;
    });
  });
});
