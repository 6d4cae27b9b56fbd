// Flyway's callbacks around a run: the events, their order, and what never runs them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MigrationFailure } from "../../../src/migrate/migration_error.ts";
import { CALLBACK_EVENTS } from "../../../src/migrate/plan/callback_name.ts";
import type {
  ConnectionCallback,
  PlannedFile,
  RunnerOptions,
} from "../../../src/migrate/run/run_targets.ts";
import { type Progress, silentProgress } from "../../../src/migrate/run_report.ts";
import { MemoryTarget, runMemoryTargets } from "../memory_target.ts";
import { checkReport } from "../report_shape.ts";

const file = (path: string): PlannedFile => ({ path, hash: `h-${path}`, runOnce: true });
const callback = (event: string, supported = true): ConnectionCallback<PlannedFile> => ({
  path: `${event}.sql`,
  event,
  ...(supported ? { file: file(`${event}.sql`) } : {}),
});
const ALL = CALLBACK_EVENTS.map((event) => callback(event));
const options = (extra: Partial<RunnerOptions> = {}): RunnerOptions => ({
  command: "migrate",
  dryRun: false,
  lockTimeoutMs: 0,
  progress: silentProgress,
  ...extra,
});
// The calls that change anything, callbacks included: reads are left out.
const acts = (target: MemoryTarget) => target.calls.filter((c) => c !== "read" && c !== "close");

