// The app's own events: ApplicationStarted at the end of bootstrap, ApplicationClosing first in
// app.close(), and what close() waits for, around @PostConstruct, @PreDestroy and scheduled jobs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApplicationClosing,
  ApplicationEvent,
  ApplicationEventPublisher,
  ApplicationStarted,
  Autowired,
  bootstrap,
  EventListener,
  PostConstruct,
  PreDestroy,
  Scheduled,
  Service,
} from "../../mod.ts";
import { aggregateOf, memoryLogger } from "../helpers.ts";

/** A promise and the function that resolves it: a state a test waits on. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

class Tick {}

describe("ApplicationStarted and ApplicationClosing", () => {
  it("come after every @PostConstruct and before any scheduled run; before the schedules stop and the @PreDestroy hooks", async () => {
    const steps: string[] = [];
    const running = signal();
    let release!: () => void;
    @Service()
    class Database {
      @PostConstruct()
      async open(): Promise<void> {
        await Promise.resolve();
        steps.push("Database @PostConstruct");
      }
      @PreDestroy()
      close(): void {
        steps.push("Database @PreDestroy");
      }
    }
    @Service()
    class Lifecycle {
      @Autowired(Database)
      db!: Database;
      @PostConstruct()
      start(): void {
        steps.push("Lifecycle @PostConstruct");
      }
      @EventListener(ApplicationStarted)
      async started(event: ApplicationStarted): Promise<void> {
        await Promise.resolve();
        assert.ok(event instanceof ApplicationEvent && event.timestamp > 0);
        steps.push("ApplicationStarted");
      }
      // Ends the job's run: were the schedules stopped (and the run waited for) first, the close
      // would wait for this listener, which would never run.
      @EventListener(ApplicationClosing)
      closing(): void {
        steps.push("ApplicationClosing");
        release();
      }
      @Scheduled({ fixedDelay: 60_000 })
      async job(): Promise<void> {
        steps.push("job starts");
        running.resolve();
        await new Promise<void>((resolve) => release = resolve);
        steps.push("job ends");
      }
      @PreDestroy()
      stop(): void {
        steps.push("Lifecycle @PreDestroy");
      }
    }
    // A listener of ApplicationEvent hears both.
    @Service()
    class Audit {
      heard: string[] = [];
      @EventListener(ApplicationEvent)
      any(event: ApplicationEvent): void {
        this.heard.push(event.constructor.name);
      }
    }
    const app = await bootstrap({
      components: [Lifecycle, Database, Audit],
      config: { server: { "shutdown-timeout": 5 } },
    });
    assert.deepEqual(steps, [
      "Database @PostConstruct",
      "Lifecycle @PostConstruct",
      "ApplicationStarted",
    ]);
    app.start();
    await running.promise;
    await app.close();
    assert.deepEqual(steps, [
      "Database @PostConstruct",
      "Lifecycle @PostConstruct",
      "ApplicationStarted",
      "job starts",
      "ApplicationClosing",
      "job ends",
      "Lifecycle @PreDestroy",
      "Database @PreDestroy",
    ]);
    assert.deepEqual(app.getBean(Audit).heard, ["ApplicationStarted", "ApplicationClosing"]);
  });

  it("a listener of ApplicationStarted that throws rejects bootstrap, naming it, once the started beans are stopped", async () => {
    const steps: string[] = [];
    const cause = new Error("cache unreachable");
    @Service()
    class Pool {
      @PostConstruct()
      open(): void {
        steps.push("Pool @PostConstruct");
      }
      @PreDestroy()
      end(): void {
        steps.push("Pool @PreDestroy");
      }
    }
    @Service()
    class Warmup {
      @Autowired(Pool)
      pool!: Pool;
      @EventListener(ApplicationStarted)
      async load(): Promise<void> {
        await Promise.resolve();
        steps.push("load");
        throw cause;
      }
      @EventListener(ApplicationStarted)
      after(): void {
        steps.push("after");
      }
    }
    await assert.rejects(bootstrap({ components: [Warmup, Pool] }), (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.equal(
        e.message,
        "@EventListener Warmup.load() threw on ApplicationStarted: cache unreachable",
      );
      assert.equal(e.cause, cause);
      return true;
    });
    assert.deepEqual(steps, ["Pool @PostConstruct", "load", "Pool @PreDestroy"]);
  });

  it("close() waits for the async listeners still running before the beans stop", async () => {
    const steps: string[] = [];
    @Service()
    class Reports {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @EventListener(Tick, { async: true })
      async render(): Promise<void> {
        steps.push("render starts");
        // Still running on the next turn of the event loop, past every step of a close that
        // would not wait for it.
        await new Promise((resolve) => setTimeout(resolve, 0));
        steps.push("render ends");
      }
      @EventListener(ApplicationClosing, { async: true })
      flush(): void {
        steps.push("flush");
      }
      @PreDestroy()
      stop(): void {
        steps.push("@PreDestroy");
      }
    }
    const app = await bootstrap({ components: [Reports] });
    await app.getBean(Reports).events.publishEvent(new Tick());
    assert.deepEqual(steps, [], "not started yet");
    await app.close();
    assert.deepEqual(steps, ["render starts", "flush", "render ends", "@PreDestroy"]);
  });

  it("close() gives up on async listeners past server.shutdown-timeout, stops the beans, and rejects naming them", async () => {
    const steps: string[] = [];
    @Service()
    class Reports {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @EventListener(Tick, { async: true })
      render(): Promise<void> {
        steps.push("render");
        return new Promise(() => {});
      }
      @PreDestroy()
      stop(): void {
        steps.push("@PreDestroy");
      }
    }
    const app = await bootstrap({
      components: [Reports],
      config: { server: { "shutdown-timeout": 0 } },
    });
    await app.getBean(Reports).events.publishEvent(new Tick());
    const error = await aggregateOf(app.close());
    assert.equal(
      error.message,
      "Closing the application: Async @EventListener Reports.render() still running after " +
        "server.shutdown-timeout (0 s); the beans were stopped all the same",
    );
    assert.equal(error.errors.length, 1);
    assert.deepEqual(steps, ["render", "@PreDestroy"]);
  });

  it("an ApplicationClosing listener that throws or runs over does not stop the close: close() rejects at the end naming it with the others' failures", async () => {
    const steps: string[] = [];
    const hung = signal();
    @Service()
    class Registry {
      @EventListener(ApplicationClosing)
      deregister(): void {
        steps.push("deregister");
        throw new Error("registry down");
      }
      @EventListener(ApplicationClosing)
      later(): void {
        steps.push("later");
      }
      @PreDestroy()
      stop(): void {
        steps.push("Registry @PreDestroy");
        throw new Error("socket busy");
      }
    }
    @Service()
    class Pool {
      @PreDestroy()
      end(): void {
        steps.push("Pool @PreDestroy");
      }
    }
    const app = await bootstrap({ components: [Pool, Registry] });
    const first = app.close();
    assert.equal(app.close(), first, "a second close() is the first");
    const error = await aggregateOf(first);
    assert.equal(
      error.message,
      "Closing the application: @EventListener Registry.deregister() threw on " +
        "ApplicationClosing: registry down; Closing the application context: 1 @PreDestroy " +
        "hook failed: @PreDestroy Registry.stop() threw: socket busy",
    );
    assert.equal(error.errors.length, 2);
    assert.equal((error.errors[0] as Error).cause instanceof Error, true);
    assert.ok(error.errors[1] instanceof AggregateError);
    // The listener after the failing one does not run; the beans stop all the same.
    assert.deepEqual(steps, ["deregister", "Registry @PreDestroy", "Pool @PreDestroy"]);

    steps.length = 0;
    @Service()
    class Slow {
      @EventListener(ApplicationClosing)
      async drain(): Promise<void> {
        steps.push("drain");
        await hung.promise;
      }
      @PreDestroy()
      stop(): void {
        steps.push("Slow @PreDestroy");
      }
    }
    const slow = await bootstrap({
      components: [Slow],
      config: { server: { "shutdown-timeout": 0 } },
    });
    const late = await aggregateOf(slow.close());
    assert.equal(
      late.message,
      "Closing the application: @EventListener Slow.drain() still running on ApplicationClosing " +
        "after server.shutdown-timeout (0 s); the app closed all the same",
    );
    assert.deepEqual(steps, ["drain", "Slow @PreDestroy"]);
    hung.resolve();
  });

  it("close() of an app with listeners fails as it would without them when only a bean fails", async () => {
    @Service()
    class Cache {
      @EventListener(ApplicationClosing)
      closing(): void {}
      @PreDestroy()
      stop(): void {
        throw new Error("flush failed");
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ components: [Cache], logger });
    const error = await aggregateOf(app.close());
    assert.equal(
      error.message,
      "Closing the application context: 1 @PreDestroy hook failed: @PreDestroy Cache.stop() " +
        "threw: flush failed",
    );
    assert.deepEqual(logger.lines, []);
  });
});
