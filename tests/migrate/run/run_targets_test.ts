import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MigrationError, MigrationFailure } from "../../../src/migrate/migration_error.ts";
import type { PlannedFile, RunnerOptions } from "../../../src/migrate/run/run_targets.ts";
import { type Progress, silentProgress } from "../../../src/migrate/run_report.ts";
import { MemoryTarget, runMemoryTargets } from "../memory_target.ts";
import { propertyOptions } from "../../property.ts";

const file = (path: string, hash = `h-${path}`, extra: Partial<PlannedFile> = {}): PlannedFile => ({
  path,
  hash,
  runOnce: false,
  ...extra,
});
const once = (path: string, hash = `h-${path}`) => file(path, hash, { runOnce: true });
const writes = (target: MemoryTarget) =>
  target.calls.filter((c) => /^(apply|record|drop|lock)/.test(c));
const options = (extra: Partial<RunnerOptions> = {}): RunnerOptions => ({
  command: "migrate",
  dryRun: false,
  lockTimeoutMs: 0,
  progress: silentProgress,
  ...extra,
});

describe("runTargets, the engine both runners share", () => {
  it("lists each file, its state unknown, when status or validate cannot read the records", async () => {
    for (const command of ["status", "validate", "migrate"] as const) {
      const target = new MemoryTarget("main");
      target.readError = new MigrationFailure({ connection: "main", reason: "no host answered" });
      const report = await runMemoryTargets(
        [{ target, files: [file("1-a"), file("2-b")] }],
        options({ command }),
      );
      assert.match(report.error!.message, /no host answered/, command);
      const listed = report.connections[0].files.map((f) => `${f.path}:${f.action}`);
      // migrate lists nothing: it did nothing, and its report lists what it did.
      assert.deepEqual(listed, command === "migrate" ? [] : ["1-a:unknown", "2-b:unknown"]);
      assert.deepEqual(writes(target), [], command);
    }
  });

  it("decides apply, skip, reapply (declarative) and changed (run once) from the records", async () => {
    for (const runOnce of [false, true]) {
      const target = new MemoryTarget("main");
      target.records.set("a", "h-a");
      target.records.set("b", "old");
      const notes: string[] = [];
      const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
      const report = await runMemoryTargets(
        [{ target, files: [file("a"), file("b", "h-b", { runOnce }), file("c")] }],
        options({ progress }),
      );
      const actions = report.connections[0].files.map((f) => `${f.path}:${f.action}`);
      if (!runOnce) {
        assert.deepEqual(actions, ["a:skip", "b:reapply", "c:apply"]);
        assert.deepEqual(target.calls.filter((c) => c.startsWith("apply")), ["apply b", "apply c"]);
        assert.equal(report.connections[0].applied, 2);
      } else {
        assert.deepEqual(actions, ["a:skip", "b:changed", "c:apply"]);
        assert.deepEqual(target.calls.filter((c) => c.startsWith("apply")), ["apply c"]);
        assert.match(notes.join("\n"), /b changed after it was applied/);
        assert.equal(target.records.get("b"), "old", "a changed run-once file keeps its record");
      }
      assert.equal(report.connections[0].skipped, 1);
      assert.equal(report.error, undefined);
    }
  });

  it("counts a record of the raw bytes as unchanged, and writes nothing on a run with nothing to do", async () => {
    // Records of earlier versions hold the hash of the raw bytes.
    const target = new MemoryTarget("main");
    target.records.set("a", "raw-a");
    target.records.set("b", "h-b");
    const report = await runMemoryTargets(
      [{
        target,
        files: [file("a", "h-a", { rawHash: "raw-a" }), file("b", "h-b", { rawHash: "raw-b" })],
      }],
      options(),
    );
    assert.deepEqual(report.connections[0].files.map((f) => f.action), ["skip", "skip"]);
    assert.deepEqual(target.calls, ["read", "close"]);
    assert.equal(target.records.get("a"), "raw-a", "the old record is left as it is");
  });

  it("lists a record without its file as missing, and warns in migrate without writing", async () => {
    const target = new MemoryTarget("main");
    target.records.set("V1", "h-V1");
    target.records.set("V2", "h-gone");
    const notes: string[] = [];
    const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
    const status = await runMemoryTargets(
      [{ target, files: [file("V1"), file("V3")] }],
      options({ command: "status" }),
    );
    assert.deepEqual(
      status.connections[0].files.map((f) => `${f.path}:${f.action}`),
      ["V1:skip", "V2:missing", "V3:apply"],
    );
    const migrate = await runMemoryTargets(
      [{ target, files: [file("V1"), file("V3")] }],
      options({ progress }),
    );
    assert.deepEqual(writes(target), ["lock", "apply V3"]);
    assert.equal(target.records.get("V2"), "h-gone", "migrate never drops a record");
    assert.match(notes.join("\n"), /main: V2 is recorded as applied, but its file is gone/);
    assert.equal(migrate.error, undefined);
  });

  it("moves the record of a renamed file instead of running it again", async () => {
    for (const runOnce of [false, true]) {
      const target = new MemoryTarget("main");
      target.records.set("old/seed.json", "h-seed");
      const notes: string[] = [];
      const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
      const files = [file("new/seed.json", "h-seed", { runOnce }), file("z", "h-seed")];
      const status = await runMemoryTargets([{ target, files }], options({ command: "status" }));
      const [renamed, copy] = status.connections[0].files;
      assert.equal(renamed.action, "rename");
      assert.equal(renamed.renamedFrom, "old/seed.json");
      assert.equal(copy.action, "apply", "one missing record moves to one file only");
      assert.equal(status.connections[0].files.length, 2, "the moved record is not also missing");

      const report = await runMemoryTargets([{ target, files }], options({ progress }));
      assert.deepEqual(writes(target), [
        "lock",
        "record new/seed.json",
        "drop old/seed.json",
        "apply z",
      ]);
      assert.equal(report.connections[0].files[0].result, "moved");
      assert.equal(report.connections[0].applied, 1);
      assert.match(notes.join("\n"), /new\/seed.json was renamed from old\/seed.json/);
      assert.deepEqual([...target.records.keys()].sort(), ["new/seed.json", "z"]);
    }
    // A legacy raw-bytes record matches a renamed file too.
    const legacy = new MemoryTarget("main");
    legacy.records.set("a", "raw");
    const r = await runMemoryTargets(
      [{ target: legacy, files: [file("b", "h-b", { rawHash: "raw" })] }],
      options(),
    );
    assert.equal(r.connections[0].files[0].action, "rename");
    assert.deepEqual(writes(legacy), ["lock", "record b", "drop a"]);
  });

  it("a rename stopped between its two writes runs nothing twice: the file reads as applied, the old path as missing", async () => {
    const target = new MemoryTarget("main");
    target.records.set("old/seed.json", "h-seed");
    const files = [once("new/seed.json", "h-seed")];
    // The cluster refuses the delete of the old record (or the runner dies right before it).
    target.dropError = new MigrationFailure({ connection: "main", reason: "403 on delete" });
    const failed = await runMemoryTargets([{ target, files }], options());
    assert.equal(failed.error?.kind, "failure");
    assert.equal(failed.connections[0].files[0].result, "failed");
    assert.ok(target.calls.includes("release"));
    target.dropError = undefined;
    const status = await runMemoryTargets([{ target, files }], options({ command: "status" }));
    assert.deepEqual(status.connections[0].files.map((f) => `${f.path}:${f.action}`), [
      "new/seed.json:skip",
      "old/seed.json:missing",
    ]);
    await runMemoryTargets([{ target, files }], options());
    assert.ok(!target.calls.some((c) => c.startsWith("apply")), "never sent");
  });

  it("baseline records every file without running it; refuses where records exist unless forced", async () => {
    const target = new MemoryTarget("main");
    const files = [file("a"), once("b"), file("c")];
    const dry = await runMemoryTargets(
      [{ target, files }],
      options({ command: "baseline", dryRun: true }),
    );
    assert.deepEqual(dry.connections[0].files.map((f) => f.action), ["record", "record", "record"]);
    assert.deepEqual(target.calls, ["read", "close"]);

    const report = await runMemoryTargets([{ target, files }], options({ command: "baseline" }));
    assert.equal(report.error, undefined);
    assert.deepEqual(writes(target), ["lock", "record a", "record b", "record c"]);
    assert.deepEqual(report.connections[0].files.map((f) => f.result), [
      "recorded",
      "recorded",
      "recorded",
    ]);
    assert.ok(!target.calls.some((c) => c.startsWith("apply")));

    const again = new MemoryTarget("main");
    again.records.set("a", "old");
    const refused = await runMemoryTargets(
      [{ target: again, files }],
      options({ command: "baseline" }),
    );
    assert.equal(refused.error?.kind, "plan");
    assert.match(refused.error!.message, /has 1 record\(s\) already.*--force/);
    assert.deepEqual(again.calls, ["read", "close"]);

    const forced = await runMemoryTargets(
      [{ target: again, files }],
      options({ command: "baseline", force: true }),
    );
    assert.equal(forced.error, undefined);
    assert.deepEqual(writes(again), ["lock", "record a", "record b", "record c"]);
    assert.equal(again.records.get("a"), "h-a");
  });

  it("repair re-records changed files and raw-hash records, drops missing records, moves renamed ones, runs nothing", async () => {
    const target = new MemoryTarget("main");
    target.records.set("a", "h-a");
    target.records.set("b", "old-b");
    target.records.set("c", "old-c");
    target.records.set("gone", "h-gone");
    target.records.set("was", "h-moved");
    target.records.set("e", "raw-e");
    const files = [
      file("a"),
      file("b"),
      once("c"),
      file("d"),
      file("e", "h-e", { rawHash: "raw-e" }),
      file("moved", "h-moved"),
    ];
    const dry = await runMemoryTargets(
      [{ target, files }],
      options({ command: "repair", dryRun: true }),
    );
    assert.deepEqual(
      dry.connections[0].files.map((f) => `${f.path}:${f.action}`),
      ["a:skip", "b:record", "c:record", "d:apply", "e:record", "gone:drop", "moved:rename"],
    );
    assert.deepEqual(target.calls, ["read", "close"]);
    const report = await runMemoryTargets([{ target, files }], options({ command: "repair" }));
    assert.equal(report.error, undefined);
    assert.deepEqual(writes(target), [
      "lock",
      "record b",
      "record c",
      "record e",
      "drop gone",
      "record moved",
      "drop was",
    ]);
    assert.deepEqual(
      Object.fromEntries(target.records),
      { a: "h-a", b: "h-b", c: "h-c", e: "h-e", moved: "h-moved" },
      "d stays pending: repair runs no file",
    );
  });

  it("names two files of one resource: a warning, or under strict order a refusal before anything is written", async () => {
    const files = [
      file("1/logs-template.json", "h1", { resource: "template logs" }),
      file("2/logs-template.json", "h2", { resource: "template logs" }),
      file("2/other-template.json", "h3", { resource: "template other" }),
    ];
    const notes: string[] = [];
    const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
    const target = new MemoryTarget("main");
    const report = await runMemoryTargets([{ target, files }], options({ progress }));
    assert.equal(report.error, undefined);
    assert.deepEqual(report.connections[0].files.map((f) => f.sameResourceAs), [
      undefined,
      "1/logs-template.json",
      undefined,
    ]);
    assert.match(
      notes.join("\n"),
      /main: 2\/logs-template.json and 1\/logs-template.json both define template logs/,
    );
    const strict = new MemoryTarget("main");
    const refused = await runMemoryTargets(
      [{ target: strict, files }],
      options({ strictOrder: true }),
    );
    assert.equal(refused.error?.kind, "plan");
    assert.equal(refused.error?.file, "2/logs-template.json");
    assert.match(refused.error!.message, /both define template logs/);
    assert.deepEqual(strict.calls, ["read", "close"]);
  });

  it("applies a pending file that sorts before an applied one, saying so with both names", async () => {
    const target = new MemoryTarget("main");
    target.records.set("b", "h-b");
    const notes: string[] = [];
    const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
    const report = await runMemoryTargets(
      [{ target, files: [file("a"), file("b"), file("c")] }],
      options({ progress }),
    );
    const [a, b, c] = report.connections[0].files;
    assert.equal(a.outOfOrder, "b");
    assert.equal(b.outOfOrder, undefined);
    assert.equal(c.outOfOrder, undefined, "a file after the applied ones is in order");
    assert.deepEqual(target.calls.filter((x) => x.startsWith("apply")), ["apply a", "apply c"]);
    assert.match(notes.join("\n"), /main: a sorts before b, which is applied already/);
    assert.equal(report.error, undefined);
  });

  it("counts an applied file that is no longer on disk: a file sorting before it is out of order", async () => {
    // An older checkout without V3, which is applied: V2 must not slip in after it unnoticed.
    const target = new MemoryTarget("main");
    target.strictOrder = true;
    target.records.set("V1", "h-V1");
    target.records.set("V3", "h-V3");
    const report = await runMemoryTargets([{ target, files: [file("V1"), file("V2")] }], options());
    assert.equal(report.connections[0].files[1].outOfOrder, "V3");
    assert.equal(report.error?.kind, "plan");
    assert.match(
      report.error!.message,
      /sorts before V3, which is applied already \(recorded, not in this checkout\)/,
    );
    assert.match(report.error!.message, /run with --no-strict-order/);
    assert.deepEqual(target.calls, ["read", "close"]);
  });

  it("with strict order, refuses before anything is written, also when found under the lock", async () => {
    for (const how of ["flag", "setting"] as const) {
      const target = new MemoryTarget("main");
      target.strictOrder = how === "setting";
      target.records.set("b", "h-b");
      const report = await runMemoryTargets(
        [{ target, files: [file("a"), file("b")] }],
        options(how === "flag" ? { strictOrder: true } : {}),
      );
      assert.equal(report.error?.kind, "plan");
      assert.match(report.error!.message, /a: sorts before b, which is applied already/);
      assert.equal(report.error?.file, "a");
      assert.deepEqual(target.calls, ["read", "close"], how);
    }
    // In order when this runner looked; out of order once another one applied "b" meanwhile.
    const raced = new MemoryTarget("main");
    raced.strictOrder = true;
    raced.whileLocking = () => raced.records.set("b", "h-b");
    const report = await runMemoryTargets(
      [{ target: raced, files: [file("a"), file("b")] }],
      options(),
    );
    assert.equal(report.error?.kind, "plan");
    assert.deepEqual(raced.calls, ["read", "lock", "read", "release", "close"]);
    // status and validate list it and say strict order was in force, and go on to the next
    // connection (the CLI fails validate on it, with the changed files); the flag overrides the
    // setting either way.
    for (const command of ["status", "validate"] as const) {
      const t = new MemoryTarget("main");
      t.strictOrder = true;
      t.records.set("b", "h-b");
      const r = await runMemoryTargets(
        [{ target: t, files: [file("a"), file("b")] }],
        options({ command }),
      );
      assert.equal(r.connections[0].files[0].outOfOrder, "b");
      assert.equal(r.connections[0].strictOrder, true);
      assert.equal(r.error, undefined, command);
    }
  });

  it("--no-strict-order overrides the setting, --strict-order sets it", async () => {
    for (const [setting, flag, refused] of [[true, false, false], [false, true, true]] as const) {
      const target = new MemoryTarget("main");
      target.strictOrder = setting;
      target.records.set("b", "h-b");
      const report = await runMemoryTargets(
        [{ target, files: [file("a"), file("b")] }],
        options({ strictOrder: flag }),
      );
      assert.equal(report.error?.kind, refused ? "plan" : undefined);
      assert.equal(report.connections[0].strictOrder, refused ? true : undefined);
    }
  });

  it("drops the out-of-order mark of a file another runner applied meanwhile", async () => {
    const target = new MemoryTarget("main");
    target.records.set("b", "h-b");
    // Another runner records "a" while this one applies "a0", after this one planned both.
    target.afterApply = (path) => {
      if (path === "a0") target.records.set("a", "h-a");
    };
    const report = await runMemoryTargets(
      [{ target, files: [file("a0"), file("a"), file("b")] }],
      options(),
    );
    const [a0, a] = report.connections[0].files;
    assert.equal(a0.outOfOrder, "b");
    assert.equal(a.action, "skip");
    assert.equal(a.outOfOrder, undefined);
  });

  it("takes the lock only when something is pending, then reads the records again", async () => {
    const target = new MemoryTarget("main");
    // Another runner applies "a" while this one waits for the lock.
    target.whileLocking = () => target.records.set("a", "h-a");
    const report = await runMemoryTargets([{ target, files: [file("a"), file("b")] }], options());
    assert.deepEqual(target.calls, [
      "read",
      "lock",
      "read",
      "apply b",
      "release",
      "close",
    ]);
    assert.deepEqual(report.connections[0].files.map((f) => f.action), ["skip", "apply"]);
    assert.equal(report.connections[0].applied, 1);

    const idle = new MemoryTarget("idle");
    idle.records.set("a", "h-a");
    await runMemoryTargets([{ target: idle, files: [file("a")] }], options());
    assert.deepEqual(idle.calls, ["read", "close"]);
  });

  it("sends only reads for status, validate and --dry-run", async () => {
    for (
      const extra of [{ command: "status" }, { command: "validate" }, { dryRun: true }] as const
    ) {
      const target = new MemoryTarget("main");
      const report = await runMemoryTargets([{ target, files: [file("a")] }], options(extra));
      assert.deepEqual(target.calls, ["read", "close"]);
      assert.equal(report.connections[0].files[0].action, "apply");
    }
  });

  it("says what each record holds of its run, where the run writes no record", async () => {
    const at = "2026-11-25T06:16:07.123Z";
    const target = new MemoryTarget("main");
    const full = { executedAt: at, executedBy: "ci@build-7", runnerVersion: "0.1.0" };
    target.records.set("V1", "h-V1");
    target.runs.set("V1", full);
    // Written before runner versions were recorded.
    target.records.set("V2", "old");
    target.runs.set("V2", { executedAt: at, executedBy: "ci@build-7" });
    target.records.set("V3", "h-V3");
    target.runs.set("V3", full);
    target.records.set("V4", "h-gone");
    target.runs.set("V4", full);
    // A record that says nothing of its run.
    target.records.set("V5", "h-V5");
    const files = [
      file("V1"),
      file("V2", "h-V2", { runOnce: true }),
      file("V3-moved", "h-V3"),
      file("V5"),
      file("V6"),
    ];
    const shown = { at, by: "ci@build-7", runnerVersion: "0.1.0" };
    for (
      const extra of [{ command: "status" }, { command: "validate" }, { dryRun: true }] as const
    ) {
      const report = await runMemoryTargets([{ target, files }], options(extra));
      assert.deepEqual(
        report.connections[0].files.map((f) => [f.path, f.action, f.applied, f.recordChecksum]),
        [
          ["V1", "skip", shown, "h-V1"],
          ["V2", "changed", { at, by: "ci@build-7" }, "old"],
          // A renamed file shows the record it takes over.
          ["V3-moved", "rename", shown, "h-V3"],
          ["V4", "missing", shown, "h-gone"],
          // A record that says nothing of its run still holds its checksum.
          ["V5", "skip", undefined, "h-V5"],
          ["V6", "apply", undefined, undefined],
        ],
        JSON.stringify(extra),
      );
    }
    // A run that writes records would report what they said before it replaced them: nothing.
    const migrate = await runMemoryTargets([{ target, files }], options());
    assert.equal(migrate.error, undefined);
    assert.equal(migrate.connections[0].files.length, 6);
    assert.ok(
      migrate.connections[0].files.every((f) => !("applied" in f) && !("recordChecksum" in f)),
      "no applied field",
    );
  });

  it("counts a file another runner recorded under its own lock as skipped, not applied", async () => {
    const target = new MemoryTarget("main");
    // The records read after the lock lack "a"; the file's own lock then finds it recorded
    // (SQLite checks inside its BEGIN IMMEDIATE).
    target.readRecords = () => Promise.resolve(new Map());
    target.records.set("a", "h-a");
    const report = await runMemoryTargets([{ target, files: [file("a"), file("b")] }], options());
    assert.deepEqual(report.connections[0].files.map((f) => f.action), ["skip", "apply"]);
    assert.equal(report.connections[0].applied, 1);
    assert.equal(report.connections[0].skipped, 1);
  });

  it("stops at the first failure: later files and targets do not run, every target is released and closed", async () => {
    const first = new MemoryTarget("first");
    const second = new MemoryTarget("second");
    first.failOn = {
      path: "b",
      error: new MigrationFailure({ connection: "first", file: "b", reason: "refused" }),
    };
    const report = await runMemoryTargets([
      { target: first, files: [file("a"), file("b"), file("c")] },
      { target: second, files: [file("x")] },
    ], options());
    assert.equal(report.error?.kind, "failure");
    assert.equal(report.error?.file, "b");
    assert.deepEqual(report.connections[0].files.map((f) => f.result), [
      "sent",
      "failed",
      undefined,
    ]);
    assert.ok(first.calls.includes("release") && first.calls.includes("close"));
    assert.deepEqual(second.calls, ["close"]);
    assert.equal(report.connections.length, 1);
  });

  it("reports a lock not acquired as kind lock, and a target's own I/O error as a failure", async () => {
    const locked = new MemoryTarget("locked");
    locked.lockError = new MigrationError("lock", "held by someone");
    const lockReport = await runMemoryTargets([{ target: locked, files: [file("a")] }], options());
    assert.equal(lockReport.error?.kind, "lock");
    assert.equal(lockReport.error?.connection, "locked");

    const io = new MemoryTarget("io");
    io.failOn = { path: "a", error: new TypeError("connection reset") };
    const ioReport = await runMemoryTargets([{ target: io, files: [file("a")] }], options());
    assert.deepEqual(ioReport.error, {
      kind: "failure",
      message: "connection reset",
      connection: "io",
    });
  });

  it("keeps the reason a run stopped when the release fails too", async () => {
    const target = new MemoryTarget("main");
    target.failOn = {
      path: "a",
      error: new MigrationFailure({ connection: "main", file: "a", reason: "bad" }),
    };
    target.releaseError = new Error("release failed");
    const report = await runMemoryTargets([{ target, files: [file("a")] }], options());
    assert.match(report.error!.message, /bad/);
  });

  it("closes every target even when closing one throws, and lets a bug propagate after that", async () => {
    const a = new MemoryTarget("a");
    const b = new MemoryTarget("b");
    a.closeError = new Error("close failed");
    await assert.rejects(
      runMemoryTargets([{ target: a, files: [] }, { target: b, files: [] }], options()),
      /close failed/,
    );
    assert.ok(b.calls.includes("close"));

    const buggy = new MemoryTarget("buggy");
    const other = new MemoryTarget("other");
    buggy.failOn = { path: "a", error: new RangeError("a bug") };
    await assert.rejects(
      runMemoryTargets(
        [{ target: buggy, files: [file("a")] }, { target: other, files: [] }],
        options(),
      ),
      RangeError,
    );
    assert.ok(buggy.calls.includes("release") && buggy.calls.includes("close"));
    assert.ok(other.calls.includes("close"));
  });

  it("stops between files when interrupted, releases the lock, and says which file is next", async () => {
    const controller = new AbortController();
    const target = new MemoryTarget("main");
    target.afterApply = (path) => path === "a" && controller.abort();
    const report = await runMemoryTargets(
      [{ target, files: [file("a"), file("b")] }, { target: new MemoryTarget("later"), files: [] }],
      options({ signal: controller.signal }),
    );
    assert.equal(report.error?.kind, "interrupted");
    assert.match(report.error!.message, /interrupted before b/);
    assert.deepEqual(target.calls.filter((c) => c.startsWith("apply")), ["apply a"]);
    assert.ok(target.calls.includes("release"));
    assert.equal(report.connections.length, 1);
  });

  it("reports an interruption while waiting for the lock as kind interrupted", async () => {
    const target = new MemoryTarget("main");
    target.lockError = new MigrationError("interrupted", "interrupted while waiting for the lock");
    const report = await runMemoryTargets([{ target, files: [file("a")] }], options());
    assert.equal(report.error?.kind, "interrupted");
    assert.ok(!target.calls.some((c) => c.startsWith("apply")));
  });

  it("unlock asks each target to remove its lock and reads nothing", async () => {
    const target = new MemoryTarget("main");
    const report = await runMemoryTargets(
      [{ target, files: [file("a")] }],
      options({ command: "unlock" }),
    );
    assert.deepEqual(target.calls, ["unlock", "close"]);
    assert.equal(report.connections[0].unlocked, "nothing");
  });

  it("property: actions follow a model of the records; migrate leaves every file recorded once", async () => {
    const paths = fc.uniqueArray(fc.stringMatching(/^[a-d]{1,3}$/), { minLength: 1, maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(
        paths,
        fc.func(fc.constantFrom("none", "same", "other", "gone", "renamed")),
        fc.func(fc.boolean()),
        async (all, fate, runOnce) => {
          // Files fated "gone" have a record and no file; "renamed" ones a record under another path.
          const target = new MemoryTarget("p");
          const files: PlannedFile[] = [];
          const model = new Map<string, string>();
          for (const path of all) {
            const f = fate(path);
            const hash = `h-${path}`;
            if (f === "gone") {
              target.records.set(path, hash);
              model.set(path, "missing");
              continue;
            }
            files.push(file(path, hash, { runOnce: runOnce(path) }));
            if (f === "same") target.records.set(path, hash);
            if (f === "other") target.records.set(path, "x");
            if (f === "renamed") target.records.set(`old-${path}`, hash);
            model.set(
              path,
              f === "none"
                ? "apply"
                : f === "same"
                ? "skip"
                : f === "renamed"
                ? "rename"
                : runOnce(path)
                ? "changed"
                : "reapply",
            );
          }
          const status = await runMemoryTargets(
            [{ target, files }],
            options({ command: "status" }),
          );
          const actions = new Map(status.connections[0].files.map((f) => [f.path, f.action]));
          assert.deepEqual(actions, model);

          const report = await runMemoryTargets([{ target, files }], options());
          assert.equal(report.error, undefined);
          for (const f of files) {
            const wanted = model.get(f.path) === "changed" ? "x" : f.hash;
            assert.equal(target.records.get(f.path), wanted, f.path);
            assert.ok(!target.records.has(`old-${f.path}`), "a renamed file's old record is gone");
          }
          const sent = [...model.values()].filter((a) => a === "apply" || a === "reapply").length;
          assert.equal(report.connections[0].applied, sent);
          assert.equal(target.calls.filter((c) => c.startsWith("apply")).length, sent);
        },
      ),
      propertyOptions(),
    );
  });
});
