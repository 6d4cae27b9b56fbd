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
});
