import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { humanProgress, humanSummary } from "../../src/migrate/human_output.ts";
import type { FileReport } from "../../src/migrate/run_report.ts";

describe("human output", () => {
  it("names a request only for files it sends, and a time only when one was taken", () => {
    const lines: string[] = [];
    const progress = humanProgress((l) => lines.push(l));
    const files: FileReport[] = [
      { path: "a.json", action: "apply", request: "PUT /a", result: "created", status: 200, ms: 4 },
      {
        path: "b.json",
        action: "rename",
        request: "POST /b/_doc",
        renamedFrom: "old/b.json",
        result: "moved",
      },
      { path: "c.json", action: "record", request: "POST /c/_doc", result: "recorded" },
      { path: "d.json", action: "drop", result: "dropped" },
    ];
    progress.start("main", 4, 9, "record");
    files.forEach((f, i) => progress.file("main", i + 1, 4, f));
    assert.deepEqual(lines, [
      "main: 4 of 9 file(s) to record",
      "main [1/4] apply a.json -> PUT /a (created, HTTP 200, 4 ms)",
      "main [2/4] rename b.json (renamed from old/b.json) (moved)",
      "main [3/4] record c.json (recorded)",
      "main [4/4] drop d.json (dropped)",
    ]);
  });

  it("gives a reindex's move and figures, and its steps under the connection", () => {
    const lines: string[] = [];
    const progress = humanProgress((l) => lines.push(l));
    progress.step("main", "reindex: created users-v2");
    progress.file("main", 1, 1, {
      path: "people-reindex.json",
      action: "apply",
      request: "POST /_reindex",
      result: "reindexed",
      status: 200,
      ms: 2100,
      reindex: {
        source: "users",
        index: "users-v2",
        alias: "people",
        resumed: true,
        documents: 50000,
        copyMs: 1400,
        documentsPerSecond: 35714,
        writeBlockedMs: 1650,
        deletedSource: true,
      },
    });
    assert.deepEqual(lines, [
      "main   reindex: created users-v2",
      "main [1/1] apply people-reindex.json -> POST /_reindex (alias people: users -> users-v2, " +
      "resumed, 50000 document(s), 35714/s, writes blocked 1.6 s, users deleted) " +
      "(reindexed, HTTP 200, 2100 ms)",
    ]);
  });

  it("lists an undo plan in the order it undoes: newest version first", () => {
    const lines = humanSummary({
      command: "undo",
      dryRun: true,
      connections: [{
        name: "main",
        state: "ran",
        files: [
          { path: "V1__a.sql", action: "skip" },
          { path: "V2__b.sql", action: "undo" },
          { path: "V3__c.sql", action: "undo" },
          { path: "V10__d.sql", action: "undo" },
        ],
        applied: 0,
        skipped: 1,
        requests: 1,
        ms: 10,
      }],
      ms: 10,
    });
    assert.deepEqual(lines.slice(0, 5), [
      "main:",
      "  skip     V1__a.sql",
      "  undo     V10__d.sql",
      "  undo     V3__c.sql",
      "  undo     V2__b.sql",
    ]);
  });

  it("lists repair's pending files as pending: repair runs none", () => {
    const lines = humanSummary({
      command: "repair",
      dryRun: true,
      connections: [{
        name: "main",
        state: "ran",
        files: [
          { path: "a.json", action: "record", request: "PUT /a" },
          { path: "b.json", action: "apply", request: "POST /b/_doc" },
        ],
        applied: 0,
        skipped: 0,
        requests: 1,
        ms: 10,
      }],
      ms: 10,
    });
    assert.deepEqual(lines.slice(0, 4), [
      "main:",
      "  record   a.json",
      "  pending  b.json",
      "main: 0 unchanged, 1 to record, 1 pending (repair runs none), 1 request(s), 0.01 s",
    ]);
  });

  it("lists the repeatable files baseline leaves as pending: baseline runs none", () => {
    const lines = humanSummary({
      command: "baseline",
      connections: [{
        name: "main",
        state: "ran",
        files: [
          { path: "V1__a.sql", action: "record", result: "recorded" },
          { path: "R__view.sql", action: "apply" },
          { path: "R__fn.sql", action: "reapply" },
        ],
        applied: 0,
        skipped: 0,
        requests: 3,
        ms: 10,
      }],
      ms: 10,
    });
    assert.deepEqual(lines.slice(0, 5), [
      "main:",
      "  record   V1__a.sql",
      "  pending  R__view.sql",
      "  pending  R__fn.sql",
      "main: 0 unchanged, 1 recorded, 2 pending (baseline runs none), 3 request(s), 0.01 s",
    ]);
  });

  it("lists status's files whose state is unknown, and says why instead of counting them", () => {
    const lines = humanSummary({
      command: "status",
      connections: [{
        name: "main",
        state: "ran",
        files: [{ path: "1-a.json", action: "unknown" }, { path: "2-b.json", action: "unknown" }],
        applied: 0,
        skipped: 0,
        requests: 1,
        ms: 10,
      }],
      ms: 10,
      error: { kind: "failure", message: "no host answered", connection: "main" },
    });
    assert.deepEqual(lines, [
      "main:",
      "  unknown      1-a.json",
      "  unknown      2-b.json",
      "main: 2 file(s) in this checkout, their state unknown (the records could not be read), " +
      "1 request(s), 0.01 s",
      "failed: no host answered",
      "stopped in 0.01 s",
    ]);
  });

  it("lists when, by whom and with which runner each listed record was written, in columns", () => {
    const at = "2026-11-25T06:16:07.123Z";
    const lines = humanSummary({
      command: "status",
      connections: [{
        name: "main",
        state: "ran",
        files: [
          {
            path: "V1__init.sql",
            action: "skip",
            applied: { at, by: "ci@build-7", runnerVersion: "0.1.0" },
          },
          // Recorded before runner versions were.
          { path: "V2__users.sql", action: "changed", applied: { at, by: "ci@build-7" } },
          // Search, recorded before writers were.
          { path: "V3__gone.sql", action: "missing", applied: { at, runnerVersion: "0.0.9" } },
          {
            path: "V4__moved.sql",
            action: "rename",
            renamedFrom: "old/V4__moved.sql",
            applied: { at: "2027-01-02T23:59:59.999Z", by: "ann@laptop", runnerVersion: "0.1.0" },
          },
          { path: "V5__recorded_by_hand.sql", action: "skip" },
          { path: "V6__pending_with_a_long_name.sql", action: "apply" },
        ],
        applied: 0,
        skipped: 2,
        requests: 2,
        ms: 10,
      }],
      ms: 10,
    });
    assert.deepEqual(lines, [
      "main:",
      "  applied      V1__init.sql                                    " +
      "2026-11-25 06:16 UTC by ci@build-7 (thaw 0.1.0)",
      "  changed      V2__users.sql                                   " +
      "2026-11-25 06:16 UTC by ci@build-7",
      "  missing      V3__gone.sql                                    2026-11-25 06:16 UTC (thaw 0.0.9)",
      "  renamed      V4__moved.sql (renamed from old/V4__moved.sql)  " +
      "2027-01-02 23:59 UTC by ann@laptop (thaw 0.1.0)",
      "  applied      V5__recorded_by_hand.sql",
      "  pending      V6__pending_with_a_long_name.sql",
      "main: 1 to apply, 2 unchanged, 1 changed since applied, 1 to rename, 1 missing, " +
      "2 request(s), 0.01 s",
      "done in 0.01 s",
    ]);
  });

  it("escapes every control character a record holds: none reaches the terminal as it is", () => {
    // Whoever can write the records writes these: each code point 0-0x9f, and the bidi controls.
    const hostile = [
      ...Array.from({ length: 0xa0 }, (_, i) => String.fromCodePoint(i)),
      "\u2028",
      "\u2029",
      "\u202e",
      "\u2066",
    ];
    for (const c of hostile) {
      const lines = humanSummary({
        command: "status",
        connections: [{
          name: "main",
          state: "ran",
          files: [{
            path: "V1__a.sql",
            action: "skip",
            applied: { by: `ci${c}x@host`, runnerVersion: `1${c}2` },
          }, { path: `V2${c}__gone.sql`, action: "missing" }],
          applied: 0,
          skipped: 1,
          requests: 1,
          ms: 1,
        }],
        ms: 1,
      });
      const [line, gone] = [lines[1], lines[2]];
      const printable = c >= " " && c !== "\x7f" && !/[\x80-\x9f\u2028\u2029\u202e\u2066]/.test(c);
      assert.equal(lines.length, 5, JSON.stringify(c));
      for (const l of lines) {
        // deno-lint-ignore no-control-regex -- the control characters are what it looks for
        assert.doesNotMatch(l, /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
      }
      const shown = printable ? c : `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`;
      assert.ok(
        line.endsWith(`by ci${shown}x@host (thaw 1${shown}2)`),
        `${JSON.stringify(c)}: ${line}`,
      );
      assert.ok(gone.endsWith(`V2${shown}__gone.sql`), gone);
    }
  });

  it("keeps an error naming a record's path on its line: a line break in it cannot fake a line", () => {
    const path = "x\nok: all migrations applied\r\u2028y.sql";
    for (const kind of ["plan", "failure", "invalid", "lock", "interrupted"] as const) {
      const lines = humanSummary({
        command: "migrate",
        connections: [],
        ms: 1,
        error: { kind, message: `${path}: is recorded as applied, but its file is gone` },
      });
      assert.equal(lines.length, 2, `${kind}: ${lines.join(" | ")}`);
      assert.match(lines[0], /x\\u000aok: all migrations applied\\u000d\\u2028y\.sql: is recorded/);
    }
    // The configuration's own errors (a YAML snippet) keep their lines.
    const config = humanSummary({
      command: "migrate",
      connections: [],
      ms: 1,
      error: { kind: "config", message: "bad indentation\n 2 |  - name: x\n------^" },
    });
    assert.deepEqual(config.slice(0, 3), [
      "error: bad indentation",
      " 2 |  - name: x",
      "------^",
    ]);
  });

  it("escapes control characters in progress lines too (a renamed record's old path)", () => {
    const lines: string[] = [];
    const progress = humanProgress((l) => lines.push(l));
    progress.file("main", 1, 1, {
      path: "V1__a.sql",
      action: "rename",
      renamedFrom: "V1\x1b[2J\r\nFAKE__a.sql",
      result: "moved",
    });
    assert.deepEqual(lines, [
      "main [1/1] rename V1__a.sql (renamed from V1\\u001b[2J\\u000d\\u000aFAKE__a.sql) (moved)",
    ]);
  });
});
