// One replica's side of a singleton daemon, on a virtual clock: it tries for the lock once a
// second, runs with the lock's fencing token, renews every third of the lease, and aborts its
// run's signal once the lease may be lost: a renewal refused, or renewals failing or hanging for
// two thirds of the lease. The lock is
// given back once the run ended; a manager whose locks do not renew is refused, naming it. Two
// replicas over one lock manager run one at a time, the second with a greater token.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type HeldLock, LockManager, type LockRequest } from "../../src/tasks/lock_manager.ts";
import { MemoryLockManager } from "../../src/tasks/memory_lock_manager.ts";
import { type DaemonLease, SingletonDaemon } from "../../src/tasks/singleton_daemon.ts";
import { FakeClock, settle } from "../fake_clock.ts";
import { deferred } from "../deferred.ts";
import { memoryLogger } from "../helpers.ts";

const LEASE = 3000;
const logger = memoryLogger();
const SETTINGS = { key: "daemon:indexer", leaseMs: LEASE, managerName: "app's LockManager" };

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await settle();
}

/** A lock manager whose one lock renews as the test says: `true`, `false`, a throw or never. */
class ScriptedLocks extends LockManager {
  answer: () => Promise<boolean> = () => Promise.resolve(true);
  renewals: number[] = [];
  released = 0;
  requests: LockRequest[] = [];
  /** How many tries to take it fail as a store out of reach does, before the next ones answer. */
  failing = 0;
  /** Whether the lock is there to take: another replica holds it otherwise. */
  free = true;
  constructor(readonly clock: FakeClock, readonly renews = true) {
    super();
  }
  acquire(request: LockRequest): Promise<HeldLock | undefined> {
    this.requests.push(request);
    if (this.failing > 0) {
      this.failing--;
      return Promise.reject(new Error("connection refused"));
    }
    if (!this.free) return Promise.resolve(undefined);
    const lock: HeldLock = {
      token: 41,
      release: () => Promise.resolve(void this.released++),
      ...(this.renews
        ? {
          renew: (ms: number) => {
            assert.equal(ms, LEASE);
            this.renewals.push(this.clock.monotonic());
            return this.answer();
          },
        }
        : {}),
    };
    return Promise.resolve(lock);
  }
}

/** A daemon run that records its token and waits for its signal, or for the test. */
function waitingRun() {
  const runs: { token: number; signal: AbortSignal }[] = [];
  const finish = deferred();
  const run = async (signal: AbortSignal, lease: DaemonLease) => {
    runs.push({ token: lease.token, signal });
    await Promise.race([
      finish.promise,
      new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true })),
    ]);
  };
  return { runs, finish, run };
}

/** One replica's daemon over `locks` (scripted, on a virtual clock), started. */
function startReplica(locks = new ScriptedLocks(new FakeClock(0)), log = logger) {
  const { runs, finish, run } = waitingRun();
  const app = new AbortController();
  const ended = new SingletonDaemon(locks, SETTINGS, run, log, locks.clock).run(app.signal);
  return { clock: locks.clock, locks, runs, finish, app, ended };
}