describe("callbacks around a migrate run", () => {
  it("runs Flyway's events in Flyway's order around two files, under the lock", async () => {
    const target = new MemoryTarget("main");
    const report = await runMemoryTargets(
      [{ target, files: [file("V1__a.sql"), file("V2__b.sql")], callbacks: ALL }],
      options(),
    );
    checkReport(report);
    assert.equal(report.error, undefined);
    assert.deepEqual(acts(target), [
      "lock",
      "callback beforeMigrate.sql (beforeMigrate)",
      "callback beforeEachMigrate.sql (beforeEachMigrate)",
      "apply V1__a.sql",
      "callback afterEachMigrate.sql (afterEachMigrate)",
      "callback beforeEachMigrate.sql (beforeEachMigrate)",
      "apply V2__b.sql",
      "callback afterEachMigrate.sql (afterEachMigrate)",
      "callback afterMigrate.sql (afterMigrate)",
      "release",
    ]);
    // Never recorded: the records hold the two migrations only.
    assert.deepEqual([...target.records.keys()], ["V1__a.sql", "V2__b.sql"]);
    const runs = Object.fromEntries(
      report.connections[0].callbacks!.map((c) => [c.event, c.runs ?? 0]),
    );
    assert.deepEqual(runs, {
      beforeValidate: 0,
      afterValidate: 0,
      beforeMigrate: 1,
      beforeEachMigrate: 2,
      afterEachMigrate: 2,
      afterMigrate: 1,
      afterMigrateError: 0,
      // Undo's events are undo's alone.
      beforeUndo: 0,
      beforeEachUndo: 0,
      afterEachUndo: 0,
      afterUndo: 0,
      afterUndoError: 0,
    });
  });

  it("takes the lock and runs beforeMigrate and afterMigrate with nothing pending", async () => {
    const target = new MemoryTarget("main");
    target.records.set("V1__a.sql", "h-V1__a.sql");
    await runMemoryTargets([{ target, files: [file("V1__a.sql")], callbacks: ALL }], options());
    assert.deepEqual(acts(target), [
      "lock",
      "callback beforeMigrate.sql (beforeMigrate)",
      "callback afterMigrate.sql (afterMigrate)",
      "release",
    ]);
  });

  it("without beforeMigrate or afterMigrate, a run with nothing pending takes no lock", async () => {
    const target = new MemoryTarget("main");
    target.records.set("V1__a.sql", "h-V1__a.sql");
    const validateOnly = ALL.filter((c) =>
      c.event !== "beforeMigrate" && c.event !== "afterMigrate"
    );
    await runMemoryTargets(
      [{ target, files: [file("V1__a.sql")], callbacks: validateOnly }],
      options(),
    );
    assert.deepEqual(acts(target), []);
  });

  it("runs afterMigrateError when a file fails, and reports the file's failure", async () => {
    const target = new MemoryTarget("main");
    target.failOn = {
      path: "V2__b.sql",
      error: new MigrationFailure({ connection: "main", file: "V2__b.sql", reason: "boom" }),
    };
    target.failingCallbacks.set("afterMigrateError.sql", new Error("cannot report"));
    const notes: string[] = [];
    const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
    const report = await runMemoryTargets(
      [{ target, files: [file("V1__a.sql"), file("V2__b.sql")], callbacks: ALL }],
      options({ progress }),
    );
    assert.equal(report.error?.file, "V2__b.sql");
    assert.match(report.error!.message, /boom/);
    assert.deepEqual(acts(target).slice(-3), [
      "apply V2__b.sql",
      "callback afterMigrateError.sql (afterMigrateError)",
      "release",
    ]);
    assert.ok(!acts(target).includes("callback afterMigrate.sql (afterMigrate)"));
    // Its own failure is told, and does not replace the file's.
    assert.ok(
      notes.some((n) =>
        /afterMigrateError callback afterMigrateError\.sql failed too: cannot report/.test(n)
      ),
      notes.join("\n"),
    );
  });

  it("runs afterMigrateError after Ctrl-C too: the run stops after the current file, then cleans up", async () => {
    const target = new MemoryTarget("main");
    const controller = new AbortController();
    target.afterApply = (path) => {
      if (path === "V1__a.sql") controller.abort();
    };
    const report = await runMemoryTargets(
      [{ target, files: [file("V1__a.sql"), file("V2__b.sql")], callbacks: ALL }],
      options({ signal: controller.signal }),
    );
    assert.equal(report.error?.kind, "interrupted");
    assert.deepEqual(acts(target).slice(-4), [
      "apply V1__a.sql",
      "callback afterEachMigrate.sql (afterEachMigrate)",
      "callback afterMigrateError.sql (afterMigrateError)",
      "release",
    ]);
  });

  it("a failing beforeMigrate stops the run before any file, naming the callback", async () => {
    const target = new MemoryTarget("main");
    target.failingCallbacks.set(
      "beforeMigrate.sql",
      new MigrationFailure({
        connection: "main",
        file: "beforeMigrate.sql",
        callback: "beforeMigrate",
        line: 2,
        reason: "no such table",
      }),
    );
    const report = await runMemoryTargets(
      [{ target, files: [file("V1__a.sql")], callbacks: ALL }],
      options(),
    );
    checkReport(report);
    assert.equal(report.error?.callback, "beforeMigrate");
    assert.match(
      report.error!.message,
      /callback beforeMigrate\.sql:2 \(beforeMigrate\): no such table/,
    );
    assert.ok(!acts(target).some((c) => c.startsWith("apply")));
    assert.ok(acts(target).includes("callback afterMigrateError.sql (afterMigrateError)"));
  });

  it("a failing afterMigrate stops the run, and runs no afterMigrateError, as in Flyway", async () => {
    const target = new MemoryTarget("main");
    target.failingCallbacks.set(
      "afterMigrate.sql",
      new MigrationFailure({
        connection: "main",
        file: "afterMigrate.sql",
        callback: "afterMigrate",
        reason: "cannot refresh the view",
      }),
    );
    const report = await runMemoryTargets(
      [{ target, files: [file("V1__a.sql")], callbacks: ALL }],
      options(),
    );
    checkReport(report);
    assert.equal(report.error?.callback, "afterMigrate");
    // Every file ran and is recorded: the migrate itself did not fail.
    assert.deepEqual([...target.records.keys()], ["V1__a.sql"]);
    assert.deepEqual(acts(target).slice(-2), [
      "callback afterMigrate.sql (afterMigrate)",
      "release",
    ]);
    assert.ok(!acts(target).includes("callback afterMigrateError.sql (afterMigrateError)"));
  });

  it("runs no callback on a dry run, status, baseline or repair, and lists them", async () => {
    for (
      const [command, dryRun] of [
        ["migrate", true],
        ["status", false],
        ["baseline", false],
        ["repair", false],
      ] as const
    ) {
      const target = new MemoryTarget("main");
      const report = await runMemoryTargets(
        [{ target, files: [file("V1__a.sql")], callbacks: ALL }],
        options({ command, dryRun }),
      );
      checkReport(report);
      assert.ok(!target.calls.some((c) => c.startsWith("callback")), `${command}: ${target.calls}`);
      assert.deepEqual(
        report.connections[0].callbacks!.map((c) => c.path),
        ALL.map((c) => c.path),
        command,
      );
    }
  });

  it("validate: beforeValidate, then afterValidate only when the connection passes", async () => {
    const passing = new MemoryTarget("main");
    await runMemoryTargets(
      [{ target: passing, files: [file("V1__a.sql")], callbacks: ALL }],
      options({ command: "validate" }),
    );
    assert.deepEqual(acts(passing), [
      "callback beforeValidate.sql (beforeValidate)",
      "callback afterValidate.sql (afterValidate)",
    ]);
    const changed = new MemoryTarget("main");
    changed.records.set("V1__a.sql", "edited");
    const report = await runMemoryTargets(
      [{ target: changed, files: [file("V1__a.sql")], callbacks: ALL }],
      options({ command: "validate" }),
    );
    // The engine fails such a run with validate's verdict; runTargets reports the file.
    assert.equal(report.connections[0].files[0].action, "changed");
    assert.deepEqual(acts(changed), ["callback beforeValidate.sql (beforeValidate)"]);
  });

  it("flyway_compatible: the validate events on every migrate, nothing pending too", async () => {
    const target = new MemoryTarget("main");
    target.validateOnMigrate = true;
    target.records.set("V1__a.sql", "h-V1__a.sql");
    const validate = ALL.filter((c) => c.event.endsWith("Validate"));
    await runMemoryTargets(
      [{ target, files: [file("V1__a.sql")], callbacks: validate }],
      options(),
    );
    assert.deepEqual(acts(target), [
      "lock",
      "callback beforeValidate.sql (beforeValidate)",
      "callback afterValidate.sql (afterValidate)",
      "release",
    ]);
  });

  it("flyway_compatible: the validate events under the lock, before beforeMigrate", async () => {
    const target = new MemoryTarget("main");
    target.validateOnMigrate = true;
    await runMemoryTargets([{ target, files: [file("V1__a.sql")], callbacks: ALL }], options());
    assert.deepEqual(acts(target).slice(0, 4), [
      "lock",
      "callback beforeValidate.sql (beforeValidate)",
      "callback afterValidate.sql (afterValidate)",
      "callback beforeMigrate.sql (beforeMigrate)",
    ]);
  });

  it("lists an event Thaw does not run, warns of it on migrate, and never runs it", async () => {
    const target = new MemoryTarget("main");
    const notes: string[] = [];
    const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
    const report = await runMemoryTargets(
      [{
        target,
        files: [file("V1__a.sql")],
        callbacks: [callback("afterEachMigrateError", false)],
      }],
      options({ progress }),
    );
    checkReport(report);
    assert.deepEqual(report.connections[0].callbacks, [
      { path: "afterEachMigrateError.sql", event: "afterEachMigrateError", supported: false },
    ]);
    assert.ok(!target.calls.some((c) => c.startsWith("callback")));
    assert.ok(
      notes.some((n) =>
        /afterEachMigrateError\.sql is Flyway's afterEachMigrateError callback, an event Thaw does not run/
          .test(n)
      ),
      notes.join("\n"),
    );
  });

  it("a record an earlier version wrote for a callback file is no missing file", async () => {
    for (const validateOnMigrate of [false, true]) {
      const target = new MemoryTarget("main");
      target.validateOnMigrate = validateOnMigrate;
      target.records.set("V1__a.sql", "h-V1__a.sql");
      target.records.set("beforeMigrate.sql", "old");
      const notes: string[] = [];
      const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
      const report = await runMemoryTargets(
        [{ target, files: [file("V1__a.sql")], callbacks: ALL }],
        options({ progress }),
      );
      assert.equal(report.error, undefined, report.error?.message);
      assert.deepEqual(report.connections[0].files.map((f) => f.action), ["skip"]);
      assert.ok(
        notes.some((n) => /beforeMigrate\.sql has a record of a run as a migration/.test(n)),
      );
      assert.equal(target.records.get("beforeMigrate.sql"), "old");
    }
    // repair drops it, as the record of a file that is gone.
    const target = new MemoryTarget("main");
    target.records.set("V1__a.sql", "h-V1__a.sql");
    target.records.set("beforeMigrate.sql", "old");
    await runMemoryTargets(
      [{ target, files: [file("V1__a.sql")], callbacks: ALL }],
      options({ command: "repair" }),
    );
    assert.deepEqual([...target.records.keys()], ["V1__a.sql"]);
    assert.ok(!target.calls.some((c) => c.startsWith("callback")));
  });
});

