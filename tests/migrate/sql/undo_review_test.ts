// Review of undo (h72-plan): each test shows a finding and fails until it is fixed.
import assert from "node:assert/strict";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createDatabase, DB_USER, KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

async function recorded(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query(
    "SELECT migration_path FROM framework_migrations ORDER BY migration_path",
  );
  return rows.map((r) => String(r.migration_path));
}

async function actions(ws: SqlWorkspace): Promise<string[]> {
  const status = await ws.ok("status", "--json");
  return status.report!.connections[0].files.map((f) => `${f.path}:${f.action}`);
}

async function threeVersions(ws: SqlWorkspace): Promise<void> {
  await ws.file("V1__a.sql", "create table A (V int);\n");
  await ws.file("V2__b.sql", "create table B (V int);\n");
  await ws.file("V3__c.sql", "create table C (V int);\n");
  await ws.file("U2__b.sql", "drop table B;\n");
  await ws.file("U3__c.sql", "drop table C;\n");
}

for (const kind of KINDS) {
  describe(`undo review on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("an undo record left by repair --force does not mark the version applied again undone", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      await ws.ok("undo");
      await rm(join(ws.root, "main", "V3__c.sql"));
      await rm(join(ws.root, "main", "U3__c.sql"));
      await ws.ok("repair", "--force");
      await threeVersions(ws);
      await ws.ok();
      assert.equal(await ws.count("C"), 0, "V3 applied again");
      // Fails: the stale U3__c.sql record makes the applied V3 read `undone`, so the next
      // migrate runs it a second time (here: `table C already exists`), and `undo` skips it.
      assert.deepEqual(await actions(ws), ["V1__a.sql:skip", "V2__b.sql:skip", "V3__c.sql:skip"]);
    });

    it("after undo, replacing V3 by a fixed V3 under a new name, undo refuses the fixed one", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      await ws.ok("undo");
      // Flyway's workflow: undo the bad version, delete it and its undo, write it again.
      await rm(join(ws.root, "main", "V3__c.sql"));
      await rm(join(ws.root, "main", "U3__c.sql"));
      await ws.file("V3__c_fixed.sql", "create table C (V int, W int);\n");
      await ws.ok();
      const run = await ws.run("undo", "--json");
      // Fails: exit 0, and V2 is undone below the applied V3__c_fixed.sql (read `undone` by the
      // stale U3__c.sql record), where the plan should stop, naming V3__c_fixed.sql.
      assert.equal(run.code, 1, run.out);
      assert.equal(run.report!.error?.file, "V3__c_fixed.sql");
      assert.equal(await ws.count("B"), 0, "V2 not undone");
    });

    it("undo --target counts every applied version above it, not only V-named files", async () => {
      const ws = await workspace();
      await ws.file("V1__a.sql", "create table A (V int);\n");
      await ws.file("002_b.sql", "create table B (V int);\n");
      await ws.file("V3__c.sql", "create table C (V int);\n");
      await ws.file("U3__c.sql", "drop table C;\n");
      await ws.file("004_d.sql", "create table D (V int);\n");
      await ws.ok();
      const run = await ws.run("undo", "--target", "1", "--json");
      // Fails: exit 0, V3 undone, 002_b.sql and 004_d.sql (versions 2 and 4, applied, no undo)
      // left applied; the whole plan should have been refused, naming 004_d.sql.
      assert.equal(run.code, 1, run.out);
      assert.equal(await ws.count("C"), 0, "nothing undone");
    });

    it("one migrate applies an undone version again after its file was renamed", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      await ws.ok("undo");
      await rename(join(ws.root, "main", "V3__c.sql"), join(ws.root, "main", "V3__cc.sql"));
      await ws.ok();
      // Fails: the run only moves the undone record (`renamed`), reports success, and C is
      // still missing until a second migrate.
      assert.equal(await ws.count("C"), 0);
    });

    it("a plan refused on one connection undoes nothing on the others", async () => {
      const ws = await workspace();
      // A second database of the same kind: this runtime may have no SQLite.
      const other = await createDatabase(
        kind,
        join(ws.root, "..", "other"),
        `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`,
      );
      try {
        const credentials = kind === "sqlite"
          ? ""
          : `    username: ${DB_USER}\n    password: \${THAW_TEST_DB_PASSWORD}\n`;
        await writeFile(
          join(ws.configDir, "application.yml"),
          `datasource:\n${ws.datasource("main")}    migrations:\n      enabled: true\n` +
            `  - name: other\n    url: ${other.url}\n${credentials}    migrations:\n` +
            `      enabled: true\n`,
        );
        await threeVersions(ws);
        await mkdir(join(ws.root, "other"));
        await writeFile(join(ws.root, "other", "V1__a.sql"), "create table A (V int);\n");
        await writeFile(join(ws.root, "other", "V2__b.sql"), "create table B (V int);\n");
        await ws.ok();
        const run = await ws.run("undo", "--target", "1", "--json");
        assert.equal(run.code, 1, run.out);
        // `other` refuses V2__b.sql (no undo file) before `main` undoes anything.
        assert.deepEqual(await recorded(ws), ["V1__a.sql", "V2__b.sql", "V3__c.sql"]);
      } finally {
        await other.close();
      }
    });
  });
}
