// `undo` through the engine on memory targets: the plan's order, the callbacks around it, the
// lock, and what a second runner sees.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type {
  ConnectionCallback,
  PlannedFile,
  RunnerOptions,
} from "../../../src/migrate/run/run_targets.ts";
import { silentProgress } from "../../../src/migrate/run_report.ts";
import type { UndoableFile } from "../../../src/migrate/plan/undo_pairs.ts";
import { MemoryTarget, runMemoryTargets } from "../memory_target.ts";
import { checkReport } from "../report_shape.ts";

const file = (path: string): PlannedFile => ({ path, hash: `h-${path}`, runOnce: true });
const files = [file("V1__a.sql"), file("V2__b.sql"), file("V3__c.sql")];
const undoFiles = [file("U2__b.sql"), file("U3__c.sql")];
const undoable: UndoableFile[] = [
  { path: "V1__a.sql", version: "1" },
  { path: "V2__b.sql", version: "2", undo: "U2__b.sql" },
  { path: "V3__c.sql", version: "3", undo: "U3__c.sql" },
];
const options = (extra: Partial<RunnerOptions> = {}): RunnerOptions => ({
  command: "undo",
  dryRun: false,
  lockTimeoutMs: 0,
  progress: silentProgress,
  ...extra,
});
const callback = (event: string): ConnectionCallback<PlannedFile> => ({
  path: `${event}.sql`,
  event,
  file: file(`${event}.sql`),
});
const applied = (): MemoryTarget => {
  const target = new MemoryTarget("main");
  for (const f of files) target.records.set(f.path, f.hash);
  return target;
};
const acts = (target: MemoryTarget) => target.calls.filter((c) => c !== "read" && c !== "close");
const work = (target: MemoryTarget, callbacks: ConnectionCallback<PlannedFile>[] = []) => [
  { target, files, undoFiles, undoable, callbacks },
];

