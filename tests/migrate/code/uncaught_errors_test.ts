import assert from "node:assert/strict";
import process from "node:process";
import { describe, it } from "node:test";
import { failOnUncaught } from "../../../src/migrate/code/uncaught_errors.ts";
import { RUNTIME } from "../../runtime.ts";

/**
 * Gives `error` to the listeners for uncaught errors that are not `theirs`, as the runtime would
 * (raising it for real would fail the test itself).
 */
function raise(error: Error, theirs: readonly unknown[]): void {
  if (RUNTIME === "deno") {
    globalThis.dispatchEvent(new ErrorEvent("error", { error, cancelable: true }));
    return;
  }
  for (const listener of process.listeners("uncaughtException")) {
    if (!theirs.includes(listener)) listener(error, "uncaughtException");
  }
}

describe("failOnUncaught", () => {
  it("tells every live run what no guarded code can be said to have thrown, until the last stops", () => {
    // The test runner's own listeners.
    const theirs = process.listeners("uncaughtException");
    const told: [string, unknown][] = [];
    const stopFirst = failOnUncaught((error) => told.push(["first", error]));
    const stopSecond = failOnUncaught((error) => told.push(["second", error]));
    const early = new Error("early");
    raise(early, theirs);
    stopFirst();
    // Stopping twice must not stop the other run's listening.
    stopFirst();
    const late = new Error("late");
    raise(late, theirs);
    stopSecond();
    raise(new Error("after"), theirs);
    assert.deepEqual(told, [["first", early], ["second", early], ["second", late]]);
    assert.deepEqual(process.listeners("uncaughtException"), theirs);
  });
});
