import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Autowired,
  Bean,
  bootstrap,
  type Class,
  Component,
  Configuration,
  DefinitionError,
  PostConstruct,
  PreDestroy,
  Service,
} from "../../mod.ts";
import { ApplicationContext } from "../../src/context/application_context.ts";
import { propertyOptions } from "../property.ts";
import { aggregateOf } from "../helpers.ts";

/** A promise that never settles: a hook stuck on a connection that never answers. */
function never(): Promise<void> {
  return new Promise<void>(() => {});
}

describe("@PostConstruct", () => {
  it("runs once the fields are set, awaited, before any dependent is built", async () => {
    const events: string[] = [];
    @Service()
    class Database {
      connected = false;
      @PostConstruct()
      async connect(): Promise<void> {
        events.push("connect starts");
        await Promise.resolve();
        this.connected = true;
        events.push("connect ends");
      }
    }
    @Service()
    class Users {
      @Autowired(Database)
      db!: Database;
      readonly sawConnected: boolean;
      constructor() {
        this.sawConnected = this.db.connected;
        events.push("users constructed");
      }
      @PostConstruct()
      ready(): void {
        events.push(`users ready, db ${this.db.connected ? "up" : "down"}`);
      }
    }
    const app = await bootstrap({ components: [Users, Database] });
    assert.equal(app.getBean(Users).sawConnected, true);
    assert.deepEqual(events, [
      "connect starts",
      "connect ends",
      "users constructed",
      "users ready, db up",
    ]);
  });

  it("runs a parent's hooks first, an overridden one once (the subclass's), #private too", async () => {
    const calls: string[] = [];
    class Base {
      @PostConstruct()
      first(): void {
        calls.push("Base.first");
      }
      @PostConstruct()
      second(): void {
        calls.push("Base.second");
      }
      @PreDestroy()
      release(): void {
        calls.push("Base.release");
      }
    }
    @Service()
    class Derived extends Base {
      @PostConstruct()
      override second(): void {
        calls.push("Derived.second");
      }
      @PostConstruct()
      #own(): void {
        calls.push("Derived.#own");
      }
      @PreDestroy()
      #stop(): void {
        calls.push("Derived.#stop");
      }
    }
    const app = await bootstrap({ components: [Derived] });
    assert.deepEqual(calls, ["Base.first", "Derived.second", "Derived.#own"]);
    calls.length = 0;
    await app.close();
    // Stopping mirrors starting: the subclass lets go first.
    assert.deepEqual(calls, ["Derived.#stop", "Base.release"]);
  });

  it("runs on what a @Bean method returns, when it is an instance of a decorated class", async () => {
    const calls: string[] = [];
    class Pool {
      @PostConstruct()
      open(): void {
        calls.push("open");
      }
      @PreDestroy()
      end(): void {
        calls.push("end");
      }
    }
    @Configuration()
    class Pools {
      @Bean()
      pool(): Pool {
        return new Pool();
      }
    }
    // The same object under a second name is started and stopped once.
    @Configuration()
    class Aliases {
      @Autowired("pool")
      pool!: Pool;
      @Bean()
      samePool(): Pool {
        return this.pool;
      }
    }
    const app = await bootstrap({ components: [Pools, Aliases] });
    assert.deepEqual(calls, ["open"]);
    assert.equal(app.getBean("samePool"), app.getBean("pool"));
    calls.length = 0;
    await app.close();
    assert.deepEqual(calls, ["end"]);
  });

  it("one that throws rejects naming the bean and method, after stopping the started beans", async () => {
    const calls: string[] = [];
    const cause = new Error("disk full");
    @Service()
    class Clock {
      @PreDestroy()
      stop(): void {
        calls.push("Clock.stop");
      }
    }
    @Service()
    class Cache {
      @Autowired(Clock)
      clock!: Clock;
      @PreDestroy()
      async flush(): Promise<void> {
        await Promise.resolve();
        calls.push("Cache.flush");
      }
    }
    @Service()
    class UserRepository {
      @Autowired(Cache)
      cache!: Cache;
      @PostConstruct()
      async open(): Promise<void> {
        await Promise.resolve();
        throw cause;
      }
      @PreDestroy()
      close(): void {
        calls.push("UserRepository.close");
      }
    }
    @Service()
    class Later {
      @PreDestroy()
      stop(): void {
        calls.push("Later.stop");
      }
    }
    await assert.rejects(
      bootstrap({ components: [Clock, UserRepository, Cache, Later] }),
      (e: unknown) => {
        assert.ok(e instanceof DefinitionError);
        assert.equal(e.message, "@PostConstruct UserRepository.open() threw: disk full");
        assert.equal(e.cause, cause);
        return true;
      },
    );
    assert.deepEqual(calls, ["Cache.flush", "Clock.stop"]);
  });

  it("names the bean when its name is not the class's own", async () => {
    class Client {
      @PostConstruct()
      connect(): void {
        throw "refused";
      }
    }
    @Configuration()
    class Clients {
      @Bean("searchClient")
      client(): Client {
        return new Client();
      }
    }
    await assert.rejects(
      bootstrap({ components: [Clients] }),
      (e: unknown) =>
        e instanceof DefinitionError &&
        e.message === "@PostConstruct Client.connect() of bean 'searchClient' threw: refused",
    );
  });

  it("tells, with the start failure, a @PreDestroy that failed while stopping", async () => {
    @Service()
    class Leaky {
      @PreDestroy()
      stop(): void {
        throw new Error("socket stuck");
      }
    }
    @Service()
    class Failing {
      @Autowired(Leaky)
      leaky!: Leaky;
      @PostConstruct()
      start(): void {
        throw new Error("no");
      }
    }
    await assert.rejects(
      bootstrap({ components: [Failing, Leaky] }),
      (e: unknown) =>
        e instanceof DefinitionError &&
        e.message.startsWith("@PostConstruct Failing.start() threw: no; ") &&
        e.message.includes("@PreDestroy Leaky.stop() threw: socket stuck"),
    );
  });

  it("decorates instance methods only", () => {
    assert.throws(() => {
      class Holder {
        @PostConstruct()
        static init(): void {}
      }
      return Holder;
    }, /@PostConstruct on init: it decorates instance methods only/);
    assert.throws(() => {
      class Holder {
        @PreDestroy()
        static stop(): void {}
      }
      return Holder;
    }, /@PreDestroy on stop: it decorates instance methods only/);
  });
});

