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
    let code: Promise<void> | undefined;
    const error = await runUntilStopped(
      () =>
        code = (async () => {
          try {
            process.exit(0);
          } catch {
            // Swallowed: the file must fail all the same.
          }
          await Promise.resolve();
        })(),
      rule(),
    ).then(() => undefined, (thrown: unknown) => thrown);
    assert.ok(error instanceof ExitRefused, String(error));
    assert.match(error.message, /called process\.exit\(0\)/);
    // Put back once the code settled.
    await code;
    assert.equal(process.exit, exit);
  });

  it("abandons code that has not settled once the stop timeout after the signal passed", async () => {
    const stop = new AbortController();
    stop.abort();
    const go = gate();
    const error = await runUntilStopped(() => go.promise, rule(stop.signal))
      .then(() => undefined, (thrown: unknown) => thrown);
    // Settled at last: the code leaves nothing running behind this test.
    go.open();
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
    first.end();
    assert.throws(() => second.run(() => process.exit(2)), ExitRefused);
    // Ending a guard twice changes nothing: the other one still counts.
    first.end();
    assert.throws(() => second.run(() => process.exit(2)), ExitRefused);
    second.end();
    assert.equal(process.exit, exit);
    second.end();
    assert.equal(process.exit, exit);
  });
});

/** Replaces the process's exit with one that records its calls, for the length of `body`. */
async function withExitRecorded(body: (calls: unknown[]) => Promise<void>): Promise<void> {
  const own = process.exit;
  const calls: unknown[] = [];
  process.exit = ((code?: number) => void calls.push(code)) as typeof process.exit;
  try {
    await body(calls);
  } finally {
    process.exit = own;
  }
}

/** A promise with its resolve, for code that waits on the test. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe("runUntilStopped: whose exit is refused", () => {
  it("lets an exit from outside the code through: the app's own, the runner's second Ctrl-C", async () => {
    await withExitRecorded(async (calls) => {
      const go = gate();
      const started = gate();
      const run = runUntilStopped(async () => {
        started.open();
        await go.promise;
        return "done";
      }, rule());
      await started.promise;
      // Called from a signal listener or a timer of the app's, not from the code.
      process.exit(130);
      assert.deepEqual(calls, [130]);
      go.open();
      assert.equal(await run, "done");
    });
  });

  it("fails only the run whose code called exit, where two overlap", async () => {
    await withExitRecorded(async (calls) => {
      const go = gate();
      const other = runUntilStopped(async () => {
        await go.promise;
        return "other";
      }, rule());
      const exiting = runUntilStopped(async () => {
        await Promise.resolve();
        process.exit(0);
      }, rule()).then(() => undefined, (thrown: unknown) => thrown);
      assert.ok(await exiting instanceof ExitRefused);
      go.open();
      assert.equal(await other, "other");
      assert.deepEqual(calls, []);
    });
  });

  it("refuses an abandoned code's exit until that code settles, then puts exit back", async () => {
    await withExitRecorded(async (calls) => {
      const recorded = process.exit;
      const go = gate();
      let refused: unknown;
      let code: Promise<void> | undefined;
      const stop = new AbortController();
      stop.abort();
      const error = await runUntilStopped(
        () =>
          code = (async () => {
            await go.promise;
            try {
              process.exit(0);
            } catch (thrown) {
              refused = thrown;
            }
          })(),
        rule(stop.signal),
      ).then(() => undefined, (thrown: unknown) => thrown);
      assert.ok(error instanceof CodeAbandoned, String(error));
      // The run went on (rolled back, reported): the code, still running, may not end it.
      go.open();
      await code;
      assert.ok(refused instanceof ExitRefused, String(refused));
      assert.deepEqual(calls, []);
      assert.equal(process.exit, recorded);
    });
  });

  it("refuses an exit from the code's ctx.signal listener, though the abort came from outside", async () => {
    await withExitRecorded(async (calls) => {
      const stop = new AbortController();
      const listening = gate();
      const go = gate();
      void listening.promise.then(() => stop.abort());
      const error = await runUntilStopped(
        (signal) =>
          new Promise<void>((resolve) => {
            void go.promise.then(resolve);
            signal.addEventListener("abort", () => {
              try {
                process.exit(1);
              } catch {
                // Swallowed: the file must fail all the same.
              }
            });
            listening.open();
          }),
        rule(stop.signal, 60_000),
      ).then(() => undefined, (thrown: unknown) => thrown);
      go.open();
      assert.ok(error instanceof ExitRefused, String(error));
      assert.deepEqual(calls, []);
    });
  });
});
