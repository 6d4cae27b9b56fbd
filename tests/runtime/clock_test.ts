// systemClock on the real clock (its waits are a few milliseconds), and FakeClock, the clock the
// lease and scheduler tests run on, in virtual time: none of its tests waits in real time.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { systemClock } from "../../src/runtime/clock.ts";
import { FakeClock } from "../fake_clock.ts";

describe("systemClock", () => {
  it("reads Date.now()", () => {
    const before = Date.now();
    const now = systemClock.now();
    assert.ok(before <= now && now <= Date.now());
  });

  it("sleeps, and a sleep of no time or less ends too", async () => {
    const before = Date.now();
    await systemClock.sleep(5);
    assert.ok(Date.now() - before >= 4);
    await systemClock.sleep(0);
    await systemClock.sleep(-1);
  });

  it("ends a sleep with the signal's reason as soon as it aborts, at once when it had", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    // An hour: only the abort can end it.
    const sleeping = systemClock.sleep(3_600_000, controller.signal);
    controller.abort(reason);
    await assert.rejects(sleeping, (e) => e === reason);
    await assert.rejects(
      systemClock.sleep(3_600_000, AbortSignal.abort(reason)),
      (e) => e === reason,
    );
  });

  it("runs a task once after its time, unless cancelled, keeping the process alive or not", async () => {
    const ran: string[] = [];
    systemClock.after(1, () => void ran.push("kept"));
    systemClock.after(1, () => void ran.push("kept alive"), { keepAlive: true });
    systemClock.after(1, () => void ran.push("cancelled")).cancel();
    await systemClock.sleep(20);
    assert.deepEqual(ran, ["kept", "kept alive"]);
  });

  it("reads a monotonic clock that never goes back", () => {
    const first = systemClock.monotonic();
    assert.ok(systemClock.monotonic() >= first);
  });
});

describe("FakeClock, the tests' clock", () => {
  it("stands still until moved, then fires what falls due in order, each at its time", async () => {
    const clock = new FakeClock(1_000);
    const seen: string[] = [];
    const at = (what: string) => () => void seen.push(`${what}@${clock.now()}`);
    clock.after(30, at("b"));
    clock.after(10, at("a"));
    clock.after(30, at("c")); // due with b: after it, as set
    const sleeping = clock.sleep(20).then(at("sleep"));
    assert.equal(clock.now(), 1_000);
    assert.deepEqual(clock.due, [1_010, 1_020, 1_030, 1_030]);
    await clock.advance(25);
    await sleeping;
    assert.equal(clock.now(), 1_025);
    await clock.advance(100);
    // The sleeper goes on at its own time: advance lets it run before the next timer fires.
    assert.deepEqual(seen, ["a@1010", "sleep@1020", "b@1030", "c@1030"]);
    assert.equal(clock.now(), 1_125);
  });

  it("cancels a timer, and ends a sleep on abort, without moving", async () => {
    const clock = new FakeClock(0);
    let ran = false;
    clock.after(10, () => void (ran = true)).cancel();
    const controller = new AbortController();
    const sleeping = clock.sleep(10, controller.signal);
    await clock.whenSleeping();
    controller.abort("stop");
    await assert.rejects(sleeping, (e) => e === "stop");
    assert.deepEqual(clock.due, []);
    assert.equal(clock.next(), false);
    assert.equal(ran, false);
  });

  it("drives a waiting loop to its end, waiting for each background task it started", async () => {
    const clock = new FakeClock(0);
    const log: string[] = [];
    // A background task every 100 that ends a turn later, and a loop polling every 30 until 200.
    const renew = async () => {
      await Promise.resolve();
      log.push(`renewed@${clock.now()}`);
      if (clock.now() < 300) clock.after(100, renew);
    };
    clock.after(100, renew);
    const polls = (async () => {
      let n = 0;
      while (clock.now() < 200) {
        n++;
        await clock.sleep(30);
      }
      return n;
    })();
    assert.equal(await clock.drive(polls), 7);
    assert.equal(clock.now(), 210);
    assert.deepEqual(log, ["renewed@100", "renewed@200"]);
    await clock.drive(new Promise<void>((resolve) => clock.after(200, resolve)), { sleeps: 0 });
    assert.deepEqual(log, ["renewed@100", "renewed@200", "renewed@300"]);
    assert.deepEqual(clock.due, []);
  });

  it("lets what a timer started run before the next fires, and steps the wall clock alone", async () => {
    const clock = new FakeClock(0);
    const seen: string[] = [];
    // Each tick sets the next once a promise chain of its own has moved on.
    const tick = async () => {
      await Promise.resolve();
      seen.push(`tick@${clock.monotonic()}`);
      if (seen.length < 3) clock.after(10, tick);
    };
    clock.after(10, tick);
    clock.stepWall(-5_000);
    await clock.advance(100);
    assert.deepEqual(seen, ["tick@10", "tick@20", "tick@30"]);
    assert.equal(clock.monotonic(), 100);
    assert.equal(clock.now(), -4_900);
    assert.equal(clock.pending, 0);
  });

  it("fires timers `early`, but never a whole wait early", () => {
    const clock = new FakeClock(0, { early: 3 });
    clock.after(10, () => {});
    clock.after(2, () => {});
    assert.deepEqual(clock.due, [2, 7]);
    assert.equal(clock.longestWait, 10);
  });
});
