// The scheduler's options read at bootstrap, and what jobs() says of each job.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createScheduler, type DenoCron, schedulerFor } from "../../src/scheduling/scheduler.ts";
import { Scheduled } from "../../src/scheduling/scheduled.ts";
import { ApplicationContext } from "../../src/context/application_context.ts";
import { Service } from "../../src/context/stereotypes.ts";
import type { ScheduledMethod } from "../../src/scheduling/scheduled_jobs.ts";
import { DefinitionError } from "../../src/context/errors.ts";
import { FakeClock } from "../fake_clock.ts";
import { deferred } from "../deferred.ts";
import { Cron, job, MemoryLocks, recorder, scheduled, T0, testHost } from "./scheduler_fixtures.ts";

describe("reading the options at bootstrap", () => {
  const refused = (
    schedule: unknown,
    pattern: RegExp,
    extra: Partial<ScheduledMethod> = {},
    host = testHost(),
  ) =>
    assert.throws(
      () => createScheduler(Cron, [job(schedule, () => {}, extra)], host, { denoCron: null }),
      (error: unknown) => error instanceof DefinitionError && pattern.test(error.message),
    );

  it("names the class and method of a schedule it cannot run", () => {
    refused(
      { cron: "0 0 25 * * *" },
      /^@Scheduled on Jobs\.run \(class Jobs\): cron "0 0 25 \* \* \*": .*hour/,
    );
    refused({ cron: "0 0 0 31 2 *" }, /cron "0 0 0 31 2 \*" never fires/);
    refused({ cron: "0 0 * * *", zone: "Mars/Olympus" }, /zone "Mars\/Olympus" is not a time zone/);
    refused(
      { fixedRate: 0 },
      /fixedRate: give milliseconds \(250\) or a duration .*, above 0, got 0/,
    );
    refused(
      { fixedDelay: "soon" },
      /fixedDelay: give milliseconds \(250\) or a duration .*, got "soon"/,
    );
    refused({ fixedRate: 2 ** 31 }, /fixedRate: give .*, at most 2147483647 ms, got 2147483648/);
    refused({ fixedRate: 1000 }, /takes no parameters; this one declares 1/, { arity: 1 });
  });

  it("reads ${key} and ${key:default} of the configuration", async () => {
    const clock = new FakeClock(T0);
    const r = recorder(() => clock);
    const host = testHost({ config: { "jobs.rate": "2s" } });
    const scheduler = createScheduler(
      Cron,
      [
        job({ fixedRate: "${jobs.rate}", initialDelay: "${jobs.delay:500}" }, r.run),
      ],
      host,
      { clock, denoCron: null },
    );
    scheduler.start();
    await clock.advance(2600);
    assert.deepEqual(r.times, [500, 2500]);
    refused(
      { cron: "${jobs.cron}" },
      /cron "\$\{jobs\.cron\}": the configuration has no jobs\.cron/,
    );
    refused(
      { fixedRate: "${jobs.list}" },
      /jobs\.list holds a list, not text/,
      {},
      testHost({ config: { "jobs.list": [1] } }),
    );
  });

  it('takes cron "-" as a job turned off', async () => {
    const clock = new FakeClock(T0);
    let n = 0;
    const scheduler = createScheduler(
      Cron,
      [
        job({ cron: "${jobs.cron:-}" }, () => void n++),
      ],
      testHost(),
      { clock, denoCron: null },
    );
    scheduler.start();
    await clock.advance(86_400_000);
    assert.equal(n, 0);
    assert.equal(clock.pending, 0);
  });

  it("refuses a lock with no LockManager bean, a lock without a schedule, and bad lock times", () => {
    refused(
      { fixedRate: 1000 },
      /^@SchedulerLock on Jobs\.run \(class Jobs\): no bean is a LockManager/,
      {
        lock: { name: "x", lockAtMostFor: "1m" },
      },
    );
    const named = testHost({ named: { cache: {}, locks: new MemoryLocks() } });
    refused(
      { fixedRate: 1000 },
      /^@SchedulerLock on Jobs\.run \(class Jobs\): lockManager "nope" names no bean/,
      { lock: { name: "x", lockAtMostFor: "1m", lockManager: "nope" } },
      named,
    );
    refused(
      { fixedRate: 1000 },
      /lockManager "cache" names a bean that is no LockManager \(a Object\)/,
      { lock: { name: "x", lockAtMostFor: "1m", lockManager: "cache" } },
      named,
    );
    refused(
      undefined,
      /^@SchedulerLock on Jobs\.run \(class Jobs\): the method has no @Scheduled/,
      {
        lock: { name: "x", lockAtMostFor: "1m" },
      },
    );
    const host = testHost({ locks: new MemoryLocks() });
    refused(
      { fixedRate: 1000 },
      /lockAtMostFor \(60000 ms\) must be more than 0 and at least lockAtLeastFor \(120000 ms\)/,
      { lock: { name: "x", lockAtMostFor: "1m", lockAtLeastFor: "2m" } },
      host,
    );
    refused(
      { fixedRate: 1000 },
      /lockAtMostFor: give milliseconds \(250\) or a duration .*, got "forever"/,
      {
        lock: { name: "x", lockAtMostFor: "forever" },
      },
      host,
    );
  });
});

