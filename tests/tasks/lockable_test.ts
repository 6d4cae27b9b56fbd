// @Lockable as an app uses it, on the in-process lock manager, and the lock managers it names.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Bean, bootstrap, Configuration, Service } from "../../mod.ts";
import {
  type HeldLock,
  Lockable,
  LockManager,
  LockNotAcquiredError,
  type LockRequest,
  tasks,
} from "../../tasks.ts";
import { MemoryLockManager } from "../../src/tasks/memory_lock_manager.ts";
import { deferred } from "../deferred.ts";
import { memoryLogger } from "../helpers.ts";
import { assertQueuedRunsFinishAtClose } from "./queued_lock_runs.ts";

/** A lock manager whose every release fails, as a store that timed out would. */
class FailingRelease extends LockManager {
  acquire(): Promise<HeldLock | undefined> {
    return Promise.resolve({ release: () => Promise.reject(new Error("redis timeout")) });
  }
}

@Configuration()
class FlakyLocks {
  @Bean("flaky")
  flaky(): LockManager {
    return new FailingRelease();
  }
}

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("@Lockable on the in-process lock manager", () => {
  it("50 concurrent calls on 5 keys: no two of one key overlap, different keys overlap", async () => {
    @Service()
    class Orders {
      readonly running = new Map<number, number>();
      overlapOfOneKey = 0;
      mostKeysAtOnce = 0;
      @Lockable({ key: (id: number) => `order-${id}`, waitTime: 60_000 })
      async ship(id: number): Promise<number> {
        const now = (this.running.get(id) ?? 0) + 1;
        this.running.set(id, now);
        if (now > 1) this.overlapOfOneKey++;
        const keys = [...this.running.values()].filter((n) => n > 0).length;
        this.mostKeysAtOnce = Math.max(this.mostKeysAtOnce, keys);
        // Several turns inside the lock, so that other calls come while it is held.
        for (let i = 0; i < 3; i++) await turn();
        this.running.set(id, this.running.get(id)! - 1);
        return id;
      }
    }
    const app = await bootstrap({ components: [Orders], tasks: tasks() });
    const orders = app.getBean(Orders);
    const calls = Array.from({ length: 50 }, (_, i) => orders.ship(i % 5));
    assert.deepEqual(await Promise.all(calls), Array.from({ length: 50 }, (_, i) => i % 5));
    assert.equal(orders.overlapOfOneKey, 0);
    assert.equal(orders.mostKeysAtOnce, 5);
    await app.close();
  });

  it("a call that cannot have the lock in its waitTime rejects, naming key and manager, and does not run", async () => {
    @Service()
    class Jobs {
      runs = 0;
      release!: () => void;
      @Lockable({ key: (name: string) => name })
      async run(_name: string): Promise<void> {
        this.runs++;
        await new Promise<void>((resolve) => this.release = resolve);
      }
    }
    const app = await bootstrap({ components: [Jobs], tasks: tasks() });
    const jobs = app.getBean(Jobs);
    const first = jobs.run("digest");
    await until(() => jobs.runs === 1);
    await assert.rejects(jobs.run("digest"), (error: unknown) => {
      assert.ok(error instanceof LockNotAcquiredError);
      assert.equal(error.key, "digest");
      assert.equal(error.lockManager, "in-process");
      assert.match(
        error.message,
        /^Jobs\.run\(\): the lock "digest" of the lock manager in-process/,
      );
      return true;
    });
    assert.equal(jobs.runs, 1);
    jobs.release();
    await first;
    // Released when the method settled, failed or not.
    const second = jobs.run("digest");
    await until(() => jobs.runs === 2);
    jobs.release();
    await second;
    await app.close();
  });

  it("a call waiting for a lock stops waiting when the app closes", async () => {
    @Service()
    class Long {
      runs = 0;
      release!: () => void;
      @Lockable({ key: () => "one", waitTime: "1h" })
      async go(): Promise<void> {
        this.runs++;
        await new Promise<void>((resolve) => this.release = resolve);
      }
    }
    const app = await bootstrap({ components: [Long], tasks: tasks() });
    const long = app.getBean(Long);
    const first = long.go();
    await until(() => long.runs === 1);
    const waiting = long.go();
    const closing = app.close();
    await assert.rejects(waiting, (error: unknown) => {
      assert.ok(error instanceof LockNotAcquiredError);
      assert.match(error.message, /the app was closing/);
      return true;
    });
    long.release();
    await first;
    await closing;
    assert.equal(long.runs, 1);
  });

  it("close lets the @Async runs queued on one key take it in turn and finish", async () => {
    await assertQueuedRunsFinishAtClose({ key: () => "digest", waitTime: "1h" }, 2);
  });

  it("releases the lock when the method fails", async () => {
    @Service()
    class Flaky {
      calls = 0;
      @Lockable({ key: () => "one" })
      async go(): Promise<void> {
        this.calls++;
        await turn();
        throw new Error("boom");
      }
    }
    const app = await bootstrap({ components: [Flaky], tasks: tasks() });
    await assert.rejects(app.getBean(Flaky).go(), /boom/);
    await assert.rejects(app.getBean(Flaky).go(), /boom/);
    assert.equal(app.getBean(Flaky).calls, 2);
    await app.close();
  });

  it("a waiter that gives up leaves the queue; the next holder is the one still waiting", async () => {
    const locks = new MemoryLockManager();
    const held = (await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 }))!;
    const gaveUp = locks.acquire({ key: "k", waitMs: 1, leaseMs: 1000 });
    const waits = locks.acquire({ key: "k", waitMs: 60_000, leaseMs: 1000 });
    assert.equal(await gaveUp, undefined);
    await held.release();
    const next = await waits;
    assert.notEqual(next, undefined);
    assert.equal(await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 }), undefined);
    await next!.release();
    await next!.release(); // twice is once
    assert.notEqual(await locks.acquire({ key: "k", waitMs: 0, leaseMs: 1000 }), undefined);
  });
});

