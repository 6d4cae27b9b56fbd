import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { VERSION } from "../../../src/version.ts";
import { KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

// Issue 17, point 5: a records table named with upper case letters is created and looked up
// under the same name, so a second run finds the records instead of creating the table again.
for (const kind of KINDS) {
  describe(`migrations.table with upper case on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("finds its records on the next run: nothing applied twice, no error", async () => {
      const ws = await workspace();
      await writeFile(
        join(ws.configDir, "application.yml"),
        `datasource:\n${ws.datasource("main")}    migrations:\n      enabled: true\n` +
          "      table: Audit_Migrations\n",
      );
      await ws.file("001.sql", "CREATE TABLE audited (v INT);\n");
      const first = await ws.ok("--json");
      assert.equal(first.report!.connections[0].applied, 1);
      const second = await ws.ok("--json");
      assert.equal(second.report!.connections[0].applied, 0);
      assert.equal(second.report!.connections[0].skipped, 1);
      const status = await ws.ok("status", "--json");
      assert.deepEqual(
        status.report!.connections[0].files.map((f) => [f.path, f.action]),
        [["001.sql", "skip"]],
      );
      const quoted = kind === "mysql" ? "`Audit_Migrations`" : '"Audit_Migrations"';
      const rows = await ws.query(`SELECT migration_path FROM ${quoted}`);
      assert.deepEqual(rows.map((r) => r.migration_path), ["001.sql"]);
    });
  });

  describe(`status of the records table on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("says when, by whom and with which runner version each file was applied", async () => {
      const ws = await workspace();
      await ws.file("001-init.sql", "CREATE TABLE shown (v INT);\n");
      await ws.file("002-later.sql", "CREATE TABLE later (v INT);\n");
      const before = Date.now();
      await ws.ok("--json", "--target", "1");
      const status = await ws.ok("status", "--json");
      const [applied, pending] = status.report!.connections[0].files;
      assert.equal(pending.applied, undefined);
      assert.deepEqual({ ...applied.applied, at: undefined }, {
        at: undefined,
        by: "tester@test",
        runnerVersion: VERSION,
      });
      const at = Date.parse(applied.applied!.at!);
      assert.ok(at >= before - 1000 && at <= Date.now() + 1000, applied.applied!.at);
      const rows = await ws.query("SELECT runner_version FROM framework_migrations");
      assert.deepEqual(rows.map((r) => r.runner_version), [VERSION]);
      const text = await ws.ok("status");
      const minute = applied.applied!.at!.slice(0, 16).replace("T", " ");
      assert.match(
        text.err + text.out,
        new RegExp(
          `\\n  applied      001-init\\.sql  ${minute} UTC by tester@test \\(thaw ${
            VERSION.replaceAll(".", "\\.")
          }\\)\\n  pending      002-later\\.sql\\n`,
        ),
      );
    });
  });
}

// A deploy user that may read and write rows, and change nothing else (tools/databases.sh makes
// it): a run needs no more, once the records table is there and up to date.
const WRITER = "thaw_writer";

for (const kind of KINDS.filter((k) => k !== "sqlite")) {
  describe(`a deploy user that may only write rows, on ${kind}`, () => {
    const workspace = workspaces(kind);
    const runAs = (ws: SqlWorkspace, user: string) =>
      writeFile(
        join(ws.configDir, "application.yml"),
        `datasource:\n  - name: main\n    url: ${ws.db.url}\n    username: ${user}\n` +
          "    password: ${THAW_TEST_DB_PASSWORD}\n    migrations:\n      enabled: true\n",
      );
    const table = (name: string) => kind === "mysql" ? `\`${name}\`` : `"${name}"`;

    it("runs files with the table made; an old table is refused naming the ALTER to run once", async () => {
      const ws = await workspace();
      await ws.file("001-items.sql", "CREATE TABLE items (v INT);\n");
      await ws.ok();
      if (kind === "postgres") {
        await ws.query(
          `GRANT SELECT, INSERT, UPDATE, DELETE ON framework_migrations, items TO ${WRITER}`,
        );
      }
      await runAs(ws, WRITER);
      await ws.file("002-one.sql", "INSERT INTO items VALUES (1);\n");
      const second = await ws.ok("--json");
      assert.equal(second.report!.connections[0].applied, 1);
      const status = await ws.ok("status", "--json");
      assert.equal(status.report!.connections[0].files[1].applied?.by, "tester@test");

      // A table an earlier version made, without runner_version: the writer may not add it.
      await ws.query(`ALTER TABLE ${table("framework_migrations")} DROP COLUMN runner_version`);
      await ws.file("003-two.sql", "INSERT INTO items VALUES (2);\n");
      const refused = await ws.run("--json");
      assert.equal(refused.code, 1, refused.out + refused.err);
      assert.equal(refused.report!.error!.kind, "failure");
      assert.equal(refused.report!.error!.connection, "main");
      assert.match(
        refused.report!.error!.message,
        /the records table "framework_migrations" needs the runner_version column .*: ALTER TABLE .framework_migrations. ADD COLUMN .*runner_version/,
      );
      assert.deepEqual((await ws.query("SELECT v FROM items")).map((r) => r.v), [1]);
      // Run once as the table's owner, as the message says: then the writer goes on.
      await runAs(ws, "thaw");
      await ws.file("003-two.sql", "INSERT INTO items VALUES (2);\n");
      const owner = await ws.ok("--json");
      assert.equal(owner.report!.connections[0].applied, 1);
      await runAs(ws, WRITER);
      await ws.file("004-three.sql", "INSERT INTO items VALUES (3);\n");
      assert.equal((await ws.ok("--json")).report!.connections[0].applied, 1);
      assert.deepEqual((await ws.query("SELECT v FROM items ORDER BY v")).map((r) => r.v), [
        1,
        2,
        3,
      ]);
    });
  });
}
