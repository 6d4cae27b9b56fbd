// @Daemon as an app uses it: started by app.start(), stopped by close(), refused without tasks()
// and on workerd.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Service } from "../../mod.ts";
import { Daemon, tasks } from "../../tasks.ts";
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
        [{ nope: 1 }, '@Daemon: unknown option "nope"; the options are name, instances'],
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
});