describe("jobs(): what each job is, when it runs next and how its latest run went", () => {
  const at = (ms: number) => new Date(T0 + ms);

  it("names each job of an app by its bean and method", async () => {
    @Service()
    class Reports {
      @Scheduled({ fixedDelay: "1m" })
      daily(): void {}
    }
    const context = new ApplicationContext();
    context.register(Reports);
    await context.refresh();
    const host = testHost();
    const scheduler = await schedulerFor(
      { context, config: {}, enabled: true, logger: host.logger },
      { clock: new FakeClock(T0), denoCron: null },
    );
    assert.deepEqual(
      scheduler.jobs().map((j) => [j.bean, j.method, j.target, j.kind]),
      [["reports", "daily", "Reports.daily", "fixedDelay"]],
    );
  });

  it("lists each job with its kind and schedule; none has a next run before start()", () => {
    const clock = new FakeClock(T0);
    const { scheduler } = scheduled(
      [
        job({ cron: "0 0  3 * * *", zone: "Europe/Berlin" }, () => {}, {
          name: "Jobs.nightly",
          methodName: "nightly",
        }),
        job({ fixedRate: "1s", initialDelay: "5s" }, () => {}, {
          name: "Jobs.rate",
          methodName: "rate",
        }),
        job({ fixedDelay: 2000 }, () => {}),
      ],
      testHost(),
      { clock },
    );
    const none = { bean: "jobs", nextRun: undefined, lastRun: undefined };
    assert.deepEqual(scheduler.jobs(), [
      {
        ...none,
        method: "nightly",
        target: "Jobs.nightly",
        kind: "cron",
        expression: "0 0 3 * * *",
        zone: "Europe/Berlin",
      },
      {
        ...none,
        method: "rate",
        target: "Jobs.rate",
        kind: "fixedRate",
        periodMs: 1000,
        initialDelayMs: 5000,
      },
      {
        ...none,
        method: "run",
        target: "Jobs.run",
        kind: "fixedDelay",
        periodMs: 2000,
        initialDelayMs: 0,
      },
    ]);
    scheduler.start();
    assert.deepEqual(scheduler.jobs().map((j) => j.nextRun?.toISOString()), [
      "2026-03-01T02:00:00.000Z", // 03:00 in Berlin
      "2026-03-01T00:00:05.000Z",
      "2026-03-01T00:00:00.000Z",
    ]);
  });

  it("tells how the latest run went: ok or failed with its time and duration, or running", async () => {
    const clock = new FakeClock(T0);
    const boom = new Error("boom");
    const held = deferred();
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedRate: 1000 }, async () => {
          n++;
          if (n === 2) throw boom;
          if (n === 3) return held.promise;
          await clock.sleep(300);
        }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(500);
    const [first] = scheduler.jobs();
    assert.deepEqual(first.lastRun, { outcome: "ok", at: at(0), durationMs: 300 });
    assert.deepEqual(first.nextRun, at(1000));
    await clock.advance(1000);
    assert.deepEqual(scheduler.jobs()[0].lastRun, {
      outcome: "failed",
      at: at(1000),
      durationMs: 0,
      error: boom,
    });
    await clock.advance(1000);
    const [running] = scheduler.jobs();
    assert.deepEqual(running.lastRun, { outcome: "running", at: at(2000) });
    assert.equal(running.nextRun, undefined, "its next run is set when this one ends");
    held.resolve();
    await clock.advance(0);
    const [ended] = scheduler.jobs();
    assert.deepEqual(ended.lastRun, { outcome: "ok", at: at(2000), durationMs: 500 });
    assert.deepEqual(ended.nextRun, at(3000));
    await scheduler.stop(1000);
  });

  it("a run whose lock another replica holds is skipped; one whose lock cannot be taken failed", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    locks.holder = "other";
    const { scheduler } = scheduled(
      [job({ fixedRate: 1000 }, () => {}, { lock: { name: "digest", lockAtMostFor: "10m" } })],
      testHost({ locks }),
      { clock },
    );
    scheduler.start();
    await clock.advance(0);
    assert.deepEqual(scheduler.jobs()[0].lastRun, {
      outcome: "skipped",
      at: at(0),
      reason: 'another replica holds "digest"',
    });
    locks.holder = "broken";
    await clock.advance(1000);
    const last = scheduler.jobs()[0].lastRun;
    assert.equal(last?.outcome, "failed");
    assert.deepEqual(last.at, at(1000));
    assert.equal((last.error as Error).message, "database down");
  });

  it("a job on Deno.cron runs next when its expression says; once stopped, no job runs next", async () => {
    const clock = new FakeClock(T0 + 60_000);
    const denoCron: DenoCron = () => Promise.resolve();
    const { scheduler } = scheduled(
      [
        job({ cron: "0 0/5 * * * *", zone: "UTC" }, () => {}, { name: "Jobs.five" }),
        job({ fixedDelay: 1000, initialDelay: 250 }, () => {}),
      ],
      testHost(),
      { clock, denoCron },
    );
    scheduler.start();
    assert.deepEqual(scheduler.jobs().map((j) => j.nextRun), [at(300_000), at(60_250)]);
    await scheduler.stop(1000);
    assert.deepEqual(scheduler.jobs().map((j) => j.nextRun), [undefined, undefined]);
  });
});
