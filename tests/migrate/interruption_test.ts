import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pause } from "../../src/migrate/interruption.ts";
import { isMigrationError } from "../../src/migrate/migration_error.ts";
import { FakeClock } from "../fake_clock.ts";

describe("pause", () => {
  it("resolves after its time when nothing aborts it", async () => {
    await pause(1, new AbortController().signal, "waiting");
    await pause(0, undefined, "waiting");
  });

  it("rejects with an interrupted MigrationError naming what was waited for, at once when the signal aborts", async () => {
    const controller = new AbortController();
    // An hour: only the abort can end it, so a pass proves the wait was cut short.
    const waiting = pause(3_600_000, controller.signal, "waiting for the lock");
    controller.abort();
    await assert.rejects(waiting, (e) => {
      assert.ok(isMigrationError(e, "interrupted"));
      assert.equal(e.message, "interrupted while waiting for the lock");
      return true;
    });
  });

  it("rejects at once on a signal aborted before", async () => {
    await assert.rejects(
      pause(3_600_000, AbortSignal.abort(), "x"),
      (e) => isMigrationError(e, "interrupted"),
    );
  });

  it("waits on the clock it is given: an hour of a test's clock passes when the test moves it", async () => {
    const clock = new FakeClock(0);
    const waiting = pause(3_600_000, undefined, "waiting", clock);
    await clock.whenSleeping();
    await clock.advance(3_600_000);
    await waiting;
    const controller = new AbortController();
    const interrupted = pause(3_600_000, controller.signal, "waiting for the lock", clock);
    controller.abort();
    await assert.rejects(interrupted, (e) => {
      assert.ok(isMigrationError(e, "interrupted"));
      assert.equal(e.message, "interrupted while waiting for the lock");
      return true;
    });
    assert.deepEqual(clock.due, []);
  });
});
