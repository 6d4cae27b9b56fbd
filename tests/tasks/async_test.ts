// @Async as an app uses it: bounded executors, a full queue, failures nobody awaits, the close,
// and a run apart from its caller's transaction (on PostgreSQL).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Autowired, bootstrap, Service } from "../../mod.ts";
import { data, SqlClient, Transactional } from "../../data.ts";
import { Async, TaskRejectedError, tasks } from "../../tasks.ts";
import { TaskExecutors } from "../../src/tasks/task_executors.ts";
import { deferred } from "../deferred.ts";
import { memoryLogger } from "../helpers.ts";
import { datasourceEntries } from "../sql/pools.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

const pool = (maxSize: number, queueCapacity: number, extra: Record<string, unknown> = {}) => ({
  thaw: {
    task: {
      execution: { pool: { "max-size": maxSize, "queue-capacity": queueCapacity }, ...extra },
    },
  },
});

@Service()
class Worker {
  running = 0;
  most = 0;
  started = 0;
  readonly gates: ReturnType<typeof deferred<void>>[] = [];

  @Async()
  async work(i: number): Promise<number> {
    this.started++;
    this.most = Math.max(this.most, ++this.running);
    try {
      await this.gates[i].promise;
      return i;
    } finally {
      this.running--;
    }
  }

  @Async()
  async plain(): Promise<string> {
    this.started++;
    return await Promise.resolve("done");
  }

  @Async()
  async fail(): Promise<void> {
    await Promise.resolve();
    throw new Error("mail server down");
  }
}

