// @Daemon as an app uses it: started by app.start(), stopped by close(), refused without tasks()
// and on workerd.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Bean, bootstrap, Configuration, Service } from "../../mod.ts";
import { Daemon, type DaemonLease, type LockManager, tasks } from "../../tasks.ts";
import { MemoryLockManager } from "../../src/tasks/memory_lock_manager.ts";
import { WORKERD_USER_AGENT } from "../../src/runtime/on_workerd.ts";
import { memoryLogger } from "../helpers.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

@Service()
@Daemon({ instances: 2 })
class Indexer {
  running = 0;
  cleanedUp = 0;
  async run(signal: AbortSignal): Promise<void> {
    this.running++;
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
    // Work after the abort: the close waits for it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.cleanedUp++;
    this.running--;
  }
}

describe("@Daemon", () => {
  it("runs its copies from app.start(); close() aborts the signal and waits for them", async () => {
    const app = await bootstrap({ components: [Indexer], tasks: tasks() });
    const indexer = app.getBean(Indexer);
    assert.equal(indexer.running, 0);
    app.start();
    await until(() => indexer.running === 2);
    await app.close();
    assert.equal(indexer.cleanedUp, 2);
    assert.equal(indexer.running, 0);
  });

  it("a daemon that ignores its signal is cut at server.shutdown-timeout, named in the log", async () => {
    @Service()
    @Daemon({ name: "stubborn" })
    class Stubborn {
      started = false;
      run(): Promise<void> {
        this.started = true;
        return new Promise(() => {});
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({
      config: { server: { "shutdown-timeout": 1 } },
      components: [Stubborn],
      tasks: tasks(),
      logger,
    });
    app.start();
    await until(() => app.getBean(Stubborn).started);
    await app.close();
    assert.match(
      String(logger.lines.find((line) => /@Daemon/.test(String(line[0])))?.[0]),
      /^@Daemon: stubborn did not end within 1000 ms \(server\.shutdown-timeout\)/,
    );
  });

  it("without tasks() stops bootstrap, naming the bean, the method and the option", async () => {
    await assert.rejects(bootstrap({ components: [Indexer] }), {
      name: "DefinitionError",
      message:
        /^Indexer\.run\(\): @Daemon needs the task executors of tasks\(\): import \{ tasks \}/,
    });
  });

  it("on workerd stops bootstrap, pointing to @Scheduled", async () => {
    const had = Object.getOwnPropertyDescriptor(globalThis, "navigator");
    Object.defineProperty(globalThis, "navigator", {
      value: { userAgent: WORKERD_USER_AGENT },
      configurable: true,
    });
    try {
      await assert.rejects(bootstrap({ components: [Indexer], tasks: tasks() }), {
        name: "DefinitionError",
        message: /^Indexer\.run\(\): @Daemon .*no process outlives a request.*@Scheduled/,
      });
    } finally {
      if (had === undefined) delete (globalThis as { navigator?: unknown }).navigator;
      else Object.defineProperty(globalThis, "navigator", had);
    }
  });

  it("refuses options that are not an object of its keys, at once", () => {
    for (
      const [options, message] of [
        [[], "@Daemon: the options must be an object, got an array"],
        [null, "@Daemon: the options must be an object, got null"],
        [
          { nope: 1 },
          '@Daemon: unknown option "nope"; the options are name, instances, singleton, lease, ' +
          "lockManager",
        ],
        [{ singleton: "yes" }, '@Daemon({ singleton }): true or false, got "yes"'],
        [
          { lease: "10s" },
          "@Daemon({ lease, lockManager }): they are a singleton's: add singleton: true",
        ],
        [
          { singleton: true, instances: 2 },
          "@Daemon({ singleton, instances }): a singleton runs once, on one replica; got " +
          "instances 2",
        ],
        [
          { singleton: true, lease: "500ms" },
          /^@Daemon\(\{ lease \}\): .*1000/,
        ],
        [
          { singleton: true, lockManager: "" },
          "@Daemon({ lockManager }): the name of a LockManager bean",
        ],
      ] as const
    ) {
      assert.throws(() => Daemon(options as never), { name: "TypeError", message });
    }
  });

  it("refuses a class without run(signal), at once", () => {
    assert.throws(
      () =>
        Daemon()(class NoRun {} as never, { kind: "class", name: "NoRun", metadata: {} } as never),
      /@Daemon on class NoRun: it runs run\(signal\), which NoRun lacks/,
    );
  });

  it("singleton: stops bootstrap without a LockManager bean every replica would share", async () => {
    @Service()
    @Daemon({ singleton: true })
    class Reindexer {
      run(): Promise<void> {
        return Promise.resolve();
      }
    }
    await assert.rejects(bootstrap({ components: [Reindexer], tasks: tasks() }), {
      name: "DefinitionError",
      message:
        /^Reindexer\.run\(\): @Daemon\(\{ singleton: true \}\): the app has no LockManager bean/,
    });
    @Configuration()
    class TwoManagers {
      @Bean()
      first(): LockManager {
        return new MemoryLockManager();
      }
      @Bean()
      second(): LockManager {
        return new MemoryLockManager();
      }
    }
    await assert.rejects(
      bootstrap({ components: [Reindexer, TwoManagers], tasks: tasks() }),
      /the app has 2 LockManager beans \(first, second\): name one with lockManager/,
    );
  });

  it("singleton: runs with a fencing token while it holds the lock, handed on at close", async () => {
    const shared = new MemoryLockManager();
    @Configuration()
    class Shared {
      @Bean()
      locks(): LockManager {
        return shared;
      }
    }
    const started: { replica: string; token: number }[] = [];
    const replica = (name: string) => {
      @Service()
      @Daemon({ singleton: true, name: "reindexer", lease: "1s" })
      class Reindexer {
        async run(signal: AbortSignal, { token }: DaemonLease): Promise<void> {
          started.push({ replica: name, token });
          await new Promise((resolve) => signal.addEventListener("abort", resolve));
        }
      }
      return bootstrap({ components: [Reindexer, Shared], tasks: tasks() });
    };
    const a = await replica("a");
    const b = await replica("b");
    a.start();
    await until(() => started.length === 1);
    b.start();
    // b waits for the lock a holds.
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual(started.map((s) => s.replica), ["a"]);
    await a.close();
    await until(() => started.length === 2);
    assert.deepEqual(started.map((s) => s.replica), ["a", "b"]);
    assert.ok(started[1].token > started[0].token);
    await b.close();
  });
});
