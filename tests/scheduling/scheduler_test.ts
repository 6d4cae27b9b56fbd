// The scheduler's rules in virtual time: when each kind of job runs, that a job never overlaps
// itself, that a failure leaves the schedule going, and stopping. Locks, edge triggers, Deno.cron
// and what jobs() reports are in the scheduler_*_test.ts files beside it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FakeClock, settle } from "../fake_clock.ts";
import { deferred } from "../deferred.ts";
import { job, recorder, scheduled, T0, testHost } from "./scheduler_fixtures.ts";

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
