import assert from "node:assert/strict";
import process from "node:process";
import { describe, it } from "node:test";
import { ExitRefused, guardExit } from "../../../src/migrate/code/exit_guard.ts";
import { CodeAbandoned, runUntilStopped } from "../../../src/migrate/code/run_until_stopped.ts";

const rule = (signal?: AbortSignal, stopTimeoutMs = 0) => ({
  signal,
  stopTimeoutMs,
  option: "--stop-timeout",
});

describe("runUntilStopped", () => {
  it("fails a code file that calls process.exit, even where it catches the refusal", async () => {
    const exit = process.exit;
    const error = await runUntilStopped(async () => {
      try {
        process.exit(0);
      } catch {
        // Swallowed: the file must fail all the same.
      }
      await Promise.resolve();
    }, rule()).then(() => undefined, (thrown: unknown) => thrown);
    assert.ok(error instanceof ExitRefused, String(error));
    assert.match(error.message, /called process\.exit\(0\)/);
    assert.equal(process.exit, exit);
  });

  it("abandons code that has not settled once the stop timeout after the signal passed", async () => {
    const stop = new AbortController();
    stop.abort();
    const error = await runUntilStopped(() => new Promise<never>(() => {}), rule(stop.signal))
      .then(() => undefined, (thrown: unknown) => thrown);
    assert.ok(error instanceof CodeAbandoned, String(error));
    assert.match(error.message, /did not stop within 0 s of the interruption \(--stop-timeout\)/);
  });

  it("returns what the code returns, and leaves a signal that never aborts alone", async () => {
    assert.equal(await runUntilStopped(() => Promise.resolve(7), rule(undefined, 1)), 7);
  });
});

describe("guardExit", () => {
  it("puts the process's exit back only once every overlapping guard ended", () => {
    const exit = process.exit;
    const first = guardExit(() => {});
    const second = guardExit(() => {});
    first();
    assert.throws(() => process.exit(2), ExitRefused);
    second();
    assert.equal(process.exit, exit);
    // Ending a guard twice changes nothing.
    second();
    assert.equal(process.exit, exit);
  });
});
