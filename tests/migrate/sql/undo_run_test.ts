// Flyway's undo through the command line on SQLite (the default): U files beside their V files,
// the plan checked whole before anything runs, undone versions kept as history and applied again.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { KINDS, type SqlWorkspace, workspaces } from "./databases.ts";
import { migrate } from "../../../migrate.ts";

// Appends `what` to the log table, in the order the files run.
const log = (what: string) =>
  `insert into RUN_LOG (SEQ, WHAT) select count(*), '${what}' from RUN_LOG;\n`;

async function logged(ws: SqlWorkspace): Promise<string[]> {
  return (await ws.query("select WHAT from RUN_LOG order by SEQ")).map((r) => String(r.WHAT));
}

async function recorded(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query(
    "SELECT migration_path FROM framework_migrations ORDER BY migration_path",
  );
  return rows.map((r) => String(r.migration_path));
}

async function tables(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' " +
      "ORDER BY name",
  );
  return rows.map((r) => String(r.name));
}

// V1..V3, with undo files for V2 and V3 only.
async function threeVersions(ws: SqlWorkspace): Promise<void> {
  await ws.file("V1__log.sql", "create table RUN_LOG (SEQ int not null, WHAT text);\n" + log("V1"));
  await ws.file("V2__b.sql", "create table B (V int);\n" + log("V2"));
  await ws.file("V3__c.sql", "create table C (V int);\n" + log("V3"));
  await ws.file("U2__b.sql", "drop table B;\n" + log("U2"));
  await ws.file("U3__c.sql", "drop table C;\n" + log("U3"));
}

// V1..V3, each with its undo file, V1 and V2 made by hand before Thaw ran (their tables exist,
// no record says so), then baselined at 2.
async function baselinedAt2(ws: SqlWorkspace): Promise<SqlWorkspace> {
  await ws.query("create table RUN_LOG (SEQ int not null, WHAT text)");
  await ws.query("create table B (V int)");
  await threeVersions(ws);
  await ws.file("U1__log.sql", "drop table RUN_LOG;\n");
  await ws.ok("baseline", "--version", "2");
  return ws;
}

