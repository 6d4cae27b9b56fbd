// The scheduler's edge triggers in virtual time (runCron), and Deno.cron where the runtime has it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { DenoCron } from "../../src/scheduling/scheduler.ts";
import { FakeClock, settle } from "../fake_clock.ts";
import { deferred } from "../deferred.ts";
import { job, scheduled, T0, testHost } from "./scheduler_fixtures.ts";

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
