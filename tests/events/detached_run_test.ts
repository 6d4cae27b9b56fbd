// runDetached leaves every binding registered, each once, and runs the function inside them all.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AsyncLocalStorage } from "node:async_hooks";
import { registerDetach, runDetached } from "../../src/events/detached_run.ts";

describe("runDetached", () => {
  it("runs the function outside a registered binding, and gives back what it returns", () => {
    const bound = new AsyncLocalStorage<string>();
    const leave = <T>(fn: () => T): T => bound.exit(fn);
    registerDetach(leave);
    registerDetach(leave);
    let left = 0;
    const counted = <T>(fn: () => T): T => {
      left++;
      return fn();
    };
    registerDetach(counted);
    registerDetach(counted);
    const seen = bound.run("the caller's", () => runDetached(() => bound.getStore() ?? "none"));
    assert.equal(seen, "none");
    assert.equal(left, 1, "a binding registered twice is left once");
    assert.equal(bound.run("after", () => bound.getStore()), "after");
  });

  it("passes on what the function throws", () => {
    assert.throws(() =>
      runDetached(() => {
        throw new RangeError("inner");
      }), /inner/);
  });
});
