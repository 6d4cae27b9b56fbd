// The scheduler's rules in virtual time: when each kind of job runs, that a job never overlaps
// itself, that a failure leaves the schedule going, locks, stopping, edge triggers, Deno.cron.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  createScheduler,
  type DenoCron,
  type SchedulerDevices,
  schedulerFor,
} from "../../src/scheduling/scheduler.ts";
import { Scheduled } from "../../src/scheduling/scheduled.ts";
import { ApplicationContext } from "../../src/context/application_context.ts";
import { Service } from "../../src/context/stereotypes.ts";
import type { ScheduledMethod, SchedulerHost } from "../../src/scheduling/scheduled_jobs.ts";
import {
  type LockConfiguration,
  LockProvider,
  type SimpleLock,
} from "../../src/scheduling/lock_provider.ts";
import { DefinitionError } from "../../src/context/errors.ts";
import { loadCron } from "../../src/scheduling/trigger.ts";
import { FakeClock, settle } from "../fake_clock.ts";
import { deferred } from "../deferred.ts";

const Cron = await loadCron();

const T0 = Date.parse("2026-03-01T00:00:00Z");

interface Logged {
  readonly level: "error" | "warn";
  readonly message: string;
  readonly error?: unknown;
}

function testHost(
  options: { enabled?: boolean; config?: Record<string, unknown>; locks?: LockProvider } = {},
): SchedulerHost & { logged: Logged[] } {
  const logged: Logged[] = [];
  return {
    logged,
    enabled: options.enabled ?? true,
    configValue: (key) => options.config?.[key],
    logger: {
      error: (message, error) => logged.push({ level: "error", message, error }),
      warn: (message) => logged.push({ level: "warn", message }),
    },
    beanOf: () => {
      if (options.locks === undefined) throw new Error("no bean");
      return options.locks;
    },
    hasBean: (type) => options.locks instanceof type,
  };
}

function job(
  schedule: unknown,
  run: () => unknown,
  extra: Partial<ScheduledMethod> = {},
): ScheduledMethod {
  return {
    name: "Jobs.run",
    bean: "class Jobs",
    beanName: "jobs",
    methodName: "run",
    arity: 0,
    schedule,
    lock: undefined,
    run,
    ...extra,
  };
}

/** A scheduler of `methods` on a virtual clock, never on Deno.cron. */
function scheduled(
  methods: ScheduledMethod[],
  host: SchedulerHost = testHost(),
  devices: SchedulerDevices = {},
) {
  const clock = (devices.clock as FakeClock | undefined) ?? new FakeClock(T0);
  const scheduler = createScheduler(Cron, methods, host, { denoCron: null, ...devices, clock });
  return { clock, scheduler };
}

/** Records the virtual time of each run. */
function recorder(clock: () => FakeClock) {
  const times: number[] = [];
  return { times, run: () => void times.push(clock().now() - T0) };
}