describe("undo through the engine", () => {
  it("undoes newest first under the lock, between Flyway's undo callbacks", async () => {
    const target = applied();
    const callbacks = ["beforeUndo", "beforeEachUndo", "afterEachUndo", "afterUndo"].map(callback);
    const report = await runMemoryTargets(work(target, callbacks), options({ target: "1" }));
    checkReport(report);
    assert.equal(report.error, undefined);
    assert.deepEqual(acts(target), [
      "lock",
      "callback beforeUndo.sql (beforeUndo)",
      "callback beforeEachUndo.sql (beforeEachUndo)",
      "undo V3__c.sql with U3__c.sql",
      "callback afterEachUndo.sql (afterEachUndo)",
      "callback beforeEachUndo.sql (beforeEachUndo)",
      "undo V2__b.sql with U2__b.sql",
      "callback afterEachUndo.sql (afterEachUndo)",
      "callback afterUndo.sql (afterUndo)",
      "release",
    ]);
    assert.deepEqual(
      report.connections[0].files.map((f) => `${f.path}:${f.action}:${f.result ?? ""}`),
      ["V1__a.sql:skip:", "V2__b.sql:undo:undone", "V3__c.sql:undo:undone"],
    );
    assert.equal(report.connections[0].applied, 0);
  });

  it("runs afterUndoError when an undo fails, and stops there", async () => {
    const target = applied();
    target.failOn = { path: "U3__c.sql", error: new TypeError("refused") };
    const report = await runMemoryTargets(
      work(target, ["afterUndo", "afterUndoError"].map(callback)),
      options({ target: "1" }),
    );
    assert.equal(report.error?.kind, "failure");
    assert.deepEqual(acts(target), [
      "lock",
      "undo V3__c.sql with U3__c.sql",
      "callback afterUndoError.sql (afterUndoError)",
      "release",
    ]);
    assert.ok(!target.records.has("U3__c.sql") && !target.records.has("U2__b.sql"));
  });

  it("a second runner decides again under the lock: nothing is undone twice", async () => {
    const target = applied();
    // Another runner undoes both while this one waits for the lock.
    target.whileLocking = () => {
      target.records.set("U3__c.sql", "h-U3__c.sql");
      target.records.set("U2__b.sql", "h-U2__b.sql");
    };
    const report = await runMemoryTargets(work(target), options({ target: "1" }));
    assert.equal(report.error, undefined);
    assert.ok(!target.calls.some((c) => c.startsWith("undo ")), target.calls.join(", "));
    assert.deepEqual(
      report.connections[0].files.map((f) => f.action),
      ["skip", "undone", "undone"],
    );
  });

  it("a plain undo that waited undoes no more than it planned: the newest is gone", async () => {
    const target = applied();
    // Another plain undo undid V3, the version this one planned, while it waited.
    target.whileLocking = () => target.records.set("U3__c.sql", "h-U3__c.sql");
    const report = await runMemoryTargets(work(target), options());
    assert.equal(report.error, undefined);
    assert.ok(!target.calls.some((c) => c.startsWith("undo ")), target.calls.join(", "));
    assert.deepEqual(
      report.connections[0].files.map((f) => f.action),
      ["skip", "skip", "undone"],
    );
  });

  it("undo --target refuses a version applied above its target while it waited", async () => {
    const target = new MemoryTarget("main");
    for (const f of files.slice(0, 2)) target.records.set(f.path, f.hash);
    // A migrate applied V3 while this undo of V2 waited: undoing V2 alone would leave V3 above.
    target.whileLocking = () => target.records.set("V3__c.sql", "h-V3__c.sql");
    const report = await runMemoryTargets(work(target), options({ target: "1" }));
    assert.equal(report.error?.kind, "plan", JSON.stringify(report.error));
    assert.equal(report.error?.file, "V3__c.sql");
    assert.ok(!target.calls.some((c) => c.startsWith("undo ")), target.calls.join(", "));
  });

  it("validates first under flyway_compatible: an edited applied file refuses the undo", async () => {
    const target = applied();
    target.records.set("V3__c.sql", "h-edited");
    const settings = { strictOrder: false, validateOnMigrate: true };
    const report = await runMemoryTargets(
      [{ ...work(target)[0], settings }],
      options({ target: "1" }),
    );
    assert.equal(report.error?.kind, "plan", JSON.stringify(report.error));
    assert.equal(report.error?.file, "V3__c.sql");
    assert.match(report.error!.message, /changed after it was applied.*refuses to undo/);
    assert.deepEqual(acts(target), []);
  });

  it("fires the validate callbacks under flyway_compatible, as migrate does", async () => {
    const target = applied();
    const callbacks = ["beforeValidate", "afterValidate", "beforeUndo"].map(callback);
    const settings = { strictOrder: false, validateOnMigrate: true };
    const report = await runMemoryTargets([{ ...work(target, callbacks)[0], settings }], options());
    assert.equal(report.error, undefined, JSON.stringify(report.error));
    assert.deepEqual(acts(target), [
      "lock",
      "callback beforeValidate.sql (beforeValidate)",
      "callback afterValidate.sql (afterValidate)",
      "callback beforeUndo.sql (beforeUndo)",
      "undo V3__c.sql with U3__c.sql",
      "release",
    ]);
  });

  it("migrate applies an undone version again and drops its undo record with it", async () => {
    const target = applied();
    target.records.set("U3__c.sql", "h-U3__c.sql");
    const report = await runMemoryTargets(work(target), options({ command: "migrate" }));
    assert.equal(report.error, undefined);
    assert.deepEqual(acts(target), ["lock", "apply V3__c.sql", "release"]);
    assert.deepEqual([...target.records.keys()].sort(), ["V1__a.sql", "V2__b.sql", "V3__c.sql"]);
  });

  it("a dry run plans without the lock; nothing to undo takes no lock", async () => {
    const target = applied();
    const dry = await runMemoryTargets(work(target), options({ dryRun: true }));
    checkReport(dry);
    assert.deepEqual(dry.connections[0].files.map((f) => f.action), ["skip", "skip", "undo"]);
    assert.deepEqual(acts(target), []);
    const empty = new MemoryTarget("main");
    const none = await runMemoryTargets(work(empty), options());
    assert.equal(none.error, undefined);
    assert.deepEqual(acts(empty), []);
  });
});
