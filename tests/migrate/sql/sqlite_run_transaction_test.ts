// SQLite runs a run's files in one transaction, its lock: a file whose failure ends that
// transaction itself (`INSERT OR ROLLBACK`, `RAISE(ROLLBACK)` in a trigger, a full disk) takes
// the files before it with it, and the run must say so rather than count them applied.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SQLITE } from "../../sqlite.ts";
import { KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

// Runs `work` while a reader holds a transaction open on the workspace's file: the run's COMMIT
// needs it gone (SQLite's rollback journal), and it stays past the lock timeout.
async function withReader<T>(ws: SqlWorkspace, work: () => Promise<T>): Promise<T> {
  await ws.query("select 1");
  const reader = new SQLITE!.DatabaseSync(ws.db.url.slice("sqlite:".length));
  reader.exec("BEGIN; SELECT count(*) FROM sqlite_master;");
  try {
    return await work();
  } finally {
    reader.exec("COMMIT");
    reader.close();
  }
}

// SQLite alone: a Node without node:sqlite has none (KINDS leaves it out).
for (const kind of KINDS.filter((k) => k === "sqlite")) {
  describe(`the run's transaction on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("a file whose failure ends the transaction reports the files before it as not applied", async () => {
      const ws = await workspace();
      await ws.file("V1__a.sql", "create table A (V int);\n");
      await ws.file("V2__b.sql", "create table B (V int primary key);\n");
      await ws.file(
        "V3__c.sql",
        "insert into B values (1);\ninsert or rollback into B values (1);\n",
      );
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out);
      const connection = run.report!.connections[0];
      // Nothing of the run stays: the report must not count V1 and V2 applied.
      assert.equal(connection.applied, 0, JSON.stringify(connection));
      assert.deepEqual(
        connection.files.map((f) => `${f.path}:${f.result ?? ""}`),
        ["V1__a.sql:", "V2__b.sql:", "V3__c.sql:failed"],
      );
      assert.match(
        run.report!.error!.message,
        /V3__c\.sql.*the files this run applied before it on this connection were rolled back/s,
      );
      const status = await ws.ok("status", "--json");
      assert.deepEqual(
        status.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
        ["V1__a.sql:apply", "V2__b.sql:apply", "V3__c.sql:apply"],
      );
      // Once the file is fixed, the next run applies all three.
      await ws.file("V3__c.sql", "insert into B values (1);\n");
      assert.equal((await ws.ok("--json")).report!.connections[0].applied, 3);
    });

    it("an afterMigrate callback whose failure ends the transaction reports the files as not applied", async () => {
      const ws = await workspace();
      await ws.file("V1__a.sql", "create table A (V int primary key);\n");
      await ws.file(
        "afterMigrate.sql",
        "insert into A values (1);\ninsert or rollback into A values (1);\n",
      );
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out);
      const connection = run.report!.connections[0];
      assert.equal(connection.applied, 0, JSON.stringify(connection));
      assert.match(run.report!.error!.message, /afterMigrate.*rolled back/s);
    });

    it("a run whose commit is refused reports its files as not applied", async () => {
      const ws = await workspace();
      await ws.file("V1__a.sql", "create table A (V int);\n");
      await ws.file("V2__b.sql", "create table B (V int);\n");
      const run = await withReader(ws, () => ws.run("--lock-timeout", "1", "--json"));
      assert.notEqual(run.code, 0, run.out);
      const connection = run.report!.connections[0];
      assert.equal(connection.applied, 0, JSON.stringify(connection));
      assert.deepEqual(connection.files.map((f) => f.result ?? ""), ["", ""]);
      assert.match(run.report!.error!.message, /rolled back/);
      const status = await ws.ok("status", "--json");
      assert.deepEqual(
        status.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
        ["V1__a.sql:apply", "V2__b.sql:apply"],
      );
    });

    it("a failed run whose commit is refused reports the files before the failure as not applied", async () => {
      const ws = await workspace();
      await ws.file("V1__a.sql", "create table A (V int);\n");
      await ws.file("V2__b.sql", "create table B (V int);\nselect * from NOPE;\n");
      const run = await withReader(ws, () => ws.run("--lock-timeout", "1", "--json"));
      assert.equal(run.code, 1, run.out);
      const connection = run.report!.connections[0];
      assert.equal(connection.applied, 0, JSON.stringify(connection));
      assert.deepEqual(connection.files.map((f) => f.result ?? ""), ["", "failed"]);
    });
  });
}