// SQLite alone here: a Node without node:sqlite has none (KINDS leaves it out).
for (const kind of KINDS.filter((k) => k === "sqlite")) {
  describe(`undo on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("undoes above a target newest first; status shows undone; migrate applies them again", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      const undone = await ws.ok("undo", "--target", "1", "--json");
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3", "U2"]);
      assert.deepEqual(await tables(ws), ["RUN_LOG", "framework_migrations"]);
      assert.deepEqual(
        undone.report!.connections[0].files.map((f) => `${f.path}:${f.action}:${f.result ?? ""}`),
        ["V1__log.sql:skip:", "V2__b.sql:undo:undone", "V3__c.sql:undo:undone"],
      );
      // The versions' records stay as history, beside their undo records.
      assert.deepEqual(await recorded(ws), [
        "U2__b.sql",
        "U3__c.sql",
        "V1__log.sql",
        "V2__b.sql",
        "V3__c.sql",
      ]);
      const status = await ws.ok("status", "--json");
      assert.deepEqual(
        status.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
        ["V1__log.sql:skip", "V2__b.sql:undone", "V3__c.sql:undone"],
      );
      assert.match((await ws.ok("status")).out, /undone\s+V2__b\.sql/);
      const again = await ws.ok("--json");
      assert.equal(again.report!.connections[0].applied, 2);
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3", "U2", "V2", "V3"]);
      assert.deepEqual(await tables(ws), ["B", "C", "RUN_LOG", "framework_migrations"]);
      assert.deepEqual(await recorded(ws), ["V1__log.sql", "V2__b.sql", "V3__c.sql"]);
      assert.deepEqual(
        (await ws.ok("status", "--json")).report!.connections[0].files.map((f) => f.action),
        ["skip", "skip", "skip"],
      );
    });

    it("refuses a target below a version without an undo file before anything runs, naming it", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      const refused = await ws.run("undo", "--target", "0", "--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.kind, "plan");
      assert.equal(refused.report!.error!.file, "V1__log.sql");
      assert.match(refused.report!.error!.message, /V1__log\.sql.*no undo.*U1__log\.sql/);
      // Nothing undone: not V3, not V2.
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3"]);
      assert.deepEqual(await recorded(ws), ["V1__log.sql", "V2__b.sql", "V3__c.sql"]);
      const human = await ws.run("undo", "--target", "0");
      assert.equal(human.code, 1);
      assert.match(human.err + human.out, /V1__log\.sql/);
    });

    it("undoes the newest applied version alone; --dry-run undoes nothing", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      const dry = await ws.ok("undo", "--target", "1", "--dry-run", "--json");
      assert.equal(dry.report!.dryRun, true);
      assert.deepEqual(
        dry.report!.connections[0].files.map((f) => f.action),
        ["skip", "undo", "undo"],
      );
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3"]);
      await ws.ok("undo");
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3"]);
      await ws.ok("undo");
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3", "U2"]);
      // V1 is the newest applied version now, and has no undo.
      const third = await ws.run("undo");
      assert.equal(third.code, 1);
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3", "U2"]);
    });

    it("stops at the baseline, naming it: status shows the adopted versions as baselined", async () => {
      const ws = await baselinedAt2(await workspace());
      await ws.ok();
      assert.deepEqual(await logged(ws), ["V3"]);
      const status = await ws.ok("status", "--json");
      assert.deepEqual(
        status.report!.connections[0].files.map((f) => `${f.path}:${f.baselined ?? false}`),
        ["V1__log.sql:true", "V2__b.sql:true", "V3__c.sql:false"],
      );
      assert.match((await ws.ok("status")).out, /baselined\s+V2__b\.sql/);
      await ws.ok("undo");
      assert.deepEqual(await logged(ws), ["V3", "U3"]);
      // V2 is the newest applied version now, and the baseline's: undo stops, naming it.
      const refused = await ws.run("undo", "--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.kind, "plan");
      assert.equal(refused.report!.error!.file, "V2__b.sql");
      assert.match(refused.report!.error!.message, /baseline \(version 2/);
      // A target below the baseline is refused whole: nothing is undone.
      await ws.ok();
      const below = await ws.run("undo", "--target", "0", "--json");
      assert.equal(below.code, 1, below.out);
      assert.equal(below.report!.error!.file, "V2__b.sql");
      assert.deepEqual(await logged(ws), ["V3", "U3", "V3"]);
      assert.deepEqual(await tables(ws), ["B", "C", "RUN_LOG", "framework_migrations"]);
    });

    it("baseline --force marks a baseline written before markers existed, so undo stops there", async () => {
      const ws = await baselinedAt2(await workspace());
      // An earlier Thaw's baseline: the records of V1 and V2, and no marker.
      await ws.query("DELETE FROM framework_migrations WHERE migration_path LIKE '<<%'");
      await ws.ok("baseline", "--version", "2", "--force");
      await ws.ok();
      const status = await ws.ok("status", "--json");
      assert.deepEqual(
        status.report!.connections[0].files.map((f) => `${f.path}:${f.baselined ?? false}`),
        ["V1__log.sql:true", "V2__b.sql:true", "V3__c.sql:false"],
      );
      const refused = await ws.run("undo", "--count", "2", "--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.file, "V2__b.sql");
      assert.match(refused.report!.error!.message, /baseline \(version 2/);
      assert.deepEqual(await tables(ws), ["B", "C", "RUN_LOG", "framework_migrations"]);
    });

    it("an undo file edited after it ran is changed, as a V file is: validate fails, flyway_compatible refuses", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      await ws.ok("undo");
      // U3 ran; then someone edits it.
      await ws.file("U3__c.sql", "drop table C;\n" + log("U3, edited"));
      const status = await ws.ok("status", "--json");
      assert.deepEqual(
        status.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
        ["V1__log.sql:skip", "V2__b.sql:skip", "V3__c.sql:undone", "U3__c.sql:changed"],
      );
      const invalid = await ws.run("validate", "--json");
      assert.equal(invalid.code, 1, invalid.out);
      assert.equal(invalid.report!.error!.file, "U3__c.sql");
      await writeFile(
        join(ws.configDir, "application.yml"),
        `datasource:\n${ws.datasource("main")}    migrations:\n      enabled: true\n` +
          "      flyway_compatible: true\n",
      );
      const refused = await ws.run("--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.file, "U3__c.sql");
      assert.match(
        refused.report!.error!.message,
        /changed after it was applied.*flyway_compatible/,
      );
      // Recorded as it is, by repair: then migrate applies V3 again.
      await ws.ok("repair");
      await ws.ok();
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3", "V3"]);
    });

    it("an undo file of no version here stops migrate too, naming it", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.file("U4__d.sql", "drop table D;\n");
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      assert.equal(run.report!.error!.file, "U4__d.sql");
      assert.equal(await ws.count("RUN_LOG"), undefined, "nothing ran");
    });

    it("a failing undo file rolls back with nothing marked undone", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.file("U3__c.sql", "drop table C;\n" + log("U3") + "drop table NO_SUCH;\n");
      await ws.ok();
      const run = await ws.run("undo", "--json");
      assert.equal(run.code, 1);
      assert.equal(run.report!.error!.file, "U3__c.sql");
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3"]);
      assert.deepEqual(await tables(ws), ["B", "C", "RUN_LOG", "framework_migrations"]);
      assert.deepEqual(await recorded(ws), ["V1__log.sql", "V2__b.sql", "V3__c.sql"]);
    });

    it("a migration in code undoes itself by its down export, recorded as U<version>", async () => {
      const ws = await workspace();
      await ws.file("V1__log.sql", "create table RUN_LOG (SEQ int not null, WHAT text);\n");
      await ws.file(
        "V2__b.js",
        'export default async (ctx) => { await ctx.query("create table B (V int)"); };\n' +
          'export async function down(ctx) { await ctx.query("drop table B"); }\n',
      );
      await ws.ok();
      await ws.ok("undo");
      assert.deepEqual(await tables(ws), ["RUN_LOG", "framework_migrations"]);
      assert.deepEqual(await recorded(ws), ["U2__b.js", "V1__log.sql", "V2__b.js"]);
      assert.deepEqual(
        (await ws.ok("status", "--json")).report!.connections[0].files.map((f) => f.action),
        ["skip", "undone"],
      );
      await ws.ok();
      assert.deepEqual(await tables(ws), ["B", "RUN_LOG", "framework_migrations"]);
      assert.deepEqual(await recorded(ws), ["V1__log.sql", "V2__b.js"]);
    });

    it("refuses a migration in code without down before anything runs; status imports none", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.file(
        "V4__d.js",
        'export default async (ctx) => { await ctx.query("create table D (V int)"); };\n',
      );
      await ws.ok();
      // Its top-level code would throw now: only a run that undoes it imports it.
      await ws.file("V4__d.js", 'throw new Error("imported");\nexport default async () => {};\n');
      await ws.ok("repair");
      await ws.ok("status");
      const refused = await ws.run("undo", "--target", "1", "--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.kind, "plan");
      assert.equal(refused.report!.error!.file, "V4__d.js");
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3"]);
      await ws.file(
        "V4__d.js",
        'export default async (ctx) => { await ctx.query("create table D (V int)"); };\n',
      );
      await ws.ok("repair");
      const none = await ws.run("undo", "--json");
      assert.equal(none.report!.error!.file, "V4__d.js");
      assert.match(none.report!.error!.message, /export async function down\(context\).*U4__d/);
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3"]);
    });
  });
}

// SQLite alone, as above.
for (const kind of KINDS.filter((k) => k === "sqlite")) {
  describe(`undo --count and flyway_compatible's target on ${kind}`, () => {
    const workspace = workspaces(kind);

    // V1..V4, each with its undo file.
    async function fourVersions(ws: SqlWorkspace): Promise<void> {
      await ws.file(
        "V1__log.sql",
        "create table RUN_LOG (SEQ int not null, WHAT text);\n" + log("V1"),
      );
      await ws.file("U1__log.sql", "delete from RUN_LOG;\n");
      for (const n of [2, 3, 4]) {
        await ws.file(`V${n}__t.sql`, `create table T${n} (V int);\n` + log(`V${n}`));
        await ws.file(`U${n}__t.sql`, `drop table T${n};\n` + log(`U${n}`));
      }
    }

    it("undo --count 2 undoes the two newest applied versions; migrate() takes count too", async () => {
      const ws = await workspace();
      await fourVersions(ws);
      await ws.ok();
      const undone = await ws.ok("undo", "--count", "2", "--json");
      assert.deepEqual(
        undone.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
        ["V1__log.sql:skip", "V2__t.sql:skip", "V3__t.sql:undo", "V4__t.sql:undo"],
      );
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "V4", "U4", "U3"]);
      const report = await migrate({
        config: ws.configDir,
        migrations: ws.root,
        command: "undo",
        count: 1,
      });
      assert.equal(report.connections[0].files.filter((f) => f.result === "undone").length, 1);
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "V4", "U4", "U3", "U2"]);
    });

    it("under flyway_compatible, undo --target 2 undoes version 2 too, as Flyway's undo -target does", async () => {
      const ws = await workspace();
      await fourVersions(ws);
      await ws.ok();
      await writeFile(
        join(ws.configDir, "application.yml"),
        `datasource:\n${ws.datasource("main")}    migrations:\n      enabled: true\n` +
          "      flyway_compatible: true\n",
      );
      await ws.ok("undo", "--target", "2");
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "V4", "U4", "U3", "U2"]);
    });
  });
}
