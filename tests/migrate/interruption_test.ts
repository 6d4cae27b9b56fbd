import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pause } from "../../src/migrate/interruption.ts";
import { isMigrationError } from "../../src/migrate/migration_error.ts";

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
});