describe("close()", () => {
  it("stops each started bean once, the latest started first; a second call is the same", async () => {
    const calls: string[] = [];
    @Service()
    class A {
      @PreDestroy()
      stop(): void {
        calls.push("a");
      }
    }
    @Service()
    class B {
      @Autowired(A)
      a!: A;
      @PreDestroy()
      async stop(): Promise<void> {
        await Promise.resolve();
        calls.push("b");
      }
    }
    const app = await bootstrap({ components: [B, A] });
    const { close } = app;
    const first = close();
    assert.equal(app.close(), first);
    await first;
    await close();
    assert.deepEqual(calls, ["b", "a"]);
  });

  it("goes on past failures and rejects with every one, naming bean and method", async () => {
    const calls: string[] = [];
    const boom = new Error("boom");
    @Service()
    class First {
      @PreDestroy()
      stop(): void {
        calls.push("first");
      }
    }
    @Service()
    class Second {
      @PreDestroy()
      stop(): Promise<void> {
        calls.push("second");
        return Promise.reject(boom);
      }
    }
    @Service("third")
    class Third {
      @PreDestroy()
      stop(): void {
        calls.push("third");
        throw new Error("bang");
      }
    }
    const app = await bootstrap({ components: [First, Second, Third] });
    const error = await aggregateOf(app.close());
    assert.deepEqual(calls, ["third", "second", "first"]);
    assert.deepEqual(error.errors.map((e: Error) => e.message), [
      "@PreDestroy Third.stop() threw: bang",
      "@PreDestroy Second.stop() threw: boom",
    ]);
    assert.equal(error.errors[1].cause, boom);
    assert.match(error.message, /2 @PreDestroy hooks failed: @PreDestroy Third\.stop\(\) threw/);
  });

  it("goes on past a thrown value that cannot be made text, at start and at stop", async () => {
    const calls: string[] = [];
    const opaque = Object.create(null);
    @Service()
    class Kept {
      @PreDestroy()
      stop(): void {
        calls.push("kept");
      }
    }
    @Service()
    class Opaque {
      @PreDestroy()
      stop(): void {
        calls.push("opaque");
        throw opaque;
      }
    }
    const app = await bootstrap({ components: [Kept, Opaque] });
    const error = await aggregateOf(app.close());
    assert.deepEqual(calls, ["opaque", "kept"]);
    assert.equal(error.errors.length, 1);
    assert.match(error.errors[0].message, /^@PreDestroy Opaque\.stop\(\) threw: /);
    assert.equal(error.errors[0].cause, opaque);

    @Service()
    class Failing {
      @PostConstruct()
      start(): void {
        throw opaque;
      }
    }
    await assert.rejects(
      bootstrap({ components: [Failing] }),
      (e: Error) =>
        /^@PostConstruct Failing\.start\(\) threw: /.test(e.message) && e.cause === opaque,
    );
  });

  it("counts a hook still running after the timeout as failed, and does not wait for it", async () => {
    const calls: string[] = [];
    @Service()
    class Quick {
      @PreDestroy()
      stop(): void {
        calls.push("quick");
      }
    }
    @Service()
    class Stuck {
      @PreDestroy()
      stop(): Promise<void> {
        calls.push("stuck");
        return never();
      }
    }
    const context = new ApplicationContext();
    context.register(Quick);
    context.register(Stuck);
    await context.refresh();
    const error = await aggregateOf(context.close(3));
    assert.deepEqual(calls, ["stuck", "quick"]);
    assert.deepEqual(error.errors.map((e: Error) => e.message), [
      "@PreDestroy Stuck.stop() timed out after 3 ms",
    ]);
  });

  it("bounds each hook by server.shutdown-timeout", async () => {
    @Service()
    class Stuck {
      @PreDestroy()
      stop(): Promise<void> {
        return never();
      }
    }
    const app = await bootstrap({
      components: [Stuck],
      config: { server: { "shutdown-timeout": 0 } },
    });
    const error = await aggregateOf(app.close());
    assert.deepEqual(error.errors.map((e: Error) => e.message), [
      "@PreDestroy Stuck.stop() timed out after 0 ms",
    ]);
  });

  it("resolves with nothing to stop, and refuses a timeout that is not one", async () => {
    const context = new ApplicationContext();
    await context.close(0);
    await assert.rejects(new ApplicationContext().close(-1), RangeError);
    await assert.rejects(new ApplicationContext().close(Number.NaN), /close\(timeoutMs\)/);
    assert.throws(() => new ApplicationContext({ shutdownTimeoutMs: 2 ** 31 }), RangeError);
  });
});

