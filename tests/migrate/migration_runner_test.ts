import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { RunInterrupted } from "../../src/migrate/interruption.ts";
import { LockNotAcquiredError } from "../../src/migrate/lock_not_acquired.ts";
import { MigrationFailure } from "../../src/migrate/migration_failure.ts";
import {
  type Applied,
  type MigrationTarget,
  type PlannedFile,
  type RunnerOptions,
  runTargets,
} from "../../src/migrate/migration_runner.ts";
import { type Progress, silentProgress } from "../../src/migrate/run_report.ts";
import type { UnlockOutcome } from "../../src/migrate/run_report.ts";
import { propertyOptions } from "../property.ts";

/**
 * A target that keeps its records in memory and logs every call, so that the engine's order of
 * calls can be checked. Hooks let a test play another runner or a fault.
 */
class MemoryTarget implements MigrationTarget<PlannedFile> {
  readonly name: string;
  readonly onChange: "reapply" | "report";
  strictOrder = false;
  requests = 0;
  readonly records = new Map<string, string>();
  readonly calls: string[] = [];
  /** Runs while this target waits for its lock (another runner records files meanwhile). */
  whileLocking?: () => void;
  failOn?: { path: string; error: Error };
  lockError?: Error;
  releaseError?: Error;
  closeError?: Error;
  afterApply?: (path: string) => void;

  constructor(name: string, onChange: "reapply" | "report" = "reapply") {
    this.name = name;
    this.onChange = onChange;
  }

  readRecords(): Promise<ReadonlyMap<string, string>> {
    this.calls.push("read");
    this.requests++;
    return Promise.resolve(new Map(this.records));
  }

  prepare(): Promise<void> {
    this.calls.push("prepare");
    return Promise.resolve();
  }

  lock(): Promise<void> {
    this.calls.push("lock");
    this.whileLocking?.();
    return this.lockError ? Promise.reject(this.lockError) : Promise.resolve();
  }

  release(): Promise<void> {
    this.calls.push("release");
    return this.releaseError ? Promise.reject(this.releaseError) : Promise.resolve();
  }

  forceUnlock(): Promise<UnlockOutcome> {
    this.calls.push("unlock");
    return Promise.resolve({ unlocked: "nothing" });
  }

  apply(file: PlannedFile): Promise<Applied> {
    this.calls.push(`apply ${file.path}`);
    this.requests++;
    if (this.failOn?.path === file.path) return Promise.reject(this.failOn.error);
    // Another runner may have recorded it under the file's own lock (the SQL targets' check).
    if (this.records.get(file.path) === file.hash) {
      return Promise.resolve({ result: "applied", ms: 0, alreadyRecorded: true });
    }
    this.records.set(file.path, file.hash);
    this.afterApply?.(file.path);
    return Promise.resolve({ result: "sent", ms: 1, status: 200 });
  }

  failure(error: unknown): string | undefined {
    return error instanceof TypeError ? `io: ${error.message}` : undefined;
  }

  close(): Promise<void> {
    this.calls.push("close");
    return this.closeError ? Promise.reject(this.closeError) : Promise.resolve();
  }
}

const file = (path: string, hash = `h-${path}`): PlannedFile => ({ path, hash });
const options = (extra: Partial<RunnerOptions> = {}): RunnerOptions => ({
  command: "migrate",
  dryRun: false,
  lockTimeoutMs: 0,
  progress: silentProgress,
  ...extra,
});

