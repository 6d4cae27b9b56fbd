// The engine with `--drift`: when it reads the drift, when it takes the lock to repair it,
// and in which order (a target in memory that logs its calls).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DriftInspection } from "../../../src/migrate/driver.ts";
import type { PlannedFile } from "../../../src/migrate/plan/planned_file.ts";
import type { RunnerOptions } from "../../../src/migrate/run/run_targets.ts";
import type { ConnectionDrift, Progress } from "../../../src/migrate/run_report.ts";
import { silentProgress } from "../../../src/migrate/run_report.ts";
import { MemoryTarget, runMemoryTargets } from "../memory_target.ts";

/** A target in memory that also reads and repairs drift, as it is told. */
class DriftTarget extends MemoryTarget {
  /** What reading the drift answers, in turn (the last one again once used up). */
  answers: ConnectionDrift[] = [{ checked: 0, resources: [] }];

  constructor() {
    super("main");
  }

  readonly drift: DriftInspection<PlannedFile> = {
    read: (_files, { decided }) => {
      this.calls.push(`readDrift ${decided.map((f) => `${f.path}:${f.action}`).join(",")}`);
      return Promise.resolve(this.answers.length > 1 ? this.answers.shift()! : this.answers[0]);
    },
    repair: (_files, _decided, found, signal) => {
      this.calls.push(`repairDrift${signal?.aborted ? " (interrupted)" : ""}`);
      return Promise.resolve({
        checked: found.checked,
        resources: found.resources.map((r) =>
          r.reapply ? { ...r, result: "reapplied" as const, remaining: [] } : r
        ),
      });
    },
  };
}

const files: PlannedFile[] = [
  { path: "a.json", hash: "a", runOnce: false, resource: "template a" },
  { path: "b.json", hash: "b", runOnce: false },
];
const drifted = (reapply: boolean): ConnectionDrift => ({
  checked: 1,
  resources: [{
    resource: "template a",
    file: "a.json",
    differences: ["priority: file 1, cluster 2"],
    reapply,
    ...(reapply ? {} : { note: "applying the file again cannot change this" }),
  }],
});

function options(extra: Partial<RunnerOptions> & Pick<RunnerOptions, "command">): RunnerOptions {
  return { dryRun: false, lockTimeoutMs: 1000, progress: silentProgress, drift: true, ...extra };
}

describe("runner with --drift", () => {
  it("status and validate read the drift once, after the records, and take no lock", async () => {
    for (const command of ["status", "validate"] as const) {
      const target = new DriftTarget();
      target.records.set("a.json", "a");
      target.answers = [drifted(true)];
      const report = await runMemoryTargets([{ target, files }], options({ command }));
      assert.deepEqual(target.calls, ["read", "readDrift a.json:skip,b.json:apply", "close"]);
      assert.deepEqual(report.connections[0].drift, drifted(true));
    }
  });

  it("is not read without --drift, nor by the other commands", async () => {
    for (const command of ["migrate", "baseline", "repair", "unlock"] as const) {
      const target = new DriftTarget();
      target.records.set("a.json", "a").set("b.json", "b");
      const report = await runMemoryTargets(
        [{ target, files }],
        options({ command, drift: command !== "migrate" }),
      );
      assert.ok(!target.calls.some((c) => c.startsWith("readDrift")), command);
      assert.equal(report.connections[0].drift, undefined);
    }
  });

  it("migrate --drift with nothing pending and nothing to repair takes no lock", async () => {
    const target = new DriftTarget();
    target.records.set("a.json", "a").set("b.json", "b");
    target.answers = [drifted(false)];
    const report = await runMemoryTargets([{ target, files }], options({ command: "migrate" }));
    assert.deepEqual(target.calls, ["read", "readDrift a.json:skip,b.json:skip", "close"]);
    assert.deepEqual(report.connections[0].drift, drifted(false));
  });

  it("migrate --drift repairs under the lock, after reading again, with no file to apply", async () => {
    const target = new DriftTarget();
    target.records.set("a.json", "a").set("b.json", "b");
    target.answers = [drifted(true)];
    const notes: string[] = [];
    const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
    const report = await runMemoryTargets(
      [{ target, files }],
      options({ command: "migrate", progress }),
    );
    assert.deepEqual(target.calls, [
      "read",
      "readDrift a.json:skip,b.json:skip",
      "lock",
      "read",
      "readDrift a.json:skip,b.json:skip",
      "repairDrift",
      "release",
      "close",
    ]);
    assert.equal(report.connections[0].drift!.resources[0].result, "reapplied");
    assert.deepEqual(notes, ["main: template a had drifted: a.json applied again"]);
  });

  it("migrate --drift applies a file that became pending while it waited for the lock", async () => {
    const target = new DriftTarget();
    target.records.set("a.json", "a").set("b.json", "b");
    target.answers = [drifted(true)];
    // Another runner's repair dropped b's record while this one waited.
    target.lock = () => {
      target.calls.push("lock");
      target.records.delete("b.json");
      return Promise.resolve();
    };
    const report = await runMemoryTargets([{ target, files }], options({ command: "migrate" }));
    assert.ok(target.calls.includes("apply b.json"), target.calls.join(", "));
    assert.equal(report.connections[0].applied, 1);
  });

  it("migrate --drift applies pending files first, then reads the drift again", async () => {
    const target = new DriftTarget();
    target.records.set("a.json", "a");
    target.answers = [drifted(false), drifted(true)];
    await runMemoryTargets([{ target, files }], options({ command: "migrate" }));
    assert.deepEqual(target.calls, [
      "read",
      "readDrift a.json:skip,b.json:apply",
      "lock",
      "read",
      "apply b.json",
      "readDrift a.json:skip,b.json:apply",
      "repairDrift",
      "release",
      "close",
    ]);
  });

  it("migrate --dry-run --drift only reads", async () => {
    const target = new DriftTarget();
    target.answers = [drifted(true)];
    const report = await runMemoryTargets(
      [{ target, files }],
      options({ command: "migrate", dryRun: true }),
    );
    assert.deepEqual(target.calls, ["read", "readDrift a.json:apply,b.json:apply", "close"]);
    assert.equal(report.connections[0].drift!.resources[0].result, undefined);
  });
});
