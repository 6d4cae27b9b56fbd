// `--drift` in the human output and in validate's error (no cluster: reports built by hand).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { humanSummary } from "../../src/migrate/human_output.ts";
import type { ConnectionDrift, RunReport } from "../../src/migrate/run_report.ts";

const report = (command: RunReport["command"], drift: ConnectionDrift): RunReport => ({
  command,
  connections: [{
    name: "main",
    state: "ran",
    files: [{ path: "1.0/logs-template.json", action: "skip" }],
    applied: 0,
    skipped: 1,
    requests: 2,
    ms: 10,
    drift,
  }],
  ms: 10,
});

describe("human output of --drift", () => {
  it("lists each difference under its connection, before its summary", () => {
    const lines = humanSummary(report("status", {
      checked: 3,
      resources: [{
        resource: "template logs",
        file: "1.0/logs-template.json",
        differences: [`template.settings.index.number_of_shards: file "1", cluster "2"`],
        reapply: true,
      }, {
        resource: "alias orders",
        file: "2.0/orders-reindex.json",
        differences: [`points at "orders_v1", not at "orders_v2" (the file's new index)`],
        reapply: false,
        note: "2.0/orders-reindex.json runs once (put the change in a new file)",
      }],
    }));
    assert.deepEqual(lines, [
      "main:",
      "  applied      1.0/logs-template.json",
      "main: drift: 2 of 3 resource(s) differ from their files",
      `  template logs: template.settings.index.number_of_shards: file "1", cluster "2"`,
      `  alias orders: points at "orders_v1", not at "orders_v2" (the file's new index)`,
      "main: 0 to apply, 1 unchanged, 2 request(s), 0.01 s",
      "done in 0.01 s",
    ]);
  });

  it("says what migrate --drift did and what remains", () => {
    const lines = humanSummary(report("migrate", {
      checked: 3,
      resources: [{
        resource: "template logs",
        file: "1.0/logs-template.json",
        differences: [`template.priority: file 1, cluster 2`],
        reapply: true,
        result: "reapplied",
        remaining: [],
      }, {
        resource: "index orders",
        file: "1.0/orders-index.json",
        differences: ["a", "b"],
        reapply: true,
        result: "reapplied",
        remaining: ["b"],
      }, {
        resource: "index users",
        file: "1.0/users-index.json",
        differences: ["c"],
        reapply: false,
        note: "applying the file again cannot change this",
      }],
    }));
    assert.deepEqual(lines.slice(0, 10), [
      "main: drift: 3 of 3 resource(s) differ from their files",
      "  template logs: template.priority: file 1, cluster 2",
      "  template logs: applied 1.0/logs-template.json again; it matches its file now",
      "  index orders: a",
      "  index orders: b",
      "  index orders: applied 1.0/orders-index.json again; still differs:",
      "    b",
      "  index users: c",
      "  index users: not applied again: applying the file again cannot change this",
      "main: 0 applied, 1 unchanged, 2 request(s), 0.01 s",
    ]);
    assert.deepEqual(humanSummary(report("validate", { checked: 2, resources: [] })).slice(2, 3), [
      "main: no drift: the 2 resource(s) of the applied files match them",
    ]);
  });
});