describe("@Lockable({ lockManager })", () => {
  class OneTry extends LockManager {
    readonly asked: string[] = [];
    readonly #held = new Set<string>();
    acquire({ key }: LockRequest): Promise<HeldLock | undefined> {
      this.asked.push(key);
      if (this.#held.has(key)) return Promise.resolve(undefined);
      this.#held.add(key);
      return Promise.resolve({ release: () => Promise.resolve(void this.#held.delete(key)) });
    }
  }

  it("takes its locks through the LockManager bean it names", async () => {
    @Configuration()
    class Locks {
      @Bean("shared")
      shared(): LockManager {
        return new OneTry();
      }
    }
    @Service()
    class Orders {
      @Lockable({ key: (id: number) => `order-${id}`, lockManager: "shared" })
      async ship(id: number): Promise<number> {
        return await Promise.resolve(id);
      }
    }
    const app = await bootstrap({ components: [Locks, Orders], tasks: tasks() });
    assert.equal(await app.getBean(Orders).ship(7), 7);
    assert.deepEqual(app.getBean<OneTry>("shared").asked, ["order-7"]);
    await app.close();
  });

  it("a release that fails leaves the call its own outcome, and is logged naming the key", async () => {
    @Service()
    class Orders {
      @Lockable({ key: (id: number) => `order-${id}`, lockManager: "flaky" })
      async ship(id: number): Promise<number> {
        return await Promise.resolve(id * 6);
      }
      @Lockable({ key: (id: number) => `order-${id}`, lockManager: "flaky" })
      async cancel(_id: number): Promise<void> {
        await Promise.resolve();
        throw new Error("no such order");
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ components: [FlakyLocks, Orders], tasks: tasks(), logger });
    const orders = app.getBean(Orders);
    assert.equal(await orders.ship(7), 42);
    assert.equal(logger.lines.length, 1, String(logger.lines));
    assert.match(
      String(logger.lines[0][0]),
      /^Orders\.ship\(\): giving back the lock "order-7" of the lock manager flaky failed/,
    );
    assert.equal((logger.lines[0][1] as Error).message, "redis timeout");
    await assert.rejects(orders.cancel(8), { message: "no such order" });
    assert.equal(logger.lines.length, 2, String(logger.lines));
    assert.match(String(logger.lines[1][0]), /Orders\.cancel\(\): giving back the lock "order-8"/);
    await app.close();
  });

  it("a key of any character, or of a megabyte, reaches errors and logs on one bounded line", async () => {
    const gate = deferred();
    @Service()
    class Orders {
      @Lockable({ key: (key: string) => key })
      async hold(_key: string): Promise<void> {
        await gate.promise;
      }
      @Lockable({ key: (key: string) => key, lockManager: "flaky" })
      async ship(_key: string): Promise<void> {
        await Promise.resolve();
      }
    }
    const megabyte = '\n\u2028"\u0085'.repeat(262_144);
    const keys = [...Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)), megabyte];
    const logger = memoryLogger();
    const app = await bootstrap({ components: [FlakyLocks, Orders], tasks: tasks(), logger });
    const orders = app.getBean(Orders);
    // One line: no line break of any kind, and no other control character, in what is shown.
    const oneBoundedLine = (text: string, key: string) => {
      const shown = JSON.stringify(key.length > 8 ? `${key.slice(0, 8)}…` : key);
      assert.ok(text.length < 600, `${text.length} characters for the key ${shown}`);
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(text, /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, shown);
    };
    const holding = keys.map((key) => orders.hold(key));
    for (const key of keys) {
      const error = await orders.hold(key).then(() => undefined, (e: Error) => e);
      assert.ok(error instanceof LockNotAcquiredError, String(error));
      assert.equal(error.key, key);
      oneBoundedLine(error.message, key);
      await orders.ship(key);
    }
    assert.match(
      (await orders.hold(megabyte).catch((e: Error) => e) as Error).message,
      /^Orders\.hold\(\): the lock "(\\n\\u2028\\\"\\u0085)+.*…\(1048576 chars\) of the/,
    );
    assert.equal(logger.lines.length, keys.length);
    for (const [i, line] of logger.lines.entries()) {
      oneBoundedLine(String(line[0]), keys[i]!);
      assert.match(String(line[0]), /^Orders\.ship\(\): giving back the lock "/);
    }
    gate.resolve();
    await Promise.all(holding);
    await app.close();
  });

  it("a name that is no bean, or no LockManager, stops bootstrap naming the method", async () => {
    @Service()
    class Orders {
      @Lockable({ key: (id: number) => `order-${id}`, lockManager: "redisLocks" })
      async ship(id: number): Promise<number> {
        return await Promise.resolve(id);
      }
    }
    await assert.rejects(bootstrap({ components: [Orders], tasks: tasks() }), {
      name: "DefinitionError",
      message: /^Orders\.ship\(\): @Lockable\(\{ lockManager: "redisLocks" \}\) names no bean/,
    });
    @Configuration()
    class NotLocks {
      @Bean("redisLocks")
      redisLocks(): object {
        return { acquire: () => undefined };
      }
    }
    await assert.rejects(bootstrap({ components: [NotLocks, Orders], tasks: tasks() }), {
      name: "DefinitionError",
      message:
        /^Orders\.ship\(\): @Lockable\(\{ lockManager: "redisLocks" \}\) names a bean that is no LockManager/,
    });
  });

  it("without tasks() stops bootstrap, naming the bean, the method and the option", async () => {
    @Service()
    class Orders {
      @Lockable({ key: (id: number) => `order-${id}` })
      async ship(id: number): Promise<number> {
        return await Promise.resolve(id);
      }
    }
    await assert.rejects(
      bootstrap({ components: [Orders] }),
      /Orders\.ship\(\): @Lockable needs the task executors of tasks\(\): import \{ tasks \} from "@thaw\/thaw\/tasks" and pass bootstrap\(\{ tasks: tasks\(\) \}\)/,
    );
  });
});
