// Version order and out-of-order files, end to end: the search runner on the real OpenSearch
// node and the SQL runner on SQLite, PostgreSQL and MariaDB.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { os, Workspace } from "./search/cluster.ts";
import { KINDS, workspaces } from "./sql/databases.ts";

describe("version order on the search runner (real node)", () => {
  // Template names are the file names: the workspace id keeps them apart from other runs', and
  // patterns that do not overlap keep the node from refusing two templates of one priority.
  const template = (ws: Workspace, n: string) => ({ index_patterns: [`${ws.id}_${n}_*`] });

  it("runs release-1.9 before release-1.10, and 1.0 before 1.0.1", async () => {
    await using ws = await Workspace.create();
    for (
      const [i, release] of ["release-1.10", "release-1.9", "release-1.0.1", "release-1.0"]
        .entries()
    ) {
      await ws.file(`${release}/${ws.id}-${i}-template.json`, template(ws, String(i)));
    }
    const run = await ws.ok("--json");
    assert.deepEqual(run.report!.connections[0].files.map((f) => f.path.split("/")[0]), [
      "release-1.0",
      "release-1.0.1",
      "release-1.9",
      "release-1.10",
    ]);
  });

  it("applies a late file with a warning; --strict-order and strict_order refuse it, sending no write", async () => {
    await using ws = await Workspace.create();
    await ws.file(`2.0/${ws.id}-b-template.json`, template(ws, "b"));
    await ws.ok();
    await ws.file(`1.5/${ws.id}-a-template.json`, template(ws, "a"));

    const status = await ws.ok("status");
    assert.match(
      status.out,
      new RegExp(
        `out of order 1\\.5/${ws.id}-a-template\\.json \\(sorts before 2\\.0/${ws.id}-b-template\\.json, applied\\)`,
      ),
    );

    for (
      const [args, kind, said] of [
        [["--strict-order"], "plan", "-a-template\\.json: sorts before 2\\.0/"],
        [["validate", "--strict-order"], "invalid", "-a-template\\.json before 2\\.0/"],
      ] as const
    ) {
      const refused = await ws.run(...args, "--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.kind, kind);
      assert.match(
        refused.report!.error!.message,
        new RegExp(`${ws.id}${said}${ws.id}-b-template`),
      );
      const writes = refused.sent.filter((s) =>
        s.method !== "GET" && s.method !== "HEAD" && !s.path.includes("/_search")
      );
      assert.deepEqual(writes, []);
    }
    assert.equal((await os("GET", `/_index_template/${ws.id}-a`)).status, 404);

    await using strictWs = await Workspace.create({ migrations: "      strict_order: true\n" });
    await strictWs.file(`2.0/${strictWs.id}-b-template.json`, template(strictWs, "b"));
    await strictWs.ok();
    await strictWs.file(`1.5/${strictWs.id}-a-template.json`, template(strictWs, "a"));
    const bySetting = await strictWs.run("--json");
    assert.equal(bySetting.code, 1);
    assert.equal(bySetting.report!.error!.kind, "plan");
    assert.equal(bySetting.report!.connections[0].strictOrder, true);
    // --no-strict-order overrides the setting: applied, with the warning.
    const overridden = await strictWs.ok("--no-strict-order");
    assert.match(overridden.err, /sorts before .*, which is applied already/);
    assert.equal((await os("GET", `/_index_template/${strictWs.id}-a`)).status, 200);

    const applied = await ws.ok();
    assert.match(
      applied.err,
      new RegExp(
        `${ws.id}-a-template\\.json sorts before 2\\.0/${ws.id}-b-template\\.json, which is applied already`,
      ),
    );
    assert.equal((await os("GET", `/_index_template/${ws.id}-a`)).status, 200);
  });
});

for (const kind of KINDS) {
  describe(`version order on the SQL runner (${kind})`, () => {
    const workspace = workspaces(kind);

    it("runs V2 before V10; a late file is refused under strict order, else applied with a warning", async () => {
      const ws = await workspace();
      await ws.file("V10__b.sql", "CREATE TABLE v10 (id INT);\n");
      await ws.file("V2__a.sql", "CREATE TABLE v2 (id INT);\nINSERT INTO v2 VALUES (1);\n");
      const run = await ws.ok("--json");
      assert.deepEqual(run.report!.connections[0].files.map((f) => f.path), [
        "V2__a.sql",
        "V10__b.sql",
      ]);

      await ws.file("V3__late.sql", "CREATE TABLE v3 (id INT);\n");
      const refused = await ws.run("--strict-order");
      assert.equal(refused.code, 1, refused.out + refused.err);
      assert.match(
        refused.err,
        /V3__late\.sql: sorts before V10__b\.sql, which is applied already/,
      );
      assert.equal(await ws.count("v3"), undefined, "nothing ran");
      // Without strict order, validate lists the late file and passes.
      const listed = await ws.ok("validate");
      assert.match(listed.out, /out of order +V3__late\.sql \(sorts before V10__b\.sql, applied\)/);

      const applied = await ws.ok();
      assert.match(applied.err, /V3__late\.sql sorts before V10__b\.sql, which is applied already/);
      assert.equal(await ws.count("v3"), 0);
    });

    it("validate under strict order names a late file and a changed file of a later datasource", async () => {
      const ws = await workspace();
      await appendFile(
        join(ws.configDir, "application.yml"),
        ws.datasource("other") + "    migrations: { enabled: true, table: other_records }\n",
      );
      const other = join(ws.root, "other", "V1__o.sql");
      await mkdir(dirname(other), { recursive: true });
      await writeFile(other, "CREATE TABLE o1 (id INT);\n");
      await ws.file("V10__b.sql", "CREATE TABLE x10 (id INT);\n");
      await ws.ok();
      await ws.file("V3__late.sql", "CREATE TABLE x3 (id INT);\n");
      await writeFile(other, "CREATE TABLE o1 (id INT, changed INT);\n");
      const run = await ws.run("validate", "--strict-order", "--json");
      assert.equal(run.code, 1);
      assert.equal(run.report!.error!.kind, "invalid");
      assert.match(
        run.report!.error!.message,
        /run-once files were changed after they ran \(other: V1__o\.sql\)/,
      );
      assert.match(
        run.report!.error!.message,
        /out of order .*\(main: V3__late\.sql before V10__b\.sql\)/,
      );
      assert.deepEqual(run.report!.connections.map((c) => c.state), ["ran", "ran"]);
    });

    it("refuses a late file when the datasource sets migrations.strict_order", async () => {
      const ws = await workspace();
      await appendFile(join(ws.configDir, "application.yml"), "      strict_order: true\n");
      await ws.file("V10__b.sql", "CREATE TABLE w10 (id INT);\n");
      await ws.ok();
      await ws.file("V3__late.sql", "CREATE TABLE w3 (id INT);\n");
      const refused = await ws.run("--json");
      assert.equal(refused.code, 1);
      assert.equal(refused.report!.error!.kind, "plan");
      assert.equal(refused.report!.error!.file, "V3__late.sql");
      assert.equal(await ws.count("w3"), undefined);
      // The setting alone fails validate too, naming the file.
      const invalid = await ws.run("validate", "--json");
      assert.equal(invalid.code, 1);
      assert.equal(invalid.report!.error!.kind, "invalid");
      assert.equal(invalid.report!.error!.file, "V3__late.sql");
    });
  });
}
