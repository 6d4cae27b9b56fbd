// The order the decorators of @thaw/thaw/tasks run in beside @Transactional, whatever order they
// are written in: @Async outermost, then @Retryable, @ConcurrencyLimit, @Lockable, and the
// transaction innermost (on PostgreSQL).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { Autowired, Bean, bootstrap, Configuration, Service } from "../../mod.ts";
import { data, SqlClient, Transactional } from "../../data.ts";
import {
  Async,
  type HeldLock,
  Lockable,
  LockManager,
  type LockRequest,
  Retryable,
  tasks,
} from "../../tasks.ts";
import { TaskExecutors } from "../../src/tasks/task_executors.ts";
import { memoryLogger } from "../helpers.ts";
import { datasourceEntries } from "../sql/pools.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** A few turns of the event loop: an unhandled rejection, if any, shows meanwhile. */
function turns(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}

const entries = datasourceEntries();

async function itemsDatabase(extra: Record<string, unknown> = {}) {
  const made = await entries("postgres", "main", extra);
  await made.admin.query("CREATE TABLE items (v TEXT)");
  const committed = async () =>
    (await made.admin.query("SELECT v FROM items ORDER BY v")).map((row) => String(row.v));
  return { ...made, committed };
}

describe("@Async on a @Transactional class", () => {
  it("a failure nobody awaits is logged and counted, never an unhandled rejection", async () => {
    const { entry } = await itemsDatabase();
    @Service()
    @Transactional()
    class Mailer {
      @Async()
      async send(): Promise<void> {
        await Promise.resolve();
        throw new Error("mail server down");
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({
      config: { datasource: [entry] },
      components: [Mailer],
      data: data(),
      tasks: tasks(),
      logger,
    });
    const escaped: unknown[] = [];
    const onEscape = (reason: unknown) => void escaped.push(reason);
    process.on("unhandledRejection", onEscape);
    try {
      void app.getBean(Mailer).send();
      await until(() => logger.lines.length > 0 || escaped.length > 0);
      await turns();
    } finally {
      process.off("unhandledRejection", onEscape);
    }
    assert.deepEqual(escaped.map(String), []);
    assert.match(String(logger.lines[0][0]), /@Async Mailer\.send\(\) failed, and nobody awaited/);
    assert.equal(app.getBean(TaskExecutors).unawaitedFailures, 1);
    await app.close();
  });

  it("queued runs hold no connection: 5 runs on a pool of 2 all finish", async () => {
    const { entry, committed } = await itemsDatabase({
      // The bound of a stall: a run that waits this long for a connection fails.
      pool: { "max-size": 2, "acquire-timeout": "5s" },
    });
    @Service()
    @Transactional()
    class Audit {
      @Autowired(SqlClient)
      sql!: SqlClient;
      @Async()
      async record(v: string): Promise<void> {
        await this.sql.execute`INSERT INTO items (v) VALUES (${v})`;
      }
    }
    const app = await bootstrap({
      config: {
        datasource: [entry],
        thaw: { task: { execution: { pool: { "max-size": 1, "queue-capacity": 10 } } } },
      },
      components: [Audit],
      data: data(),
      tasks: tasks(),
    });
    const audit = app.getBean(Audit);
    await Promise.all(["a", "b", "c", "d", "e"].map((v) => audit.record(v)));
    assert.deepEqual(await committed(), ["a", "b", "c", "d", "e"]);
    await app.close();
  });
});

describe("@Retryable beside @Transactional", () => {
  // Each attempt writes its number; the first two then fail.
  async function attempt(self: { sql: SqlClient; calls: number }): Promise<string> {
    const n = ++self.calls;
    await self.sql.execute`INSERT INTO items (v) VALUES (${`attempt ${n}`})`;
    if (n < 3) throw new Error(`busy ${n}`);
    return `done ${n}`;
  }

  @Service()
  class RetryFirst {
    @Autowired(SqlClient)
    sql!: SqlClient;
    calls = 0;
    @Retryable({ maxRetries: 3, delay: 0 })
    @Transactional()
    async run(): Promise<string> {
      return await attempt(this);
    }
  }

  @Service()
  class TransactionalFirst {
    @Autowired(SqlClient)
    sql!: SqlClient;
    calls = 0;
    @Transactional()
    @Retryable({ maxRetries: 3, delay: 0 })
    async run(): Promise<string> {
      return await attempt(this);
    }
  }

  @Service()
  @Transactional()
  class TransactionalClass {
    @Autowired(SqlClient)
    sql!: SqlClient;
    calls = 0;
    @Retryable({ maxRetries: 3, delay: 0 })
    async run(): Promise<string> {
      return await attempt(this);
    }
  }

  for (const type of [RetryFirst, TransactionalFirst, TransactionalClass]) {
    it(`${type.name}: each attempt is a transaction of its own`, async () => {
      const { entry, committed } = await itemsDatabase();
      const app = await bootstrap({
        config: { datasource: [entry] },
        components: [type],
        data: data(),
        tasks: tasks(),
      });
      assert.equal(await app.getBean(type).run(), "done 3");
      // The failed attempts rolled back; the last one committed.
      assert.deepEqual(await committed(), ["attempt 3"]);
      await app.close();
    });
  }
});

describe("@Lockable beside @Transactional and @Retryable", () => {
  it("the lock is held around the transaction: the commit comes before the release", async () => {
    const { entry, admin } = await itemsDatabase();
    // What the table held when each lock was given back.
    const seenAtRelease: string[][] = [];
    class Watching extends LockManager {
      acquire(_request: LockRequest): Promise<HeldLock | undefined> {
        return Promise.resolve({
          release: async () => {
            const rows = await admin.query("SELECT v FROM items ORDER BY v");
            seenAtRelease.push(rows.map((row) => String(row.v)));
          },
        });
      }
    }
    @Configuration()
    class Locks {
      @Bean()
      watching(): LockManager {
        return new Watching();
      }
    }
    @Service()
    class Orders {
      @Autowired(SqlClient)
      sql!: SqlClient;
      @Transactional()
      @Lockable({ key: (id: string) => `order-${id}`, lockManager: "watching" })
      async settle(id: string): Promise<void> {
        await this.sql.execute`INSERT INTO items (v) VALUES (${id})`;
      }
    }
    const app = await bootstrap({
      config: { datasource: [entry] },
      components: [Locks, Orders],
      data: data(),
      tasks: tasks(),
    });
    await app.getBean(Orders).settle("42");
    assert.deepEqual(seenAtRelease, [["42"]]);
    await app.close();
  });

  it("under @Retryable, each attempt takes the lock anew, wherever @Lockable is written", async () => {
    const steps: string[] = [];
    class Counting extends LockManager {
      acquire({ key }: LockRequest): Promise<HeldLock | undefined> {
        steps.push(`take ${key}`);
        return Promise.resolve({ release: () => Promise.resolve(void steps.push("give back")) });
      }
    }
    @Configuration()
    class Locks {
      @Bean()
      counting(): LockManager {
        return new Counting();
      }
    }
    @Service()
    class Orders {
      calls = 0;
      @Lockable({ key: (id: string) => `order-${id}`, lockManager: "counting" })
      @Retryable({ maxRetries: 2, delay: 0 })
      async settle(_id: string): Promise<number> {
        await Promise.resolve();
        steps.push("run");
        if (++this.calls < 3) throw new Error("busy");
        return this.calls;
      }
    }
    const app = await bootstrap({ components: [Locks, Orders], tasks: tasks() });
    assert.equal(await app.getBean(Orders).settle("42"), 3);
    assert.deepEqual(steps, [
      ...["take order-42", "run", "give back"],
      ...["take order-42", "run", "give back"],
      ...["take order-42", "run", "give back"],
    ]);
    await app.close();
  });
});
