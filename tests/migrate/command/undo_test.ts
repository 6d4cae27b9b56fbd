// `undo`'s rules: what it undoes, marked on the decisions, and a refusal naming the connection.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decideUndo, undo } from "../../../src/migrate/command/undo.ts";
import { PlanError } from "../../../src/migrate/migration_error.ts";
import type { FileDecision } from "../../../src/migrate/run_report.ts";

const files = [
  { path: "V1__a.sql", version: "1" },
  { path: "V2__b.sql", version: "2", undo: "U2__b.sql" },
  { path: "V3__c.sql", version: "3", undo: "U3__c.sql" },
];
const decided: FileDecision[] = files.map((f) => ({ path: f.path, action: "skip" }));
const records = new Map(files.map((f) => [f.path, "h"]));

describe("undo", () => {
  it("marks the versions it undoes, newest first, and takes --target", () => {
    const { decided: marked, steps } = decideUndo("main", decided, files, records, { target: "1" });
    assert.deepEqual(steps.map((s) => `${s.path}<${s.undo}`), [
      "V3__c.sql<U3__c.sql",
      "V2__b.sql<U2__b.sql",
    ]);
    assert.deepEqual(marked.map((d) => `${d.path}:${d.action}`), [
      "V1__a.sql:skip",
      "V2__b.sql:undo",
      "V3__c.sql:undo",
    ]);
    assert.equal(undo.target, "--target");
    assert.ok(undo.writes && undo.isWork("undo") && !undo.isWork("skip"));
  });

  it("undoes the newest applied version alone without a target", () => {
    const { steps } = decideUndo("main", decided, files, records, {});
    assert.deepEqual(steps.map((s) => s.path), ["V3__c.sql"]);
  });

  it("refuses a plan with a version that has no undo, naming the connection and the file", () => {
    assert.throws(
      () => decideUndo("main", decided, files, records, { target: "0" }),
      (error) =>
        error instanceof PlanError && error.connection === "main" &&
        error.file === "V1__a.sql" && /connection "main": V1__a\.sql/.test(error.message),
    );
  });
});
