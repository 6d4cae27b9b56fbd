// `migrations.flyway_compatible: true`, end to end: Flyway's defaults in one switch (strict order,
// and validate-on-migrate: an edited or missing applied file stops `migrate` before it writes
// anything) on the SQL runner (SQLite, PostgreSQL, MariaDB) and the search runner (real node).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { appendFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { os, Workspace } from "./search/cluster.ts";
import { KINDS, workspaces } from "./sql/databases.ts";

for (const kind of KINDS) {
  describe(`flyway_compatible on the SQL runner (${kind})`, () => {
    const workspace = workspaces(kind);
    const flyway = async (extra = "") => {
      const ws = await workspace();
      await appendFile(
        join(ws.configDir, "application.yml"),
        `      flyway_compatible: true\n${extra}`,
      );
      return ws;
    };

    it("refuses an edited applied file before running the pending ones; repair accepts it", async () => {
      const ws = await flyway();
      await ws.file("V1__a.sql", "CREATE TABLE fa (id INT);\n");
      await ws.ok();
      await ws.file("V1__a.sql", "CREATE TABLE fa (id INT, name VARCHAR(9));\n");
      await ws.file("V2__b.sql", "CREATE TABLE fb (id INT);\n");
      const refused = await ws.run("--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.kind, "plan");
      assert.equal(refused.report!.error!.file, "V1__a.sql");
      assert.match(refused.report!.error!.message, /changed after it was applied/);
      assert.match(refused.report!.error!.message, /flyway_compatible/);
      assert.equal(await ws.count("fb"), undefined, "V2 was not run");
      await ws.ok("repair");
      await ws.ok();
      assert.equal(await ws.count("fb"), 0);
    });

    it("refuses a late file and a missing one, but not a record newer than every file", async () => {
      const ws = await flyway();
      await ws.file("V1__a.sql", "CREATE TABLE ga (id INT);\n");
      await ws.file("V3__c.sql", "CREATE TABLE gc (id INT);\n");
      await ws.ok();
      await ws.file("V2__late.sql", "CREATE TABLE gb (id INT);\n");
      const late = await ws.run("--json");
      assert.equal(late.code, 1);
      assert.equal(late.report!.error!.file, "V2__late.sql");
      assert.equal(late.report!.connections[0].strictOrder, true);
      await rm(join(ws.root, "main", "V2__late.sql"));

      // A newer checkout's record (sorts after every file here) is Flyway's "future": no error.
      await rm(join(ws.root, "main", "V3__c.sql"));
      await ws.file("V0__first.sql", "SELECT 1;\n");
      const future = await ws.run("--json");
      assert.equal(future.code, 1, "V0 is late: strict order refuses it first");
      await rm(join(ws.root, "main", "V0__first.sql"));
      assert.equal((await ws.run("--json")).code, 0, "V3 missing after every file is no error");

      // A record that sorts among the files here is missing: refused.
      await ws.file("V4__d.sql", "CREATE TABLE gd (id INT);\n");
      const missing = await ws.run("--json");
      assert.equal(missing.code, 1, missing.out);
      assert.equal(missing.report!.error!.file, "V3__c.sql");
      assert.match(missing.report!.error!.message, /recorded as applied, but its file is gone/);
      assert.equal(await ws.count("gd"), undefined);
      const invalid = await ws.run("validate", "--json");
      assert.equal(invalid.code, 1);
      assert.equal(invalid.report!.error!.kind, "invalid");
      assert.equal(invalid.report!.error!.file, "V3__c.sql");
      assert.match(invalid.report!.error!.message, /under flyway_compatible, .*V3__c\.sql is rec/);
      // repair drops the record, as Flyway's does: then V4 runs.
      await ws.ok("repair");
      await ws.ok();
      assert.equal(await ws.count("gd"), 0);
    });

    it("refuses a deleted repeatable file, wherever its name sorts; repair drops its record", async () => {
      const ws = await flyway();
      await ws.file("V1__t.sql", "CREATE TABLE mt (id INT);\n");
      await ws.file("R__a.sql", "SELECT 1;\n");
      await ws.file("R__b.sql", "SELECT 2;\n");
      await ws.ok();
      await rm(join(ws.root, "main", "R__b.sql"));
      await ws.file("V2__u.sql", "CREATE TABLE mu (id INT);\n");
      const refused = await ws.run("--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.file, "R__b.sql");
      assert.match(refused.report!.error!.message, /recorded as applied, but its file is gone/);
      assert.equal(await ws.count("mu"), undefined, "V2 was not run");
      const repaired = await ws.ok("repair", "--json");
      assert.deepEqual(
        repaired.report!.connections[0].files.map((f) => [f.path, f.action]),
        [["V1__t.sql", "skip"], ["V2__u.sql", "apply"], ["R__a.sql", "skip"], ["R__b.sql", "drop"]],
      );
      await ws.ok();
      assert.equal(await ws.count("mu"), 0);
    });

    it("refuses an edited applied file above --target too: Flyway validates every applied one", async () => {
      const ws = await flyway();
      await ws.file("V1__a.sql", "CREATE TABLE ka (id INT);\n");
      await ws.file("V2__b.sql", "CREATE TABLE kb (id INT);\n");
      await ws.ok();
      await ws.file("V2__b.sql", "CREATE TABLE kb (id INT, name VARCHAR(9));\n");
      await ws.file("V1.5__c.sql", "CREATE TABLE kc (id INT);\n");
      const refused = await ws.run("--target", "1.5", "--no-strict-order", "--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.file, "V2__b.sql");
      assert.match(refused.report!.error!.message, /changed after it was applied/);
      assert.equal(await ws.count("kc"), undefined, "V1.5 was not run");
    });

    it("runs an edited repeatable file again, as Flyway does", async () => {
      const ws = await flyway();
      await ws.file("V1__t.sql", "CREATE TABLE ht (id INT);\n");
      await ws.file("R__v.sql", "CREATE VIEW hv AS SELECT id FROM ht;\n");
      await ws.ok();
      await ws.file("R__v.sql", "DROP VIEW hv;\nCREATE VIEW hv AS SELECT id, id AS two FROM ht;\n");
      const run = await ws.ok("--json");
      assert.deepEqual(
        run.report!.connections[0].files.map((f) => [f.path, f.action]),
        [["V1__t.sql", "skip"], ["R__v.sql", "reapply"]],
      );
    });

    it("takes a BOM or a final line end added to an applied file as no change, as Flyway does", async () => {
      const ws = await flyway();
      await ws.file("V1__a.sql", "CREATE TABLE na (id INT);");
      await ws.file("V2__b.sql", "CREATE TABLE nb (id INT);\n");
      await ws.ok();
      // V2's record as an earlier version wrote it: the SHA-256 of the bytes, BOM and final
      // line end included.
      const earlier = createHash("sha256").update("CREATE TABLE nb (id INT);\n").digest("hex");
      await ws.query(
        `UPDATE framework_migrations SET content_hash = '${earlier}' WHERE migration_path = 'V2__b.sql'`,
      );
      await ws.file("V1__a.sql", "\ufeffCREATE TABLE na (id INT);\r\n");
      await ws.file("V2__b.sql", "\ufeffCREATE TABLE nb (id INT);");
      await ws.file("V3__c.sql", "CREATE TABLE nc (id INT);\n");
      const run = await ws.ok("--json");
      assert.deepEqual(
        run.report!.connections[0].files.map((f) => [f.path, f.action]),
        [["V1__a.sql", "skip"], ["V2__b.sql", "skip"], ["V3__c.sql", "apply"]],
      );
      assert.equal(await ws.count("nc"), 0);
      // repair moves the earlier record to the checksum this version writes.
      const repaired = await ws.ok("repair", "--json");
      assert.deepEqual(
        repaired.report!.connections[0].files.map((f) => [f.path, f.action]),
        [["V1__a.sql", "skip"], ["V2__b.sql", "record"], ["V3__c.sql", "skip"]],
      );
      const rows = await ws.query(
        "SELECT content_hash FROM framework_migrations WHERE migration_path = 'V2__b.sql'",
      );
      assert.equal(
        rows[0].content_hash,
        createHash("sha256").update("CREATE TABLE nb (id INT);").digest("hex"),
      );
    });

    it("an explicit strict_order: false wins, as Flyway's outOfOrder does", async () => {
      const ws = await flyway("      strict_order: false\n");
      await ws.file("V2__b.sql", "CREATE TABLE jb (id INT);\n");
      await ws.ok();
      await ws.file("V1__a.sql", "CREATE TABLE ja (id INT);\n");
      const run = await ws.ok("--json");
      assert.equal(run.report!.connections[0].strictOrder, undefined);
      assert.equal(await ws.count("ja"), 0);
    });
  });
}

describe("flyway_compatible on the search runner (real node)", () => {
  it("refuses an edited applied template, which it would otherwise apply again", async () => {
    await using ws = await Workspace.create({ migrations: "      flyway_compatible: true\n" });
    const name = `${ws.id}-a`;
    await ws.file(`1/${name}-template.json`, { index_patterns: [`${ws.id}_a_*`] });
    await ws.ok();
    await ws.file(`1/${name}-template.json`, {
      index_patterns: [`${ws.id}_a_*`],
      priority: 7,
    });
    const refused = await ws.run("--json");
    assert.equal(refused.code, 1, refused.out);
    assert.equal(refused.report!.error!.kind, "plan");
    assert.match(refused.report!.error!.message, /changed after it was applied/);
    const writes = refused.sent.filter((s) =>
      s.method !== "GET" && s.method !== "HEAD" && !s.path.includes("/_search")
    );
    assert.deepEqual(writes, []);
    const live = await os("GET", `/_index_template/${name}`);
    const template = (live.body as { index_templates: { index_template: { priority?: number } }[] })
      .index_templates[0].index_template;
    assert.equal(template.priority, undefined, "the template is as the first run left it");
  });
});