describe("SingletonDaemon", () => {
  it("runs with the lock's token, renews every third of the lease, gives the lock back", async () => {
    const clock = new FakeClock(0);
    const locks = new ScriptedLocks(clock);
    const { runs, finish, run } = waitingRun();
    const app = new AbortController();
    const ended = new SingletonDaemon(locks, SETTINGS, run, logger, clock).run(app.signal);
    await until(() => runs.length === 1);
    assert.equal(runs[0].token, 41);
    assert.deepEqual(
      locks.requests.map(({ key, waitMs, leaseMs, minHoldMs, fenced }) => ({
        key,
        waitMs,
        leaseMs,
        minHoldMs,
        fenced,
      })),
      [{ key: "daemon:indexer", waitMs: 0, leaseMs: LEASE, minHoldMs: 1, fenced: true }],
    );
    await clock.advance(10_000);
    // Confirmed as it was taken, then every 1000 ms.
    assert.deepEqual(locks.renewals, [
      0,
      1000,
      2000,
      3000,
      4000,
      5000,
      6000,
      7000,
      8000,
      9000,
      10000,
    ]);
    assert.equal(runs[0].signal.aborted, false);
    finish.resolve();
    await ended;
    assert.equal(locks.released, 1);
    // Nothing renews once the run ended.
    await clock.advance(10_000);
    assert.equal(locks.renewals.length, 11);
    assert.equal(clock.pending, 0);
  });

  it("aborts the run once a renewal is refused, and says so when the run then ends", async () => {
    const replica = startReplica();
    const { clock, locks, runs } = replica;
    const ended = assert.rejects(replica.ended, /its run ended once the lease was lost/);
    await until(() => runs.length === 1);
    locks.answer = () => Promise.resolve(false);
    await clock.advance(1000);
    assert.equal(runs[0].signal.aborted, true);
    assert.match(String(runs[0].signal.reason), /lease was lost: .*another replica may hold it/);
    await ended;
    assert.equal(locks.released, 1);
  });

  it("aborts the run a third of the lease before its end when renewals fail or hang", async () => {
    for (const failure of ["throws", "hangs"] as const) {
      const replica = startReplica();
      const { clock, locks, runs } = replica;
      const ended = assert.rejects(replica.ended, /lease was lost/);
      await until(() => runs.length === 1);
      // The last renewal that held began at 0: the lease surely ends at 3000, and the run is
      // told at 2000, a third of the lease before another replica could take the lock.
      locks.answer = failure === "throws"
        ? () => Promise.reject(new Error("connection refused"))
        : () => new Promise(() => {});
      await clock.advance(1999);
      assert.equal(runs[0].signal.aborted, false, failure);
      await clock.advance(1);
      assert.equal(runs[0].signal.aborted, true, failure);
      assert.match(
        String(runs[0].signal.reason),
        failure === "throws"
          ? /no renewal was confirmed in time \(connection refused\)/
          : /no renewal was confirmed in time$/,
      );
      if (failure === "hangs") {
        // The release waits for the renewal under way, a lease at most: it could land after.
        await clock.advance(LEASE - 1);
        assert.equal(locks.released, 0);
        await clock.advance(1);
      }
      await ended;
      assert.equal(locks.released, 1);
      // A failed renewal is tried again sooner than a third of the lease, and none once lost.
      await clock.advance(10_000);
      // (At 2000 the watchdog and a retry fall due together: whichever fires first, nothing
      // renews after.)
      if (failure === "throws") {
        assert.deepEqual(locks.renewals.slice(0, 3), [0, 1000, 1500]);
        assert.ok(locks.renewals.length <= 4, `${locks.renewals}`);
      } else assert.deepEqual(locks.renewals, [0, 1000]);
    }
  });

  it("tries to take a lock another holds once per interval, and stops at close", async () => {
    const clock = new FakeClock(0);
    const locks = new ScriptedLocks(clock);
    locks.free = false;
    const { runs, run } = waitingRun();
    const app = new AbortController();
    const ended = new SingletonDaemon(locks, SETTINGS, run, logger, clock).run(app.signal);
    await clock.whenSleeping();
    await clock.advance(5000);
    assert.equal(locks.requests.length, 6, "one try, then one a second");
    locks.free = true;
    await clock.advance(1000);
    await until(() => runs.length === 1);
    app.abort(new Error("closing"));
    await ended;
    assert.equal(locks.requests.length, 7);
  });

  it("gives the lock back once a renewal under way at the run's end answered, whatever", async () => {
    for (const answer of ["holds", "fails"] as const) {
      const { clock, locks, runs, finish, ended } = startReplica();
      await until(() => runs.length === 1);
      const pending = deferred<boolean>();
      locks.answer = () => pending.promise;
      await clock.advance(1000);
      assert.equal(locks.renewals.length, 2);
      finish.resolve();
      await settle();
      assert.equal(locks.released, 0, "not while the renewal could still land");
      if (answer === "holds") pending.resolve(true);
      else pending.reject(new Error("connection reset"));
      assert.equal(await ended, undefined, answer);
      assert.equal(locks.released, 1, answer);
      assert.equal(clock.pending, 0, `${answer}: no timer left`);
    }
  });

  it("runs nothing when its first renewal hangs, and gives the lock back", async () => {
    const clock = new FakeClock(0);
    const locks = new ScriptedLocks(clock);
    locks.answer = () => new Promise(() => {});
    const { runs, run } = waitingRun();
    const ended = assert.rejects(
      new SingletonDaemon(locks, SETTINGS, run, logger, clock).run(new AbortController().signal),
      /the lock was taken, but its lease could not be confirmed in time/,
    );
    // Counted from the try that took the lock: told at 2000, the release waits a lease more.
    await clock.advance(2000 + LEASE);
    await ended;
    assert.equal(runs.length, 0);
    assert.equal(locks.released, 1);

    // The app closing while the first renewal hangs: nothing runs, nothing is reported.
    const app = new AbortController();
    const closing = new SingletonDaemon(locks, SETTINGS, run, logger, clock).run(app.signal);
    await until(() => locks.renewals.length === 2);
    app.abort();
    await clock.advance(LEASE);
    assert.equal(await closing, undefined);
    assert.equal(runs.length, 0);
    assert.equal(locks.released, 2);
  });

  it("keeps trying to take its lock while the store fails, telling the log once", async () => {
    const clock = new FakeClock(0);
    const locks = new ScriptedLocks(clock);
    locks.failing = 3;
    const logged = memoryLogger();
    const { runs, finish, ended } = startReplica(locks, logged);
    await clock.whenSleeping();
    await clock.advance(3000);
    await until(() => runs.length === 1);
    assert.equal(locks.requests.length, 4);
    assert.deepEqual(logged.lines.map((line) => line[0]), [
      "@Daemon daemon:indexer: could not take its lock (1 time in a row); trying again",
    ]);
    finish.resolve();
    await ended;
  });

  it("keeps the run going through a renewal that failed once, then held", async () => {
    const { clock, locks, runs, finish, ended } = startReplica();
    await until(() => runs.length === 1);
    let calls = 0;
    locks.answer = () =>
      ++calls === 1 ? Promise.reject(new Error("timeout")) : Promise.resolve(true);
    await clock.advance(20_000);
    assert.equal(runs[0].signal.aborted, false);
    finish.resolve();
    await ended;
  });

  it("aborts the run when the app closes, and waits for no lock once closed", async () => {
    const { clock, locks, runs, app, ended } = startReplica();
    await until(() => runs.length === 1);
    app.abort(new Error("closing"));
    assert.equal(runs[0].signal.aborted, true);
    await ended;
    assert.equal(locks.released, 1);
    const later = waitingRun();
    assert.equal(
      await new SingletonDaemon(locks, SETTINGS, later.run, logger, clock).run(app.signal),
      undefined,
    );
    assert.equal(later.runs.length, 0);
    assert.equal(locks.requests.length, 1, "no lock asked for once closed");
  });

  it("refuses a lock manager whose locks do not renew, naming it, and gives the lock back", async () => {
    const clock = new FakeClock(0);
    const locks = new ScriptedLocks(clock, false);
    const { runs, run } = waitingRun();
    await assert.rejects(
      new SingletonDaemon(locks, SETTINGS, run, logger, clock).run(new AbortController().signal),
      /app's LockManager gives locks without renew\(\) or a fencing token/,
    );
    assert.equal(runs.length, 0);
    assert.equal(locks.released, 1);
  });

  it("runs two replicas over one lock manager one at a time, the next with a greater token", async () => {
    const locks = new MemoryLockManager();
    const app = new AbortController();
    const first = waitingRun();
    const second = waitingRun();
    const a = new SingletonDaemon(locks, SETTINGS, first.run, logger).run(app.signal);
    await until(() => first.runs.length === 1);
    const b = new SingletonDaemon(locks, SETTINGS, second.run, logger).run(app.signal);
    await settle();
    assert.equal(second.runs.length, 0);
    first.finish.resolve();
    await a;
    await until(() => second.runs.length === 1);
    assert.ok(second.runs[0].token > first.runs[0].token);
    app.abort();
    await b;
  });
});