/** A random acyclic bean graph: bean `i` uses some of the beans before it. */
interface Graph {
  readonly dependencies: readonly (readonly number[])[];
  /** The order the classes are registered in. */
  readonly order: readonly number[];
  /** The bean whose @PostConstruct throws, if any. */
  readonly failing: number | undefined;
}

const graphs: fc.Arbitrary<Graph> = fc.integer({ min: 1, max: 8 }).chain((n) =>
  fc.record({
    dependencies: fc.tuple(
      ...Array.from(
        { length: n },
        (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => j)),
      ),
    ),
    order: fc.shuffledSubarray(
      Array.from({ length: n }, (_, i) => i),
      { minLength: n, maxLength: n },
    ),
    failing: fc.option(fc.integer({ min: 0, max: n - 1 }), { nil: undefined }),
  })
);

type Event = readonly ["construct" | "start" | "stop", number];

/** Adds an `@Autowired` field for `dependency` on top of `base`: one subclass per edge. */
function withDependency(base: Class<object>, dependency: Class): Class<object> {
  class Uses extends (base as new () => object) {
    @Autowired(dependency)
    used!: unknown;
  }
  return Uses;
}

/** The beans of a graph, made with the real decorators, logging what the container does. */
function beanClasses(graph: Graph, events: Event[]): Class[] {
  const classes: Class[] = [];
  graph.dependencies.forEach((dependencies, i) => {
    let base: Class<object> = Object;
    for (const j of dependencies) base = withDependency(base, classes[j]);
    @Component(`bean${i}`)
    class Node extends (base as new () => object) {
      constructor() {
        super();
        events.push(["construct", i]);
      }
      @PostConstruct()
      async start(): Promise<void> {
        await Promise.resolve();
        if (graph.failing === i) throw new Error(`bean ${i} cannot start`);
        events.push(["start", i]);
      }
      @PreDestroy()
      async stop(): Promise<void> {
        await Promise.resolve();
        events.push(["stop", i]);
      }
    }
    classes.push(Node);
  });
  return classes;
}

function indices(events: readonly Event[], kind: Event[0]): number[] {
  return events.filter((e) => e[0] === kind).map((e) => e[1]);
}

describe("lifecycle over random bean graphs (property)", () => {
  it("starts each bean after what it uses, stops in exactly the reverse order, each once", async () => {
    await fc.assert(
      fc.asyncProperty(graphs, async (graph) => {
        const events: Event[] = [];
        const classes = beanClasses(graph, events);
        const started = bootstrap({ components: graph.order.map((i) => classes[i]) });
        if (graph.failing === undefined) {
          await (await started).close();
        } else {
          await assert.rejects(started, (e: unknown) => {
            assert.ok(e instanceof DefinitionError);
            assert.equal(
              e.message,
              `@PostConstruct Node.start() of bean 'bean${graph.failing}' threw: ` +
                `bean ${graph.failing} cannot start`,
            );
            return true;
          });
        }
        const starts = indices(events, "start");
        const stops = indices(events, "stop");
        // Each bean starts at most once, and every bean but a failing one (and, after a failure,
        // those not reached) starts.
        assert.equal(new Set(starts).size, starts.length);
        if (graph.failing === undefined) assert.equal(starts.length, classes.length);
        else assert.ok(!starts.includes(graph.failing));
        // Every bean is handed its dependencies started, so a bean starts after them.
        for (const [i, dependencies] of graph.dependencies.entries()) {
          const built = events.findIndex((e) => e[0] === "construct" && e[1] === i);
          if (built === -1) continue;
          for (const j of dependencies) {
            const dependencyStarted = events.findIndex((e) => e[0] === "start" && e[1] === j);
            assert.ok(dependencyStarted !== -1 && dependencyStarted < built, `${j} before ${i}`);
          }
        }
        // Exactly the started beans stop, latest first, each once, all after the last start.
        assert.deepEqual(stops, [...starts].reverse());
        const lastStart = events.findLastIndex((e) => e[0] === "start");
        const firstStop = events.findIndex((e) => e[0] === "stop");
        assert.ok(firstStop === -1 || firstStop > lastStart);
      }),
      propertyOptions(150),
    );
  });
});
