// Flyway's callbacks on each database: the events in order, inside the file's transaction where
// there is one, never recorded; and a Flyway folder copied as it is runs as under Flyway.
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

const FLYWAY_SAMPLE = fileURLToPath(new URL("../../fixtures/flyway_sample/", import.meta.url));

// Appends `event` to the log table, in the order the callbacks run.
const log = (event: string) =>
  `insert into CALLBACK_LOG (SEQ, EVENT) select count(*), '${event}' from CALLBACK_LOG;\n`;
const CREATE_LOG =
  "create table if not exists CALLBACK_LOG (SEQ int not null, EVENT varchar(80) not null);\n";

async function events(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query("select EVENT from CALLBACK_LOG order by SEQ");
  return rows.map((r) => String(r.EVENT ?? r.event));
}

async function recorded(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query(
    "SELECT migration_path FROM framework_migrations ORDER BY migration_path",
  );
  return rows.map((r) => String(r.migration_path));
}

async function flywayCompatible(ws: SqlWorkspace): Promise<void> {
  await writeFile(
    join(ws.configDir, "application.yml"),
    `datasource:\n${ws.datasource("main")}    migrations:\n      enabled: true\n` +
      "      flyway_compatible: true\n",
  );
}

for (const kind of KINDS) {
  describe(`callbacks on ${kind}`, () => {
    const workspace = workspaces(kind);
    const transactional = kind !== "mysql";

    it("runs Flyway's events in order around two files, on every migrate, never recorded", async () => {
      const ws = await workspace();
      await ws.file("beforeMigrate.sql", CREATE_LOG + log("beforeMigrate"));
      await ws.file("beforeEachMigrate.sql", log("beforeEachMigrate"));
      // In code: the file it surrounds is in the same transaction, and sees its table.
      await ws.file(
        "callbacks/afterEachMigrate.js",
        "export default async (ctx) => {\n" +
          '  await ctx.query("insert into CALLBACK_LOG (SEQ, EVENT) select count(*), ' +
          "'afterEachMigrate' from CALLBACK_LOG\");\n};\n",
      );
      await ws.file("afterMigrate.sql", log("afterMigrate"));
      await ws.file("V1__a.sql", "create table A (V int);\n" + log("V1"));
      await ws.file("V2__b.sql", "create table B (V int);\n" + log("V2"));
      const first = await ws.ok("--json");
      assert.deepEqual(await events(ws), [
        "beforeMigrate",
        "beforeEachMigrate",
        "V1",
        "afterEachMigrate",
        "beforeEachMigrate",
        "V2",
        "afterEachMigrate",
        "afterMigrate",
      ]);
      assert.deepEqual(await recorded(ws), ["V1__a.sql", "V2__b.sql"]);
      assert.deepEqual(
        first.report!.connections[0].callbacks!.map((c) => [c.path, c.event, c.runs]),
        [
          ["beforeMigrate.sql", "beforeMigrate", 1],
          ["beforeEachMigrate.sql", "beforeEachMigrate", 2],
          ["callbacks/afterEachMigrate.js", "afterEachMigrate", 2],
          ["afterMigrate.sql", "afterMigrate", 1],
        ],
      );
      // Nothing pending: beforeMigrate and afterMigrate run again, and nothing is recorded.
      const second = await ws.ok();
      assert.match(
        second.out + second.err,
        /callback beforeMigrate\.sql \(beforeMigrate, \d+ ms\)/,
      );
      assert.deepEqual((await events(ws)).slice(8), ["beforeMigrate", "afterMigrate"]);
      assert.deepEqual(await recorded(ws), ["V1__a.sql", "V2__b.sql"]);
      // status and a dry run list them apart, and run none.
      const status = await ws.ok("status");
      assert.match(status.out, /callback +beforeMigrate\.sql \(beforeMigrate\)/);
      assert.match(status.out, /callback +callbacks\/afterEachMigrate\.js \(afterEachMigrate\)/);
      await ws.ok("--dry-run");
      assert.equal((await events(ws)).length, 10);
    });

    it("a failing afterEachMigrate stops the run naming it; the file is rolled back where it can be", async () => {
      const ws = await workspace();
      await ws.file("V1__a.sql", "create table A (V int);\ninsert into A (V) values (1);\n");
      await ws.file("afterEachMigrate.sql", "select 1;\ninsert into NO_SUCH_TABLE values (1);\n");
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out + run.err);
      const error = run.report!.error!;
      assert.equal(error.file, "afterEachMigrate.sql");
      assert.equal(error.callback, "afterEachMigrate");
      assert.equal(error.line, 2);
      assert.match(error.message, /callback afterEachMigrate\.sql:2 \(afterEachMigrate\)/);
      // The report says of the file what its record says.
      const [v1] = run.report!.connections[0].files;
      assert.equal(v1.path, "V1__a.sql");
      assert.equal(v1.result, transactional ? "failed" : "applied");
      if (transactional) {
        assert.match(error.message, /V1__a\.sql was rolled back with it, and is not recorded/);
        assert.equal(await ws.count("A"), undefined);
        assert.deepEqual(await recorded(ws).catch(() => []), []);
      } else {
        assert.match(error.message, /V1__a\.sql ran and is recorded/);
        assert.equal(await ws.count("A"), 1);
        assert.deepEqual(await recorded(ws), ["V1__a.sql"]);
      }
    });

    it("afterMigrateError runs when a file fails; the file's failure is the one reported", async () => {
      const ws = await workspace();
      await ws.file("beforeMigrate.sql", CREATE_LOG);
      await ws.file("afterMigrateError.sql", log("afterMigrateError"));
      await ws.file("afterMigrate.sql", log("afterMigrate"));
      await ws.file("V1__bad.sql", "insert into NO_SUCH_TABLE values (1);\n");
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      assert.equal(run.report!.error!.file, "V1__bad.sql");
      assert.equal(run.report!.error!.callback, undefined);
      assert.deepEqual(await events(ws), ["afterMigrateError"]);
    });

    it("a Flyway folder copied as it is runs as under Flyway", async () => {
      const ws = await workspace();
      await flywayCompatible(ws);
      for (const name of await readdir(FLYWAY_SAMPLE)) {
        await ws.file(name, await readFile(join(FLYWAY_SAMPLE, name)));
      }
      const status = await ws.ok("status");
      assert.match(status.out, /pending +V1__Create_person_table\.sql/);
      assert.match(status.out, /callback +beforeMigrate\.sql \(beforeMigrate\)/);
      assert.doesNotMatch(status.out, /pending +beforeMigrate\.sql/);
      const run = await ws.ok("--json");
      assert.deepEqual(
        run.report!.connections[0].files.map((f) => [f.path, f.action]),
        [
          ["V1__Create_person_table.sql", "apply"],
          ["V2__Add_people.sql", "apply"],
          ["R__Person_view.sql", "apply"],
        ],
      );
      assert.deepEqual(await events(ws), [
        "beforeMigrate",
        "beforeEachMigrate",
        "beforeEachMigrate",
        "beforeEachMigrate",
        "afterMigrate",
      ]);
      assert.equal(await ws.count("PERSON_NAMES"), 3);
      assert.deepEqual(await recorded(ws), [
        "R__Person_view.sql",
        "V1__Create_person_table.sql",
        "V2__Add_people.sql",
      ]);
    });
  });
}