describe("runTargets, the engine both runners share", () => {
  it("decides apply, skip, reapply (search) and changed (SQL) from the records", async () => {
    for (const onChange of ["reapply", "report"] as const) {
      const target = new MemoryTarget("main", onChange);
      target.records.set("a", "h-a");
      target.records.set("b", "old");
      const notes: string[] = [];
      const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
      const report = await runTargets(
        [{ target, files: [file("a"), file("b"), file("c")] }],
        options({ progress }),
      );
      const actions = report.connections[0].files.map((f) => `${f.path}:${f.action}`);
      if (onChange === "reapply") {
        assert.deepEqual(actions, ["a:skip", "b:reapply", "c:apply"]);
        assert.deepEqual(target.calls.filter((c) => c.startsWith("apply")), ["apply b", "apply c"]);
        assert.equal(report.connections[0].applied, 2);
      } else {
        assert.deepEqual(actions, ["a:skip", "b:changed", "c:apply"]);
        assert.deepEqual(target.calls.filter((c) => c.startsWith("apply")), ["apply c"]);
        assert.match(notes.join("\n"), /b changed after it was applied/);
      }
      assert.equal(report.connections[0].skipped, 1);
      assert.equal(report.error, undefined);
    }
  });

  it("applies a pending file that sorts before an applied one, saying so with both names", async () => {
    const target = new MemoryTarget("main");
    target.records.set("b", "h-b");
    const notes: string[] = [];
    const progress: Progress = { ...silentProgress, notice: (m) => notes.push(m) };
    const report = await runTargets(
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
    const report = await runTargets([{ target, files: [file("V1"), file("V2")] }], options());
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
      const report = await runTargets(
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
    const report = await runTargets([{ target: raced, files: [file("a"), file("b")] }], options());
    assert.equal(report.error?.kind, "plan");
    assert.deepEqual(raced.calls, ["read", "prepare", "lock", "read", "release", "close"]);
    // status and validate list it and say strict order was in force, and go on to the next
    // connection (the CLI fails validate on it, with the changed files); the flag overrides the
    // setting either way.
    for (const command of ["status", "validate"] as const) {
      const t = new MemoryTarget("main");
      t.strictOrder = true;
      t.records.set("b", "h-b");
      const r = await runTargets(
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
      const report = await runTargets(
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
    const report = await runTargets(
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
    const report = await runTargets([{ target, files: [file("a"), file("b")] }], options());
    assert.deepEqual(target.calls, [
      "read",
      "prepare",
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
    await runTargets([{ target: idle, files: [file("a")] }], options());
    assert.deepEqual(idle.calls, ["read", "close"]);
  });

  it("sends only reads for status, validate and --dry-run", async () => {
    for (
      const extra of [{ command: "status" }, { command: "validate" }, { dryRun: true }] as const
    ) {
      const target = new MemoryTarget("main");
      const report = await runTargets([{ target, files: [file("a")] }], options(extra));
      assert.deepEqual(target.calls, ["read", "close"]);
      assert.equal(report.connections[0].files[0].action, "apply");
    }
  });

  it("counts a file another runner recorded under its own lock as skipped, not applied", async () => {
    const target = new MemoryTarget("main");
    // The records read after the lock lack "a"; the file's own lock then finds it recorded
    // (SQLite checks inside its BEGIN IMMEDIATE).
    target.readRecords = () => Promise.resolve(new Map());
    target.records.set("a", "h-a");
    const report = await runTargets([{ target, files: [file("a"), file("b")] }], options());
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
    const report = await runTargets([
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
    locked.lockError = new LockNotAcquiredError("held by someone");
    const lockReport = await runTargets([{ target: locked, files: [file("a")] }], options());
    assert.equal(lockReport.error?.kind, "lock");
    assert.equal(lockReport.error?.connection, "locked");

    const io = new MemoryTarget("io");
    io.failOn = { path: "a", error: new TypeError("connection reset") };
    const ioReport = await runTargets([{ target: io, files: [file("a")] }], options());
    assert.deepEqual(ioReport.error, {
      kind: "failure",
      message: "io: connection reset",
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
    const report = await runTargets([{ target, files: [file("a")] }], options());
    assert.match(report.error!.message, /bad/);
  });

  it("closes every target even when closing one throws, and lets a bug propagate after that", async () => {
    const a = new MemoryTarget("a");
    const b = new MemoryTarget("b");
    a.closeError = new Error("close failed");
    await assert.rejects(
      runTargets([{ target: a, files: [] }, { target: b, files: [] }], options()),
      /close failed/,
    );
    assert.ok(b.calls.includes("close"));

    const buggy = new MemoryTarget("buggy");
    const other = new MemoryTarget("other");
    buggy.failOn = { path: "a", error: new RangeError("a bug") };
    await assert.rejects(
      runTargets([{ target: buggy, files: [file("a")] }, { target: other, files: [] }], options()),
      RangeError,
    );
    assert.ok(buggy.calls.includes("release") && buggy.calls.includes("close"));
    assert.ok(other.calls.includes("close"));
  });

  it("stops between files when interrupted, releases the lock, and says which file is next", async () => {
    const controller = new AbortController();
    const target = new MemoryTarget("main");
    target.afterApply = (path) => path === "a" && controller.abort();
    const report = await runTargets(
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
    target.lockError = new RunInterrupted("interrupted while waiting for the lock");
    const report = await runTargets([{ target, files: [file("a")] }], options());
    assert.equal(report.error?.kind, "interrupted");
    assert.ok(!target.calls.some((c) => c.startsWith("apply")));
  });

  it("unlock asks each target to remove its lock and reads nothing", async () => {
    const target = new MemoryTarget("main");
    const report = await runTargets(
      [{ target, files: [file("a")] }],
      options({ command: "unlock" }),
    );
    assert.deepEqual(target.calls, ["unlock", "close"]);
    assert.equal(report.connections[0].unlocked, "nothing");
  });

  it("property: actions follow a model of the records; applying them leaves every file recorded", async () => {
    const paths = fc.uniqueArray(fc.stringMatching(/^[a-d]{1,3}$/), { maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(
        paths,
        fc.func(fc.constantFrom("none", "same", "other")),
        fc.constantFrom("reapply" as const, "report" as const),
        async (files, recordOf, onChange) => {
          const target = new MemoryTarget("p", onChange);
          const expected: string[] = [];
          for (const path of files) {
            const record = recordOf(path);
            if (record !== "none") target.records.set(path, record === "same" ? `h-${path}` : "x");
            expected.push(
              record === "none"
                ? "apply"
                : record === "same"
                ? "skip"
                : onChange === "reapply"
                ? "reapply"
                : "changed",
            );
          }
          const report = await runTargets(
            [{ target, files: files.map((p) => file(p)) }],
            options(),
          );
          assert.deepEqual(report.connections[0].files.map((f) => f.action), expected);
          for (const [i, path] of files.entries()) {
            const wanted = expected[i] === "changed" ? "x" : `h-${path}`;
            assert.equal(target.records.get(path), wanted);
          }
          const applied = expected.filter((a) => a === "apply" || a === "reapply").length;
          assert.equal(report.connections[0].applied, applied);
          assert.equal(target.calls.includes("lock"), applied > 0);
        },
      ),
      propertyOptions(),
    );
  });
});