describe("files and callbacks this runtime cannot run", () => {
  const ts = (path: string): PlannedFile => ({
    ...file(path),
    unrunnable: "Node 20 cannot import it",
  });

  it("refuses a pending one before anything is written, and lets one applied already be", async () => {
    const pending = new MemoryTarget("main");
    const report = await runMemoryTargets(
      [{ target: pending, files: [file("V1__a.sql"), ts("V2__b.ts")] }],
      options(),
    );
    assert.equal(report.error?.kind, "plan");
    assert.match(report.error!.message, /V2__b\.ts: Node 20 cannot import it/);
    assert.match(report.error!.message, /nothing was written on this connection/);
    assert.deepEqual(acts(pending), []);
    // Applied already: skipped, and nothing needs importing.
    const applied = new MemoryTarget("main");
    applied.records.set("V2__b.ts", "h-V2__b.ts");
    const ok = await runMemoryTargets(
      [{ target: applied, files: [file("V1__a.sql"), ts("V2__b.ts")] }],
      options(),
    );
    assert.equal(ok.error, undefined, ok.error?.message);
    assert.deepEqual(acts(applied), ["lock", "apply V1__a.sql", "release"]);
  });

  it("status lists it; a dry run of migrate refuses it, as the run would", async () => {
    const status = await runMemoryTargets(
      [{ target: new MemoryTarget("main"), files: [ts("V1__b.ts")] }],
      options({ command: "status" }),
    );
    assert.equal(status.error, undefined);
    const dry = await runMemoryTargets(
      [{ target: new MemoryTarget("main"), files: [ts("V1__b.ts")] }],
      options({ dryRun: true }),
    );
    assert.equal(dry.error?.kind, "plan");
  });

  it("refuses a callback it would run, and only that", async () => {
    const unrunnable = (event: string): ConnectionCallback<PlannedFile> => ({
      path: `${event}.ts`,
      event,
      file: ts(`${event}.ts`),
    });
    const target = new MemoryTarget("main");
    target.records.set("V1__a.sql", "h-V1__a.sql");
    const migrate = await runMemoryTargets(
      [{ target, files: [file("V1__a.sql")], callbacks: [unrunnable("afterMigrate")] }],
      options(),
    );
    assert.match(migrate.error!.message, /afterMigrate\.ts: Node 20 cannot import it/);
    assert.deepEqual(acts(target), []);
    // validate runs no migrate callback: it is not refused there.
    const validate = await runMemoryTargets(
      [{
        target: new MemoryTarget("main"),
        files: [file("V1__a.sql")],
        callbacks: [unrunnable("afterMigrate")],
      }],
      options({ command: "validate" }),
    );
    assert.equal(validate.error, undefined);
  });
});
