import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ConnectionReport, FileAction, RunReport } from "../../migrate.ts";
import { connectionStatuses, migrationStatuses } from "../../src/migrate/migration_status.ts";

function connection(name: string, state: ConnectionReport["state"], actions: FileAction[] = []) {
  return {
    name,
    state,
    files: actions.map((action, i) => ({
      path: `V${i + 1}__step_${i + 1}.sql`,
      action,
      ...(action === "skip"
        ? { applied: { at: "2026-01-01T00:00:00.000Z", by: "ci@build" }, recordChecksum: `c${i}` }
        : {}),
    })),
    applied: 0,
    skipped: 0,
    requests: 0,
    ms: 0,
  } as ConnectionReport;
}

const report = (connections: ConnectionReport[], error?: RunReport["error"]): RunReport => ({
  command: "status",
  connections,
  ms: 0,
  ...(error === undefined ? {} : { error }),
});

describe("connectionStatuses", () => {
  it("names each file's version, description and state, and what its record says", () => {
    const [main] = connectionStatuses(
      report([connection("main", "ran", ["skip", "apply", "changed", "reapply", "missing"])]),
      "sql",
    );
    assert.equal(main.state, "ok");
    assert.deepEqual(main.files.map((f) => f.state), [
      "applied",
      "pending",
      "changed",
      "changed",
      "missing",
    ]);
    assert.deepEqual(main.files[0], {
      path: "V1__step_1.sql",
      version: "1",
      description: "step_1",
      state: "applied",
      checksum: "c0",
      appliedOn: "2026-01-01T00:00:00.000Z",
      appliedBy: "ci@build",
    });
  });

  it("names a version undo undid as undone", () => {
    const [main] = connectionStatuses(
      report([connection("main", "ran", ["skip", "undone"])]),
      "sql",
    );
    assert.deepEqual(main.files.map((f) => f.state), ["applied", "undone"]);
  });

  it("says which connection could not be reached, and why", () => {
    const statuses = connectionStatuses(
      report([connection("a", "ran", ["unknown"]), connection("b", "not-reached")], {
        kind: "failure",
        message: "cannot connect to postgres://127.0.0.1:1/x",
        connection: "a",
      }),
      "sql",
    );
    assert.deepEqual(statuses[0].state, "error");
    assert.equal(statuses[0].error, "cannot connect to postgres://127.0.0.1:1/x");
    assert.equal(statuses[0].files[0].state, "unknown");
  });

  it("describes names that are not Flyway's by their name", () => {
    const [c] = connectionStatuses(
      report([{
        ...connection("s", "ran"),
        files: [{ path: "1.0/logs-template.json", action: "apply" }],
      }]),
      "search",
    );
    assert.deepEqual(c.files[0], {
      path: "1.0/logs-template.json",
      version: "1.0",
      description: "logs-template",
      state: "pending",
    });
  });
});

describe("migrationStatuses", () => {
  it("asks again, on its own, each connection a failed run did not reach", async () => {
    const asked: string[] = [];
    const statuses = await migrationStatuses((mode, name) => {
      asked.push(`${mode}:${name ?? "*"}`);
      if (mode === "search") {
        return Promise.resolve({
          report: report([], {
            kind: "config",
            message: 'No search connections: none of /app/application.yml has a "search" key',
          }),
          failed: true,
        });
      }
      if (name === undefined) {
        return Promise.resolve({
          report: report(
            [connection("a", "ran", ["unknown"]), connection("b", "not-reached")],
            { kind: "failure", message: "down", connection: "a" },
          ),
          failed: true,
        });
      }
      return Promise.resolve({ report: report([connection("b", "ran", ["skip"])]), failed: false });
    });
    assert.deepEqual(asked, ["sql:*", "sql:b", "search:*"]);
    assert.deepEqual(statuses.map((s) => [s.name, s.kind, s.state]), [
      ["a", "sql", "error"],
      ["b", "sql", "ok"],
    ]);
  });

  it("throws what stops a run before any connection", async () => {
    await assert.rejects(
      migrationStatuses(() =>
        Promise.resolve({
          report: report([], { kind: "config", message: "/app has no application.yml" }),
          failed: true,
        })
      ),
      /has no application\.yml/,
    );
  });
});
