import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { describe, it } from "node:test";
import { processGone } from "../../src/migrate/local_process.ts";

describe("processGone", () => {
  it("is false for a live process (this one, and init)", () => {
    assert.equal(processGone(process.pid), false);
    assert.equal(processGone(1), false);
  });

  it("is true for a process that has ended", async () => {
    const child = spawn(process.execPath, ["--version"], { stdio: "ignore" });
    await new Promise((r) => child.once("exit", r));
    assert.equal(processGone(child.pid!), true);
  });

  it("is false, not a guess, for what is no pid", () => {
    for (const pid of [0, -1, 1.5, Number.NaN, 2 ** 53]) assert.equal(processGone(pid), false);
  });
});