describe("fixedRate, fixedDelay, initialDelay", () => {
  it("fixedRate runs at once, then every period from the start of each run", async () => {
    const clock = new FakeClock(T0);
    const r = recorder(() => clock);
    const { scheduler } = scheduled([job({ fixedRate: 1000 }, r.run)], testHost(), { clock });
    await clock.advance(5000);
    assert.deepEqual(r.times, [], "nothing runs before start()");
    scheduler.start();
    await clock.advance(3500);
    assert.deepEqual(r.times, [5000, 6000, 7000, 8000]);
  });

  it("fixedRate: a run that overruns its period delays the next, without overlap or catch-up", async () => {
    const clock = new FakeClock(T0);
    const starts: number[] = [];
    let release = deferred();
    const { scheduler } = scheduled(
      [
        job({ fixedRate: "1s" }, () => {
          starts.push(clock.now() - T0);
          return release.promise;
        }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(2500);
    assert.deepEqual(starts, [0], "the first run still runs: no second one");
    const first = release;
    release = deferred();
    first.resolve();
    await clock.advance(0);
    assert.deepEqual(starts, [0, 2500], "the overdue run starts when the first ends");
    release.resolve();
    release = deferred();
    release.resolve();
    await clock.advance(1000);
    assert.deepEqual(starts, [0, 2500, 3500]);
  });

  it("fixedDelay counts from the end of each run", async () => {
    const clock = new FakeClock(T0);
    const starts: number[] = [];
    let running = deferred();
    const { scheduler } = scheduled(
      [
        job({ fixedDelay: 1000 }, () => {
          starts.push(clock.now() - T0);
          return running.promise;
        }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(300);
    running.resolve();
    running = deferred();
    await clock.advance(1300);
    assert.deepEqual(starts, [0, 1300]);
    running.resolve();
    await clock.advance(1000);
    assert.deepEqual(starts, [0, 1300, 2600]);
  });

  it("initialDelay puts off the first run", async () => {
    const clock = new FakeClock(T0);
    const r = recorder(() => clock);
    const { scheduler } = scheduled(
      [
        job({ fixedDelay: "PT1S", initialDelay: "500ms" }, r.run),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(2600);
    assert.deepEqual(r.times, [500, 1500, 2500]);
  });

  it("start() twice starts each schedule once", async () => {
    const clock = new FakeClock(T0);
    const r = recorder(() => clock);
    const { scheduler } = scheduled([job({ fixedRate: 1000 }, r.run)], testHost(), { clock });
    scheduler.start();
    scheduler.start();
    await clock.advance(1500);
    assert.deepEqual(r.times, [0, 1000]);
  });
});

describe("the wall clock set back or forward", () => {
  it("fixedRate and fixedDelay count on the monotonic clock: a wall clock set back does not stall them", async () => {
    const clock = new FakeClock(T0);
    const runs: number[] = [];
    const { scheduler } = scheduled(
      [
        job({ fixedRate: 1000 }, () => void runs.push(clock.monotonic() - T0), {
          name: "Jobs.rate",
        }),
        job({ fixedDelay: 1000 }, () => void runs.push(clock.monotonic() - T0), {
          name: "Jobs.delay",
        }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(1500);
    clock.stepWall(-60_000);
    await clock.advance(2000);
    assert.deepEqual(runs.sort((a, b) => a - b), [0, 0, 1000, 1000, 2000, 2000, 3000, 3000]);
  });

  it("a cron job follows the wall clock: set back a minute, it does not run a tick twice", async () => {
    const clock = new FakeClock(Date.parse("2026-03-01T10:00:30Z"));
    const runs: string[] = [];
    const { scheduler } = scheduled(
      [
        job({ cron: "0 * * * * *" }, () => void runs.push(new Date(clock.now()).toISOString())),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(60_000); // 10:01:30, after the 10:01 tick
    clock.stepWall(-60_000); // 10:00:30 again
    await clock.advance(120_000); // 10:02:30
    assert.deepEqual(runs, ["2026-03-01T10:01:00.000Z", "2026-03-01T10:02:00.000Z"]);
  });
});

describe("cron", () => {
  it("runs on the expression's ticks, in its zone", async () => {
    const clock = new FakeClock(Date.parse("2026-03-02T07:59:00Z"));
    const runs: string[] = [];
    const { scheduler } = scheduled(
      [
        job(
          { cron: "0 0/30 9-10 * * MON-FRI", zone: "Europe/Berlin" },
          () => void runs.push(new Date(clock.now()).toISOString()),
        ),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(3 * 3_600_000);
    // 09:00 to 10:30 in Berlin (UTC+1 in March before the change).
    assert.deepEqual(runs, [
      "2026-03-02T08:00:00.000Z",
      "2026-03-02T08:30:00.000Z",
      "2026-03-02T09:00:00.000Z",
      "2026-03-02T09:30:00.000Z",
    ]);
  });

  for (
    const [change, from] of [
      ["spring forward (23 hours)", "2026-03-28T22:00:00Z"],
      ["fall back (25 hours)", "2026-10-24T21:00:00Z"],
    ] as const
  ) {
    it(`an hourly job runs once per real hour across the ${change} in its zone`, async () => {
      const clock = new FakeClock(Date.parse(from));
      const runs: number[] = [];
      const { scheduler } = scheduled(
        [
          job({ cron: "0 0 * * * *", zone: "Europe/Berlin" }, () => void runs.push(clock.now())),
        ],
        testHost(),
        { clock },
      );
      scheduler.start();
      await clock.advance(6 * 3_600_000);
      assert.equal(runs.length, 6, runs.map((t) => new Date(t).toISOString()).join(" "));
      for (let i = 1; i < runs.length; i++) assert.equal(runs[i] - runs[i - 1], 3_600_000);
    });

    it(`a daily 02:30 job runs once on the day of the ${change}`, async () => {
      const clock = new FakeClock(Date.parse(from));
      const runs: string[] = [];
      const { scheduler } = scheduled(
        [
          job(
            { cron: "0 30 2 * * *", zone: "Europe/Berlin" },
            () => void runs.push(new Date(clock.now()).toISOString()),
          ),
        ],
        testHost(),
        { clock },
      );
      scheduler.start();
      await clock.advance(24 * 3_600_000);
      assert.equal(runs.length, 1, runs.join(" "));
    });
  }

  it("a job of several times in the hour the clock skips runs none of them; in the hour it repeats, each twice", async () => {
    for (
      const [from, expected] of [["2026-03-28T22:00:00Z", 0], ["2026-10-24T21:00:00Z", 4]] as const
    ) {
      const clock = new FakeClock(Date.parse(from));
      let n = 0;
      const { scheduler } = scheduled(
        [
          job({ cron: "0 0/30 2 * * *", zone: "Europe/Berlin" }, () => void n++),
        ],
        testHost(),
        { clock },
      );
      scheduler.start();
      await clock.advance(12 * 3_600_000);
      assert.equal(n, expected, from);
    }
  });

  it("a timer that fires early runs the tick once, when it is due", async () => {
    const clock = new FakeClock(Date.parse("2026-03-01T10:00:00.500Z"), { early: 3 });
    const runs: number[] = [];
    const { scheduler } = scheduled(
      [
        job({ cron: "* * * * * *" }, () => void runs.push(clock.now())),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(3000);
    assert.deepEqual(
      runs.map((t) => new Date(t).toISOString()),
      ["2026-03-01T10:00:01.000Z", "2026-03-01T10:00:02.000Z", "2026-03-01T10:00:03.000Z"],
    );
  });

  it("waits longer than one timer can: a yearly job runs on New Year only", async () => {
    const clock = new FakeClock(Date.parse("2026-03-01T00:00:00Z"));
    const runs: string[] = [];
    const { scheduler } = scheduled(
      [
        job(
          { cron: "0 0 0 1 1 *", zone: "UTC" },
          () => void runs.push(new Date(clock.now()).toISOString()),
        ),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(400 * 86_400_000);
    assert.deepEqual(runs, ["2027-01-01T00:00:00.000Z"]);
    assert.ok(clock.longestWait <= 2 ** 31 - 1);
  });

  it("a run that overruns its next tick skips it", async () => {
    const clock = new FakeClock(Date.parse("2026-03-01T10:00:00Z"));
    const starts: number[] = [];
    const slow = deferred();
    let first = true;
    const { scheduler } = scheduled(
      [
        job({ cron: "0 * * * * *" }, () => {
          starts.push(clock.now());
          if (!first) return;
          first = false;
          return slow.promise;
        }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(60_000); // 10:01: runs, and hangs
    await clock.advance(90_000); // 10:02:30
    slow.resolve();
    await clock.advance(60_000); // 10:03:30
    assert.deepEqual(
      starts.map((t) => new Date(t).toISOString().slice(11, 19)),
      ["10:01:00", "10:03:00"],
    );
  });
});

describe("failures and overlap", () => {
  it("a run that throws or rejects is logged with the job's name, and the schedule goes on", async () => {
    const clock = new FakeClock(T0);
    const host = testHost();
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedRate: 1000 }, () => {
          n++;
          if (n === 1) throw new Error("boom");
          if (n === 2) return Promise.reject(new Error("async boom"));
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(2500);
    assert.equal(n, 3);
    assert.deepEqual(host.logged.map((l) => [l.level, l.message, (l.error as Error).message]), [
      ["error", "@Scheduled Jobs.run failed; its schedule goes on", "boom"],
      ["error", "@Scheduled Jobs.run failed; its schedule goes on", "async boom"],
    ]);
  });

  it("a run that never ends holds its job: no second run starts", async () => {
    const clock = new FakeClock(T0);
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedRate: 10 }, () => {
          n++;
          return new Promise(() => {});
        }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(10_000);
    assert.equal(n, 1);
  });
});

describe("stop()", () => {
  it("cancels every timer; waits for the run in progress; nothing runs after", async () => {
    const clock = new FakeClock(T0);
    const running = deferred();
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedDelay: 1000 }, () => {
          n++;
          return running.promise;
        }),
        job({ fixedRate: 700 }, () => void n++, { name: "Jobs.other" }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    await clock.advance(100);
    assert.equal(n, 2);
    let stopped: Error | undefined | "pending" = "pending";
    const stopping = scheduler.stop(30_000).then((names) => stopped = names);
    await settle();
    assert.equal(stopped, "pending", "waits for Jobs.run");
    running.resolve();
    await stopping;
    assert.equal(stopped, undefined);
    await clock.advance(10_000);
    assert.equal(n, 2);
    assert.equal(clock.pending, 0);
    assert.equal(scheduler.stop(1), scheduler.stop(5), "a second stop() is the first");
    scheduler.start();
    await clock.advance(10_000);
    assert.equal(n, 2, "start() after stop() starts nothing");
    assert.equal(clock.pending, 0);
  });

  it("gives up on a run still going after the timeout, and names it", async () => {
    const clock = new FakeClock(T0);
    const { scheduler } = scheduled(
      [job({ fixedRate: 1000 }, () => new Promise(() => {}))],
      testHost(),
      {
        clock,
      },
    );
    scheduler.start();
    await clock.advance(1);
    const stopping = scheduler.stop(5000);
    await clock.advance(5000);
    assert.equal(
      (await stopping)?.message,
      "@Scheduled Jobs.run still running after server.shutdown-timeout (5 s); the beans were " +
        "stopped all the same",
    );
  });
});

class MemoryLocks extends LockProvider {
  readonly taken: LockConfiguration[] = [];
  readonly released: string[] = [];
  holder: "free" | "other" | "broken" = "free";
  failUnlock = false;

  lock(config: LockConfiguration): Promise<SimpleLock | undefined> {
    if (this.holder === "broken") return Promise.reject(new Error("database down"));
    if (this.holder === "other") return Promise.resolve(undefined);
    this.taken.push(config);
    return Promise.resolve({
      unlock: () => {
        if (this.failUnlock) return Promise.reject(new Error("gone"));
        this.released.push(config.name);
        return Promise.resolve();
      },
    });
  }
}

describe("@SchedulerLock", () => {
  const locked = (run: () => unknown, lock: unknown = { name: "digest", lockAtMostFor: "10m" }) =>
    job({ fixedRate: 1000 }, run, { lock });

  it("takes the lock before each run and releases it after", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    let n = 0;
    const { scheduler } = scheduled(
      [
        locked(() => void n++, { name: "digest", lockAtMostFor: "10m", lockAtLeastFor: "PT30S" }),
      ],
      testHost({ locks }),
      { clock },
    );
    scheduler.start();
    await clock.advance(1500);
    assert.equal(n, 2);
    assert.deepEqual(locks.taken, [
      { name: "digest", lockAtMostFor: 600_000, lockAtLeastFor: 30_000 },
      { name: "digest", lockAtMostFor: 600_000, lockAtLeastFor: 30_000 },
    ]);
    assert.deepEqual(locks.released, ["digest", "digest"]);
  });

  it("skips the run when another replica holds the lock, quietly", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    locks.holder = "other";
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled([locked(() => void n++)], host, { clock });
    scheduler.start();
    await clock.advance(2500);
    assert.equal(n, 0);
    assert.deepEqual(host.logged, []);
  });

  it("skips the run, and says why, when the lock cannot be taken", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    locks.holder = "broken";
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled([locked(() => void n++)], host, { clock });
    scheduler.start();
    await clock.advance(1500);
    assert.equal(n, 0);
    assert.equal(host.logged.length, 2);
    assert.match(
      host.logged[0].message,
      /@Scheduled Jobs\.run: the lock "digest" could not be taken; this run is skipped/,
    );
    assert.equal((host.logged[0].error as Error).message, "database down");
  });

  it("logs a lock it could not release, and a run longer than lockAtMostFor", async () => {
    const clock = new FakeClock(T0);
    const locks = new MemoryLocks();
    locks.failUnlock = true;
    const host = testHost({ locks });
    const slow = deferred();
    const { scheduler } = scheduled(
      [
        locked(() => slow.promise, { name: "digest", lockAtMostFor: "2s" }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(3000);
    slow.resolve();
    await settle();
    assert.deepEqual(host.logged.map((l) => l.level), ["warn", "error"]);
    assert.match(host.logged[0].message, /ran 3000 ms, longer than lockAtMostFor \(2000 ms\)/);
    assert.match(host.logged[1].message, /could not be released; it ends at lockAtMostFor/);
  });
});

describe("a LockProvider that misbehaves", () => {
  it("one that never answers: the run is skipped at lockAtMostFor, and the next tick tries again", async () => {
    const clock = new FakeClock(T0);
    let calls = 0;
    const locks = new (class extends LockProvider {
      lock(): Promise<SimpleLock | undefined> {
        calls++;
        return calls === 1
          ? new Promise(() => {})
          : Promise.resolve({ unlock: () => Promise.resolve() });
      }
    })();
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedDelay: 1000 }, () => void n++, {
          lock: { name: "digest", lockAtMostFor: "5s" },
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(5000);
    assert.equal(n, 0);
    assert.match(
      host.logged[0].message,
      /the lock "digest" could not be taken; this run is skipped/,
    );
    assert.match((host.logged[0].error as Error).message, /did not take it within 5000 ms/);
    await clock.advance(1000);
    assert.equal(n, 1);
  });

  it("a lock taken only after stop(): the run never starts, and the lock goes back", async () => {
    const clock = new FakeClock(T0);
    const grant = deferred<SimpleLock | undefined>();
    let unlocked = 0;
    const locks = new (class extends LockProvider {
      lock(): Promise<SimpleLock | undefined> {
        return grant.promise;
      }
    })();
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedRate: "1h" }, () => void n++, {
          lock: { name: "digest", lockAtMostFor: "10s" },
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(1);
    // Nothing runs yet: stop() need not wait for a run that has not begun.
    assert.equal(await scheduler.stop(1000), undefined);
    grant.resolve({ unlock: () => void unlocked++ as unknown as Promise<void> });
    await clock.advance(60_000);
    assert.equal(n, 0, "nothing runs after stop()");
    assert.equal(unlocked, 1, "the lock taken late is released");
    assert.deepEqual(host.logged, []);
    assert.equal(clock.pending, 0, "no timer outlives the scheduler");
  });

  it("a LockProvider that never answers leaves no timer behind once stopped", async () => {
    const clock = new FakeClock(T0);
    const locks = new (class extends LockProvider {
      lock(): Promise<SimpleLock | undefined> {
        return new Promise(() => {});
      }
    })();
    const host = testHost({ locks });
    const { scheduler } = scheduled(
      [
        job({ fixedRate: "1h" }, () => {}, { lock: { name: "digest", lockAtMostFor: "10m" } }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(1);
    await scheduler.stop(1000);
    assert.equal(clock.pending, 0);
    assert.deepEqual(host.logged, []);
  });

  it("a lock granted after its taker gave up waiting is released, not left to block every replica", async () => {
    const clock = new FakeClock(T0);
    const grant = deferred<SimpleLock | undefined>();
    let unlocked = 0;
    let calls = 0;
    const locks = new (class extends LockProvider {
      lock(): Promise<SimpleLock | undefined> {
        calls++;
        return calls === 1 ? grant.promise : Promise.resolve(undefined);
      }
    })();
    const { scheduler } = scheduled(
      [
        job({ fixedRate: "1h" }, () => {}, { lock: { name: "digest", lockAtMostFor: "5s" } }),
      ],
      testHost({ locks }),
      { clock },
    );
    scheduler.start();
    await clock.advance(5001); // the wait is given up
    grant.resolve({ unlock: () => void unlocked++ as unknown as Promise<void> });
    await clock.advance(1);
    assert.equal(unlocked, 1);
  });

  it("an unlock() that never answers is given up at lockAtMostFor, and the schedule goes on", async () => {
    const clock = new FakeClock(T0);
    const locks = new (class extends LockProvider {
      lock(): Promise<SimpleLock | undefined> {
        return Promise.resolve({ unlock: () => new Promise<void>(() => {}) });
      }
    })();
    const host = testHost({ locks });
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ fixedDelay: 1000 }, () => void n++, {
          lock: { name: "digest", lockAtMostFor: "2s" },
        }),
      ],
      host,
      { clock },
    );
    scheduler.start();
    await clock.advance(3500);
    assert.equal(n, 2);
    assert.match(host.logged[0].message, /could not be released; it ends at lockAtMostFor/);
  });

  it("null is a lock held elsewhere; anything else that is not a lock skips the run, said", async () => {
    for (const [answer, runs, logged] of [[null, 0, 0], [true, 0, 1], [{}, 0, 1]] as const) {
      const clock = new FakeClock(T0);
      const locks = new (class extends LockProvider {
        lock(): Promise<SimpleLock | undefined> {
          return Promise.resolve(answer as unknown as SimpleLock);
        }
      })();
      const host = testHost({ locks });
      let n = 0;
      const { scheduler } = scheduled(
        [
          job({ fixedRate: 1000 }, () => void n++, {
            lock: { name: "digest", lockAtMostFor: "1m" },
          }),
        ],
        host,
        { clock },
      );
      scheduler.start();
      await clock.advance(1);
      assert.equal(n, runs, JSON.stringify(answer));
      assert.equal(host.logged.length, logged, JSON.stringify(host.logged));
      if (logged > 0) {
        assert.match(
          (host.logged[0].error as Error).message,
          /neither a lock \(with unlock\(\)\) nor undefined/,
        );
      }
    }
  });
});

describe("edge triggers: runCron", () => {
  const jobs = (runs: string[]) => [
    job({ cron: "0 0/5 * * * *" }, () => void runs.push("five"), { name: "Jobs.five" }),
    job({ cron: "0 0 * * *" }, () => void runs.push("daily"), { name: "Jobs.daily" }),
    job({ fixedRate: 1000 }, () => void runs.push("rate"), { name: "Jobs.rate" }),
  ];

  it("runs the cron jobs whose expression is the trigger's, once each", async () => {
    const runs: string[] = [];
    const { scheduler } = scheduled(jobs(runs));
    await scheduler.runCron("0/5 * * * *");
    assert.deepEqual(runs, ["five"]);
    await scheduler.runCron("0  0 * *  *");
    assert.deepEqual(runs, ["five", "daily"]);
  });

  it("refuses, said, a job a trigger would run at another hour or on another day", async () => {
    const runs: string[] = [];
    const host = testHost();
    const { scheduler } = scheduled([
      job({ cron: "0 0 3 * * *", zone: "Europe/Berlin" }, () => void runs.push("berlin"), {
        name: "Jobs.berlin",
      }),
      job({ cron: "0 0 17 * * 1" }, () => void runs.push("monday?"), { name: "Jobs.monday" }),
      job({ cron: "0 0 17 * * MON" }, () => void runs.push("MON"), { name: "Jobs.named" }),
      job({ cron: "0 0 9 ? * FRI#1", zone: "UTC" }, () => void runs.push("FRI#1"), {
        name: "Jobs.first",
      }),
    ], host);
    await scheduler.runCron("0 3 * * *");
    await scheduler.runCron("0 17 * * 1");
    await scheduler.runCron("0 17 * * MON");
    await scheduler.runCron("0 9 ? * FRI#1");
    assert.deepEqual(runs, ["MON", "FRI#1"]);
    assert.deepEqual(host.logged.map((l) => l.level), ["error", "error"]);
    assert.match(
      host.logged[0].message,
      /Jobs\.berlin: .*zone is Europe\/Berlin, and cron triggers are in UTC.*not run$/,
    );
    assert.match(
      host.logged[1].message,
      /Jobs\.monday: .*day of week "1" is in numbers, which Cloudflare counts from 1 for Sunday.*not run$/,
    );
  });

  it("logs a trigger no job matches, with the jobs' expressions", async () => {
    const host = testHost();
    const { scheduler } = scheduled(jobs([]), host);
    await scheduler.runCron("1 2 3 4 5");
    assert.equal(host.logged.length, 1);
    assert.match(
      host.logged[0].message,
      /"1 2 3 4 5" matches no @Scheduled job: the cron jobs are Jobs\.five "0 0\/5 \* \* \* \*", Jobs\.daily "0 0 \* \* \*"/,
    );
  });

  it("skips a job still running from the last trigger", async () => {
    const host = testHost();
    const slow = deferred();
    let n = 0;
    const { scheduler } = scheduled([
      job({ cron: "0 0 * * *" }, () => {
        n++;
        return slow.promise;
      }),
    ], host);
    const first = scheduler.runCron("0 0 * * *");
    await scheduler.runCron("0 0 * * *");
    assert.equal(n, 1);
    assert.match(host.logged[0].message, /still running; the trigger "0 0 \* \* \*" skips it/);
    slow.resolve();
    await first;
  });

  it("a run a trigger started holds the job: a timer tick meanwhile is skipped", async () => {
    const clock = new FakeClock(Date.parse("2026-03-01T09:59:30Z"));
    const slow = deferred();
    let n = 0;
    const { scheduler } = scheduled(
      [
        job({ cron: "0 * * * * *" }, () => {
          n++;
          return slow.promise;
        }),
      ],
      testHost(),
      { clock },
    );
    scheduler.start();
    const triggered = scheduler.runCron("* * * * *");
    await settle();
    assert.equal(n, 1);
    await clock.advance(60_000); // 10:00 and 10:00:30: the trigger's run still going
    assert.equal(n, 1);
    slow.resolve();
    await triggered;
    await clock.advance(60_000); // 10:01
    assert.equal(n, 2);
  });

  it("runs nothing when scheduling is off, or once stopped", async () => {
    let n = 0;
    const off = scheduled(
      [job({ cron: "0 0 * * *" }, () => void n++)],
      testHost({ enabled: false }),
    );
    await off.scheduler.runCron("0 0 * * *");
    off.scheduler.start();
    const on = scheduled([job({ cron: "0 0 * * *" }, () => void n++)]);
    await on.scheduler.stop(1000);
    await on.scheduler.runCron("0 0 * * *");
    assert.equal(n, 0);
    assert.equal(off.clock.pending, 0);
  });
});

describe("Deno.cron, where the runtime has it", () => {
  function fakeDenoCron() {
    const registered: {
      name: string;
      schedule: string;
      signal: AbortSignal;
      handler: () => Promise<void>;
    }[] = [];
    const cron: DenoCron = (name, schedule, options, handler) => {
      registered.push({ name, schedule, signal: options.signal, handler });
      return Promise.resolve();
    };
    return { cron, registered };
  }

  it("registers the cron jobs it can run (UTC, seconds 0); the others keep the scheduler's timers", async () => {
    const { cron, registered } = fakeDenoCron();
    const clock = new FakeClock(T0);
    let n = 0;
    // A job without a zone is in the runtime's: UTC on Deno Deploy, anything on a laptop.
    const runtimeUtc = ["UTC", "Etc/UTC"].includes(
      Intl.DateTimeFormat().resolvedOptions().timeZone,
    );
    const { scheduler } = scheduled(
      [
        job({ cron: "0 0/5 * * * *", zone: "UTC" }, () => void n++, { name: "Jobs.five" }),
        job({ cron: "0 0 3 * * *", zone: "Etc/UTC" }, () => {}, { name: "Jobs.#utc" }),
        job({ cron: "0 0 3 * * *" }, () => {}, { name: "Jobs.local" }),
        job({ cron: "0 0 3 * * *", zone: "Europe/Berlin" }, () => {}, { name: "Jobs.berlin" }),
        job({ cron: "30 * * * * *", zone: "UTC" }, () => {}, { name: "Jobs.seconds" }),
        job({ cron: "0 0 3 * * MON", zone: "UTC" }, () => {}, { name: "Jobs.names" }),
        // Deno.cron counts the days of the week from 1 for Sunday: kept on the timers.
        job({ cron: "0 0 3 * * 1", zone: "UTC" }, () => {}, { name: "Jobs.monday" }),
        job({ fixedRate: 1000 }, () => {}, { name: "Jobs.rate" }),
      ],
      testHost(),
      { clock, denoCron: cron },
    );
    scheduler.start();
    // Deno.cron's names are letters, digits, spaces, `-` and `_`.
    assert.deepEqual(registered.map((r) => [r.name, r.schedule]), [
      ["Jobs_five", "0/5 * * * *"],
      ["Jobs__utc", "0 3 * * *"],
      ...runtimeUtc ? [["Jobs_local", "0 3 * * *"]] : [],
    ]);
    assert.equal(clock.pending, runtimeUtc ? 5 : 6);
    await registered[0].handler();
    assert.equal(n, 1);
    await scheduler.stop(1000);
    assert.ok(registered.every((r) => r.signal.aborted));
    await registered[0].handler();
    assert.equal(n, 1, "nothing runs once stopped");
  });

  it("keeps its own timers for a job Deno.cron refuses, and says so", async () => {
    const clock = new FakeClock(Date.parse("2026-03-01T02:59:00Z"));
    const host = testHost();
    let n = 0;
    const { scheduler } = scheduled(
      [job({ cron: "0 0 3 * * *", zone: "UTC" }, () => void n++)],
      host,
      {
        clock,
        denoCron: () => {
          throw new TypeError("Cron with this name already exists");
        },
      },
    );
    scheduler.start();
    assert.match(
      host.logged[0].message,
      /Jobs\.run: Deno\.cron refused it \(TypeError: Cron with this name already exists\); timers run it/,
    );
    await clock.advance(60_000);
    assert.equal(n, 1);
  });
});

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
    refused({ fixedRate: 0 }, /fixedRate must be at least 1 ms/);
    refused({ fixedDelay: "soon" }, /fixedDelay "soon" is not a duration/);
    refused({ fixedRate: 2 ** 31 }, /is not a duration/);
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

  it("refuses a lock with no LockProvider bean, a lock without a schedule, and bad lock times", () => {
    refused(
      { fixedRate: 1000 },
      /^@SchedulerLock on Jobs\.run \(class Jobs\): no bean is a LockProvider/,
      {
        lock: { name: "x", lockAtMostFor: "1m" },
      },
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
    refused({ fixedRate: 1000 }, /lockAtMostFor "forever" is not a duration/, {
      lock: { name: "x", lockAtMostFor: "forever" },
    }, host);
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