describe("@Async", () => {
  it("returns a promise at once; the body runs later", async () => {
    const app = await bootstrap({ components: [Worker], tasks: tasks() });
    const worker = app.getBean(Worker);
    const answer = worker.plain();
    assert.ok(answer instanceof Promise);
    assert.equal(worker.started, 0);
    assert.equal(await answer, "done");
    assert.equal(worker.started, 1);
    await app.close();
  });

  it("refuses a method not declared async, naming the class and the method", async () => {
    // The compiler refuses it (tests/types); a cast, or plain JavaScript, gets past the types.
    const untyped = Async() as unknown as (value: unknown, context: unknown) => void;
    @Service()
    class Names {
      @untyped
      upper(name: string): string {
        return name.toUpperCase();
      }
    }
    // A promise without `async`: the declaration is all there is to read before a call.
    class Lower {
      @untyped
      lower(name: string): Promise<string> {
        return Promise.resolve(name.toLowerCase());
      }
    }
    class Each {
      @untyped
      async *each(): AsyncGenerator<string> {}
    }
    const refusal = (where: string, method: string) => ({
      name: "TypeError",
      message: `${where}(): @Async answers its caller with a promise at once, so the method ` +
        `must be declared async: async ${method}(...): Promise<T>`,
    });
    assert.throws(() => new Names(), refusal("Names.upper", "upper"));
    assert.throws(() => new Lower(), refusal("Lower.lower", "lower"));
    assert.throws(() => new Each(), refusal("Each.each", "each"));
    await assert.rejects(bootstrap({ components: [Names], tasks: tasks() }), (error: Error) => {
      assert.match(error.message, /Names\.upper\(\): @Async answers its caller with a promise/);
      return true;
    });
  });

  it("max-size 2 with 10 calls never runs 3 at once, and runs all", async () => {
    const app = await bootstrap({ config: pool(2, 100), components: [Worker], tasks: tasks() });
    const worker = app.getBean(Worker);
    for (let i = 0; i < 10; i++) worker.gates.push(deferred());
    const calls = worker.gates.map((_, i) => worker.work(i));
    for (let i = 0; i < 10; i++) {
      await until(() => worker.started > i);
      assert.ok(worker.running <= 2, `${worker.running} runs at once`);
      worker.gates[i].resolve(undefined);
    }
    assert.deepEqual(await Promise.all(calls), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(worker.most, 2);
    await app.close();
  });

  it("queue-capacity 3: the 6th call with 2 running and 3 waiting rejects and runs nothing", async () => {
    const app = await bootstrap({ config: pool(2, 3), components: [Worker], tasks: tasks() });
    const worker = app.getBean(Worker);
    for (let i = 0; i < 6; i++) worker.gates.push(deferred());
    const accepted = [0, 1, 2, 3, 4].map((i) => worker.work(i));
    await until(() => worker.started === 2);
    await assert.rejects(worker.work(5), (error: unknown) => {
      assert.ok(error instanceof TaskRejectedError);
      assert.equal(error.executor, "default");
      assert.match(error.message, /its 2 runs \(max-size\) are busy and its queue of 3/);
      return true;
    });
    worker.gates.forEach((gate) => gate.resolve(undefined));
    assert.deepEqual(await Promise.all(accepted), [0, 1, 2, 3, 4]);
    assert.equal(worker.started, 5);
    await app.close();
  });

  it("a failure nobody awaits is logged with the bean and method, never unhandled", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({ components: [Worker], tasks: tasks(), logger });
    void app.getBean(Worker).fail();
    await until(() => logger.lines.length > 0);
    assert.match(String(logger.lines[0][0]), /@Async Worker\.fail\(\) failed, and nobody awaited/);
    assert.equal((logger.lines[0][1] as Error).message, "mail server down");
    // Awaited, it reaches the caller and is not logged.
    await assert.rejects(app.getBean(Worker).fail(), /mail server down/);
    assert.equal(logger.lines.length, 1);
    assert.equal(app.getBean(TaskExecutors).unawaitedFailures, 1);
    await app.close();
  });

  it("names the executor: a named one's bounds, and a name no executor has stops bootstrap", async () => {
    @Service()
    class Mail {
      running = 0;
      most = 0;
      gate = deferred();
      @Async("mail")
      async send(): Promise<void> {
        this.most = Math.max(this.most, ++this.running);
        await this.gate.promise;
        this.running--;
      }
    }
    const config = { thaw: { task: { executors: { mail: { pool: { "max-size": 1 } } } } } };
    const app = await bootstrap({ config, components: [Mail], tasks: tasks() });
    const mail = app.getBean(Mail);
    const sends = [mail.send(), mail.send(), mail.send()];
    await until(() => mail.running === 1);
    mail.gate.resolve(undefined);
    await Promise.all(sends);
    assert.equal(mail.most, 1);
    await app.close();
    await assert.rejects(bootstrap({ components: [Mail], tasks: tasks() }), {
      name: "DefinitionError",
      message: 'Mail.send(): @Async("mail") names no executor of thaw.task.executors (default)',
    });
  });

  it("without tasks() stops bootstrap, naming the bean, the method and the option", async () => {
    await assert.rejects(bootstrap({ components: [Worker] }), (error: Error) => {
      assert.match(error.message, /Worker\.work\(\)/);
      assert.match(error.message, /@Async needs the task executors of tasks\(\)/);
      assert.match(error.message, /bootstrap\(\{ tasks: tasks\(\) \}\)/);
      return true;
    });
  });

  it("close() finishes the running and queued runs within the period", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({
      config: pool(1, 10),
      components: [Worker],
      tasks: tasks(),
      logger,
    });
    const worker = app.getBean(Worker);
    for (let i = 0; i < 3; i++) worker.gates.push(deferred());
    const calls = [0, 1, 2].map((i) => worker.work(i));
    await until(() => worker.started === 1);
    const closing = app.close();
    worker.gates.forEach((gate) => gate.resolve(undefined));
    await closing;
    assert.deepEqual(await Promise.all(calls), [0, 1, 2]);
    assert.deepEqual(logger.lines, []);
    // Closed: no new run is taken.
    await assert.rejects(worker.work(0), /refused the run: the application is closing/);
  });

  it("close() drops the queued runs the period left, and says which still run", async () => {
    const logger = memoryLogger();
    const config = pool(1, 10, { shutdown: { "await-termination-period": "50ms" } });
    const app = await bootstrap({ config, components: [Worker], tasks: tasks(), logger });
    const worker = app.getBean(Worker);
    const executor = app.getBean(TaskExecutors).get("default")!;
    // Run 0 never ends; runs 1 and 2 wait behind it.
    for (let i = 0; i < 3; i++) worker.gates.push(deferred());
    const calls = [0, 1, 2].map((i) => worker.work(i));
    await until(() => worker.started === 1);
    await app.close();
    assert.equal(logger.lines.length, 1);
    assert.equal(
      String(logger.lines[0][0]),
      'The task executor "default" gave up at close after 50 ms ' +
        "(thaw.task.execution.shutdown.await-termination-period): 2 queued runs dropped, never " +
        "started; 1 run still running, abandoned: not stopped, it may still finish",
    );
    assert.deepEqual({ dropped: executor.dropped, abandoned: executor.abandoned }, {
      dropped: 2,
      abandoned: 1,
    });
    for (const dropped of calls.slice(1)) {
      await assert.rejects(dropped, /dropped at close, never started/);
    }
    assert.equal(worker.started, 1);
    worker.gates[0].resolve(undefined);
    assert.equal(await calls[0], 0);
  });
});

describe("@Async beside @Transactional", () => {
  const entries = datasourceEntries();

  it("a run from inside a transaction has its own: the caller's rollback does not undo it", async () => {
    const { entry, admin } = await entries("postgres", "main");
    await admin.query("CREATE TABLE items (v TEXT)");
    @Service()
    class Audit {
      @Autowired(SqlClient)
      sql!: SqlClient;
      @Async()
      @Transactional()
      async record(v: string): Promise<void> {
        await this.sql.execute`INSERT INTO items (v) VALUES (${v})`;
      }
    }
    let recording: Promise<void> | undefined;
    @Service()
    class Orders {
      @Autowired(SqlClient)
      sql!: SqlClient;
      @Autowired(Audit)
      audit!: Audit;
      @Transactional()
      async place(): Promise<void> {
        await this.sql.execute`INSERT INTO items (v) VALUES (${"order"})`;
        recording = this.audit.record("audit");
        throw new Error("out of stock");
      }
    }
    const app = await bootstrap({
      config: { datasource: [entry] },
      components: [Audit, Orders],
      data: data(),
      tasks: tasks(),
    });
    await assert.rejects(app.getBean(Orders).place(), /out of stock/);
    await recording;
    assert.deepEqual(await admin.query("SELECT v FROM items"), [{ v: "audit" }]);
    await app.close();
  });
});
