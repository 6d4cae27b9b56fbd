// The supervisor of @Daemon runs on a virtual clock: restarts with growing delays, and the stop.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DaemonSupervisor } from "../../src/tasks/daemon_supervisor.ts";
import { Backoff } from "../../src/runtime/backoff.ts";
import { FakeClock } from "../fake_clock.ts";
import { memoryLogger } from "../helpers.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("DaemonSupervisor", () => {
  it("a daemon that throws twice then runs is restarted twice, 1 s then 2 s later", async () => {
    const clock = new FakeClock(0);
    const logger = memoryLogger();
    let calls = 0;
    const startedAt: number[] = [];
    const supervisor = new DaemonSupervisor(
      [{
        name: "indexer",
        run: (signal) => {
          startedAt.push(clock.monotonic());
          if (++calls <= 2) return Promise.reject(new Error(`crash ${calls}`));
          return new Promise((resolve) => signal.addEventListener("abort", resolve));
        },
      }],
      logger,
      { clock },
    );
    supervisor.start();
    await clock.whenSleeping();
    assert.deepEqual(supervisor.inBackoff, new Set(["indexer"]));
    assert.deepEqual(clock.due, [1000]);
    clock.next();
    await clock.whenSleeping();
    assert.deepEqual(clock.due, [1000 + 2000]);
    clock.next();
    await until(() => calls === 3);
    assert.deepEqual(startedAt, [0, 1000, 3000]);
    assert.equal(supervisor.restarts, 2);
    assert.deepEqual(supervisor.inBackoff, new Set());
    assert.deepEqual(logger.lines.map((line) => line[0]), [
      "@Daemon indexer failed; restarting in 1000 ms",
      "@Daemon indexer failed; restarting in 2000 ms",
    ]);
    assert.deepEqual(await supervisor.stop(60_000), []);
  });

  it("the delay is capped", async () => {
    const clock = new FakeClock(0);
    const supervisor = new DaemonSupervisor(
      [{ name: "d", run: () => Promise.resolve() }],
      memoryLogger(),
      { clock, backoff: new Backoff({ delay: 1000, multiplier: 2, maxDelay: 4000 }) },
    );
    supervisor.start();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      await clock.whenSleeping();
      waits.push(clock.due[0] - clock.monotonic());
      clock.next();
    }
    assert.deepEqual(waits, [1000, 2000, 4000, 4000, 4000]);
    assert.deepEqual(await supervisor.stop(60_000), []);
  });

  it("a run that lasted the longest delay was healthy: its crash starts the delays again", async () => {
    const clock = new FakeClock(0);
    const logger = memoryLogger();
    let calls = 0;
    const supervisor = new DaemonSupervisor(
      [{
        name: "indexer",
        run: async (signal) => {
          // Runs 1 and 2 crash at once; run 3 after a minute of work; run 4 at once again.
          if (++calls === 3) await clock.sleep(60_000, signal);
          throw new Error(`crash ${calls}`);
        },
      }],
      logger,
      { clock },
    );
    // The next wait on the clock, ended at once.
    const nextWait = async () => {
      await clock.whenSleeping();
      const ms = clock.due[0] - clock.monotonic();
      clock.next();
      return ms;
    };
    supervisor.start();
    assert.equal(await nextWait(), 1000);
    assert.equal(await nextWait(), 2000);
    assert.equal(await nextWait(), 60_000); // run 3's work
    assert.equal(calls, 3);
    assert.equal(await nextWait(), 1000);
    assert.equal(await nextWait(), 2000);
    assert.equal(calls, 4);
    assert.deepEqual(await supervisor.stop(60_000), []);
  });

  it("stop aborts the signal and waits for the runs; one that ignores it is named", async () => {
    const logger = memoryLogger();
    let aborted = 0;
    let started = 0;
    const supervisor = new DaemonSupervisor([
      {
        name: "polite",
        run: (signal) => {
          started++;
          return new Promise((resolve) =>
            signal.addEventListener("abort", () => {
              aborted++;
              resolve(undefined);
            })
          );
        },
      },
      {
        name: "stubborn",
        run: () => {
          started++;
          return new Promise(() => {});
        },
      },
    ], logger);
    supervisor.start();
    await until(() => started === 2);
    assert.deepEqual(await supervisor.stop(20), ["stubborn"]);
    assert.equal(aborted, 1);
    assert.match(String(logger.lines[0][0]), /^@Daemon: stubborn did not end within 20 ms/);
  });
});
