// @Scheduled and @SchedulerLock as an app uses them: what the decorators refuse, what bootstrap
// refuses, and the app's start(), close() and scheduled() around real timers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type Application,
  Autowired,
  Bean,
  bootstrap,
  ConfigError,
  Configuration,
  DefinitionError,
  GetMapping,
  PreDestroy,
  RestController,
  Service,
} from "../../mod.ts";
import { type HeldLock, LockManager, type LockRequest, SqlLockManager } from "../../tasks.ts";
import { data, SqlClient } from "../../data.ts";
import { datasourceEntries, KINDS } from "../sql/pools.ts";
import { Scheduled } from "../../src/scheduling/scheduled.ts";
import { SchedulerLock } from "../../src/scheduling/scheduler_lock.ts";
import { listen } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("@Scheduled refuses options it cannot run, at once", () => {
  const refused: [unknown, RegExp][] = [
    [
      undefined,
      /^@Scheduled: the options must be an object, got undefined; give \{ cron \}, \{ fixedRate \} or \{ fixedDelay \}$/,
    ],
    [{}, /give one of cron, fixedRate and fixedDelay/],
    [{ cron: "* * * * *", fixedRate: 5 }, /give one of cron and fixedRate/],
    [{ fixedRate: 5, fixedDelay: 5 }, /give one of fixedRate and fixedDelay/],
    [{ cron: "* * * * *", initialDelay: 5 }, /initialDelay goes with fixedRate or fixedDelay/],
    [{ fixedRate: 5, zone: "UTC" }, /zone goes with cron/],
    [
      { fixedRate: 5, every: 5 },
      /@Scheduled: unknown option "every"; the options are cron, fixedRate, fixedDelay, zone, initialDelay/,
    ],
    [{ cron: 5 }, /cron is text/],
    [{ cron: "* * * * *", zone: 1 }, /zone is text/],
    [{ fixedRate: true }, /fixedRate: give milliseconds \(250\) or a duration .*, got true/],
    [
      { fixedDelay: 5, initialDelay: {} },
      /initialDelay: give milliseconds \(250\) or a duration .*, got \{\}/,
    ],
    // What JSON cannot write is shown by its type, not a failure of the message itself.
    [{ fixedRate: 1n }, /^@Scheduled\(object\): fixedRate: give milliseconds .*, got 1n$/],
  ];
  for (const [options, pattern] of refused) {
    const named = JSON.stringify(options, (_, v) => typeof v === "bigint" ? `${v}n` : v);
    it(`refuses ${named}`, () => {
      assert.throws(
        () => Scheduled(options as never),
        (e: unknown) =>
          e instanceof TypeError && /^@Scheduled[(:]/.test(e.message) && pattern.test(e.message),
      );
    });
  }

  it("decorates instance methods only, once each", () => {
    assert.throws(() => {
      class Jobs {
        @Scheduled({ fixedRate: 5 })
        static tick(): void {}
      }
      return Jobs;
    }, /@Scheduled on tick: it decorates instance methods only/);
    assert.throws(() => {
      class Jobs {
        @Scheduled({ fixedRate: 5 })
        @Scheduled({ fixedRate: 6 })
        tick(): void {}
      }
      return Jobs;
    }, /@Scheduled on tick: given twice/);
  });

  it("@SchedulerLock needs a name and lockAtMostFor", () => {
    assert.throws(
      () => SchedulerLock(undefined as never),
      /@SchedulerLock: the options must be an object, got undefined/,
    );
    assert.throws(() => SchedulerLock({ name: " ", lockAtMostFor: 5 }), /name is the lock's name/);
    assert.throws(
      () => SchedulerLock({ name: "x" } as never),
      /lockAtMostFor is how long the lock lasts/,
    );
    assert.throws(
      () => SchedulerLock({ name: "x", lockAtMostFor: 5, ttl: 1 } as never),
      /@SchedulerLock: unknown option "ttl"/,
    );
    assert.throws(
      () => SchedulerLock({ name: "x", lockAtMostFor: [] } as never),
      /lockAtMostFor: give milliseconds \(250\) or a duration .*, got \[\]/,
    );
    assert.throws(
      () => SchedulerLock({ name: "x", lockAtMostFor: 2n } as never),
      /@SchedulerLock\(object\): lockAtMostFor: give milliseconds .*, got 2n$/,
    );
    assert.throws(
      () => SchedulerLock({ name: "x", lockAtMostFor: 5, lockManager: "" }),
      /@SchedulerLock\(.*\): lockManager is the name of a LockManager bean, got ""$/,
    );
  });
});

describe("bootstrap and scheduled jobs", () => {
  it("refuses a schedule it cannot run, naming the class and method, and stops the beans started", async () => {
    const stopped: string[] = [];
    @Service()
    class Jobs {
      @Scheduled({ cron: "0 0 0 30 2 *" })
      never(): void {}
      @PreDestroy()
      stop(): void {
        stopped.push("Jobs");
      }
    }
    await assert.rejects(
      bootstrap({ components: [Jobs] }),
      (e: unknown) =>
        e instanceof DefinitionError &&
        /^@Scheduled on Jobs\.never \(class Jobs\): cron "0 0 0 30 2 \*" never fires$/.test(
          e.message,
        ),
    );
    assert.deepEqual(stopped, ["Jobs"]);
  });

  it("refuses a method that takes parameters", async () => {
    // The types refuse it already; JavaScript, or a cast, gets this far.
    const untyped = Scheduled({ fixedRate: 1000 }) as unknown as (
      value: unknown,
      context: ClassMethodDecoratorContext,
    ) => void;
    @Service()
    class Jobs {
      @untyped
      run(_when: Date): void {}
    }
    await assert.rejects(
      bootstrap({ components: [Jobs] }),
      /Jobs\.run .*takes no parameters; this one declares 1/,
    );
  });

  it("starts nothing at bootstrap; start() runs the jobs; close() stops them; start() after close starts nothing", async () => {
    @Service()
    class Jobs {
      runs = 0;
      @Scheduled({ fixedRate: "5ms" })
      tick(): void {
        this.runs++;
      }
    }
    const app = await bootstrap({ components: [Jobs] });
    const jobs = app.getBean(Jobs);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(jobs.runs, 0, "bootstrap starts no timer");
    app.start();
    app.start();
    await until(() => jobs.runs >= 3);
    await app.close();
    const after = jobs.runs;
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(jobs.runs, after, "nothing runs after close()");
    app.start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(jobs.runs, after, "start() after close() starts nothing");
  });

  it("close() waits for a run in progress before the beans stop", async () => {
    const events: string[] = [];
    let release!: () => void;
    @Service()
    class Jobs {
      @Scheduled({ fixedDelay: 60_000 })
      async run(): Promise<void> {
        events.push("run start");
        await new Promise<void>((resolve) => release = resolve);
        events.push("run end");
      }
      @PreDestroy()
      stop(): void {
        events.push("PreDestroy");
      }
    }
    const app = await bootstrap({ components: [Jobs] });
    app.start();
    await until(() => events.length > 0);
    const closing = app.close();
    assert.equal(app.close(), closing, "a second close() is the first");
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(events, ["run start"]);
    release();
    await closing;
    assert.deepEqual(events, ["run start", "run end", "PreDestroy"]);
  });

  it("close() gives up on a run past server.shutdown-timeout, stops the beans, and rejects naming the job", async () => {
    const events: string[] = [];
    @Service()
    class Jobs {
      @Scheduled({ fixedDelay: 60_000 })
      run(): Promise<void> {
        events.push("run");
        return new Promise(() => {});
      }
      @PreDestroy()
      stop(): void {
        events.push("PreDestroy");
        if (fail) throw new Error("pool gone");
      }
    }
    let fail = false;
    for (const withHook of [false, true]) {
      fail = withHook;
      events.length = 0;
      const app = await bootstrap({
        components: [Jobs],
        config: { server: { "shutdown-timeout": 0 } },
      });
      app.start();
      await until(() => events.length > 0);
      await assert.rejects(app.close(), (e: unknown) => {
        const late = "@Scheduled Jobs.run still running after server.shutdown-timeout (0 s); " +
          "the beans were stopped all the same";
        if (!withHook) {
          return e instanceof AggregateError &&
            e.message === `Closing the application: ${late}` && e.errors.length === 1;
        }
        return e instanceof AggregateError &&
          e.message.startsWith(`Closing the application: ${late}; `) &&
          /pool gone/.test(e.message) && e.errors.length === 2;
      });
      assert.deepEqual(events, ["run", "PreDestroy"]);
    }
  });

  it("a server's shutdown starts no run while the requests in flight finish", async () => {
    let entered = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    @RestController()
    class Slow {
      @GetMapping("/slow")
      async slow(): Promise<string> {
        entered = true;
        await held;
        return "done";
      }
    }
    @Service()
    class Jobs {
      runs = 0;
      @Scheduled({ fixedDelay: 1 })
      tick(): void {
        this.runs++;
      }
    }
    const app = await bootstrap({ controllers: [Slow], components: [Jobs] });
    const server = await listen(app, {
      port: 0,
      hostname: "127.0.0.1",
      signals: false,
      quiet: true,
    });
    const jobs = app.getBean(Jobs);
    await until(() => jobs.runs >= 3);
    const answer = fetch(`${server.url}/slow`);
    await until(() => entered);
    const closing = server.close();
    const atShutdown = jobs.runs;
    // Twenty turns of the timers: a job due every millisecond would have run meanwhile.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(jobs.runs, atShutdown);
    release();
    assert.equal(await (await answer).text(), "done");
    await closing;
    assert.equal(jobs.runs, atShutdown);
  });

  it("thaw.scheduling.enabled: false runs none; a typo of it stops bootstrap", async () => {
    @Service()
    class Jobs {
      runs = 0;
      @Scheduled({ fixedRate: 1 })
      tick(): void {
        this.runs++;
      }
    }
    const app = await bootstrap({
      components: [Jobs],
      config: { thaw: { scheduling: { enabled: false } } },
    });
    app.start();
    await app.scheduled({ cron: "* * * * *" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(app.getBean(Jobs).runs, 0);
    await app.close();
    await assert.rejects(
      bootstrap({ components: [Jobs], config: { thaw: { scheduling: { enable: false } } } }),
      (e: unknown) =>
        e instanceof ConfigError &&
        /thaw\.scheduling\.enable: unknown key; did you mean thaw\.scheduling\.enabled\?/.test(
          e.message,
        ),
    );
  });

  it("reads ${key} of the configuration in a schedule", async () => {
    @Service()
    class Jobs {
      runs = 0;
      @Scheduled({ cron: "${app.jobs.cron}" })
      tick(): void {
        this.runs++;
      }
    }
    const app = await bootstrap({
      components: [Jobs],
      config: { app: { jobs: { cron: "0 15 3 * * *" } } },
    });
    await app.scheduled({ cron: "15 3 * * *" });
    assert.equal(app.getBean(Jobs).runs, 1);
    await assert.rejects(
      bootstrap({ components: [Jobs] }),
      /the configuration has no app\.jobs\.cron/,
    );
  });

  it("runs a superclass's job on the subclass's bean, as the subclass overrides it; private methods too", async () => {
    const runs: string[] = [];
    class Base {
      @Scheduled({ cron: "0 0 * * *" })
      nightly(): void {
        runs.push("base");
      }
    }
    @Service()
    class Nightly extends Base {
      override nightly(): void {
        runs.push("override");
      }
      @Scheduled({ cron: "0 0 * * *" })
      #secret(): void {
        runs.push("private");
      }
    }
    const app = await bootstrap({ components: [Nightly] });
    await app.scheduled({ cron: "0 0 * * *" });
    assert.deepEqual(runs.sort(), ["override", "private"]);
  });

  it("an override that schedules again keeps its parent's @SchedulerLock", async () => {
    const events: string[] = [];
    class Locks extends LockManager {
      acquire(request: LockRequest): Promise<HeldLock | undefined> {
        events.push(`lock ${request.key}`);
        return Promise.resolve({ release: () => Promise.resolve() });
      }
    }
    class Base {
      @Scheduled({ cron: "0 0 * * *" })
      @SchedulerLock({ name: "nightly", lockAtMostFor: "1m" })
      nightly(): void {
        events.push("base");
      }
    }
    @Service()
    class Nightly extends Base {
      @Scheduled({ cron: "0 0 * * *" })
      override nightly(): void {
        events.push("override");
      }
    }
    @Configuration()
    class Config {
      @Bean()
      lockManager(): LockManager {
        return new Locks();
      }
    }
    const app = await bootstrap({ components: [Nightly, Config] });
    await app.scheduled({ cron: "0 0 * * *" });
    assert.deepEqual(events, ["lock nightly", "override"]);
    await app.close();
  });

  it("a job that closes the app as it starts is waited for, before the beans stop", async () => {
    const events: string[] = [];
    // Set once bootstrap returns: the job reaches its own app through it.
    const own: { app?: Application } = {};
    let closing: Promise<void> | undefined;
    @Service()
    class Jobs {
      @Scheduled({ fixedDelay: 60_000 })
      async shutdownAfterWork(): Promise<void> {
        closing = own.app!.close();
        events.push("job started closing");
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push("job done");
      }
      @PreDestroy()
      stop(): void {
        events.push("PreDestroy");
      }
    }
    own.app = await bootstrap({ components: [Jobs] });
    own.app.start();
    await until(() => closing !== undefined);
    await closing;
    assert.deepEqual(events, ["job started closing", "job done", "PreDestroy"]);
  });

  it("scheduled() logs a job that throws, then rejects with its error once every job ended", async () => {
    const events: string[] = [];
    const archiveFull = new Error("the archive is full");
    @Service()
    class Jobs {
      @Scheduled({ cron: "0 0 * * *" })
      async archive(): Promise<void> {
        events.push("archive");
        await new Promise((resolve) => setTimeout(resolve, 1));
        throw archiveFull;
      }
      @Scheduled({ cron: "0 0 * * *" })
      async compact(): Promise<void> {
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push("compact ended");
      }
      @Scheduled({ cron: "0 3 * * *" })
      report(): void {
        throw new TypeError("no recipients");
      }
      @Scheduled({ cron: "0 3 * * *" })
      audit(): void {
        throw "a thrown string";
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ components: [Jobs], logger });
    await assert.rejects(app.scheduled({ cron: "0 0 * * *" }), (e: unknown) => e === archiveFull);
    // Rejected only once the other job of the trigger ended.
    assert.deepEqual(events, ["archive", "compact ended"]);
    assert.deepEqual(logger.lines, [[
      "@Scheduled Jobs.archive failed; its schedule goes on",
      archiveFull,
    ]]);
    // Several: each error, in one AggregateError naming the jobs and the trigger.
    await assert.rejects(app.scheduled({ cron: "0 3 * * *" }), (e: unknown) => {
      assert.ok(e instanceof AggregateError);
      assert.equal(
        e.message,
        '@Scheduled Jobs.report, Jobs.audit failed on the cron trigger "0 3 * * *"',
      );
      assert.equal(e.errors.length, 2);
      assert.ok(e.errors[0] instanceof TypeError);
      assert.equal(e.errors[1], "a thrown string");
      return true;
    });
    // A trigger whose jobs succeed, or that matches none, resolves.
    await app.scheduled({ cron: "0 4 * * *" });
    await app.close();
  });

  it("schedules the methods of a @Bean method's result", async () => {
    class Cleaner {
      runs = 0;
      @Scheduled({ cron: "0 0 * * *" })
      clean(): void {
        this.runs++;
      }
    }
    @Configuration()
    class Config {
      @Bean()
      cleaner(): Cleaner {
        return new Cleaner();
      }
    }
    const app = await bootstrap({ components: [Config] });
    await app.scheduled({ cron: "0 0 * * *" });
    assert.equal(app.getBean(Cleaner).runs, 1);
  });

  it("an app without jobs: start(), scheduled() and close() do nothing, and say nothing", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({ logger });
    app.start();
    await app.scheduled({ cron: "0 0 * * *" });
    await app.close();
    assert.deepEqual(logger.lines, []);
  });

  it("stops bootstrap on a lock whose name is empty once read", async () => {
    @Service()
    class Jobs {
      @Scheduled({ cron: "0 0 * * *" })
      @SchedulerLock({ name: "${app.lock-name}", lockAtMostFor: "1m" })
      nightly(): void {}
    }
    @Configuration()
    class Locks {
      @Bean()
      lockManager(): LockManager {
        return new (class extends LockManager {
          acquire(): Promise<HeldLock | undefined> {
            throw new Error("never asked");
          }
        })();
      }
    }
    await assert.rejects(
      bootstrap({ components: [Locks, Jobs], config: { app: { "lock-name": " " } } }),
      /@SchedulerLock on Jobs\.nightly \(class Jobs\): the lock's name is empty/,
    );
  });

  const entries = datasourceEntries();
  it("@SchedulerLock takes its locks through SqlLockManager, lockAtLeastFor kept in the table", async () => {
    for (const kind of KINDS) {
      const runs: string[] = [];
      @Service()
      class Jobs {
        @Scheduled({ cron: "0 0 * * *" })
        @SchedulerLock({ name: "x".repeat(80), lockAtMostFor: "10m", lockAtLeastFor: "5m" })
        nightly(): void {
          runs.push("run");
        }
      }
      @Configuration()
      class Locks {
        @Autowired(SqlClient)
        private sql!: SqlClient;

        @Bean()
        lockManager(): LockManager {
          return new SqlLockManager(this.sql);
        }
      }
      const { entry } = await entries(kind, "main");
      const app = await bootstrap({
        components: [Locks, Jobs],
        config: { datasource: [entry] },
        data: data(),
      });
      try {
        const sql = app.getBean(SqlClient);
        await sql.unsafe(SqlLockManager.createTable(sql.kind));
        await app.scheduled({ cron: "0 0 * * *" });
        // Released, and still held for lockAtLeastFor: the next tick is this one's.
        await app.scheduled({ cron: "0 0 * * *" });
        assert.deepEqual(runs, ["run"], kind);
        const rows = (await sql.unsafe("SELECT name FROM shedlock")).rows;
        assert.equal(rows.length, 1, kind);
        assert.match(String(rows[0].name), /^sha256:[A-Za-z0-9_-]{43}$/);
      } finally {
        await app.close();
      }
    }
  });

  it("@SchedulerLock takes the LockManager bean's lock around each run", async () => {
    const events: string[] = [];
    class Locks extends LockManager {
      acquire(request: LockRequest): Promise<HeldLock | undefined> {
        events.push(`lock ${request.key} ${request.leaseMs}`);
        return Promise.resolve({
          release: () => {
            events.push(`unlock ${request.key}`);
            return Promise.resolve();
          },
        });
      }
    }
    @Service()
    class Jobs {
      @Scheduled({ cron: "0 0 * * *" })
      @SchedulerLock({ name: "nightly", lockAtMostFor: "PT10M" })
      nightly(): void {
        events.push("run");
      }
    }
    @Configuration()
    class Config {
      @Bean()
      lockManager(): LockManager {
        return new Locks();
      }
    }
    await assert.rejects(
      bootstrap({ components: [Jobs] }),
      /@SchedulerLock on Jobs\.nightly \(class Jobs\): no bean is a LockManager/,
    );
    const app = await bootstrap({ components: [Jobs, Config] });
    await app.scheduled({ cron: "0 0 * * *" });
    assert.deepEqual(events, ["lock nightly 600000", "run", "unlock nightly"]);
  });
});
