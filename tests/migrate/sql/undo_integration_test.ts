// Undo on each database: applying to N, undoing to M and applying again is applying straight to N;
// two runners racing on undo undo each version once; a runner killed mid-undo leaves the version
// applied, for the next run to undo once.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { startCli } from "../cli_process.ts";
import { propertyOptions } from "../../property.ts";
import { type Kind, KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

// Appends `what` to the log table, in the order the files run.
const log = (what: string) =>
  `insert into RUN_LOG (SEQ, WHAT) select count(*), '${what}' from RUN_LOG;\n`;

async function logged(ws: SqlWorkspace): Promise<string[]> {
  return (await ws.query("select WHAT from RUN_LOG order by SEQ")).map((r) =>
    String(r.WHAT ?? r.what)
  );
}

async function recorded(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query(
    "SELECT migration_path FROM framework_migrations ORDER BY migration_path",
  );
  return rows.map((r) => String(r.migration_path));
}

// What the database holds beside the records: its tables, columns and indexes, by name.
const SCHEMA: Record<Kind, string[]> = {
  sqlite: [
    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
  ],
  postgres: [
    "SELECT table_name, column_name, data_type FROM information_schema.columns " +
    "WHERE table_schema = current_schema() ORDER BY 1, 2",
    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1",
  ],
  mysql: [
    "SELECT table_name, column_name, data_type FROM information_schema.columns " +
    "WHERE table_schema = DATABASE() ORDER BY 1, 2",
    "SELECT table_name, index_name, column_name FROM information_schema.statistics " +
    "WHERE table_schema = DATABASE() ORDER BY 1, 2, 3",
  ],
};

async function schema(ws: SqlWorkspace, kind: Kind): Promise<string[]> {
  const rows = [];
  for (const sql of SCHEMA[kind]) {
    rows.push(...(await ws.query(sql)).map((r) => Object.values(r).map(String).join(" ")));
  }
  return rows;
}

// V1..V3, with undo files for V2 and V3 only.
async function threeVersions(ws: SqlWorkspace): Promise<void> {
  await ws.file("V1__log.sql", "create table RUN_LOG (SEQ int not null, WHAT text);\n" + log("V1"));
  await ws.file("V2__b.sql", "create table B (V int);\n" + log("V2"));
  await ws.file("V3__c.sql", "create table C (V int);\n" + log("V3"));
  await ws.file("U2__b.sql", "drop table B;\n" + log("U2"));
  await ws.file("U3__c.sql", "drop table C;\n" + log("U3"));
}

for (const kind of KINDS) {
  describe(`undo on ${kind}, as a property and under two runners`, () => {
    const workspace = workspaces(kind);

    it("property: apply to N, undo to M, apply again is applying straight to N", async () => {
      const versions = 4;
      const setUp = async (ws: SqlWorkspace) => {
        for (let v = 1; v <= versions; v++) {
          await ws.file(
            `V${v}__t${v}.sql`,
            `create table T${v} (V int);\ncreate index I${v} on T${v} (V);\n`,
          );
          // The index goes with its table, on every database.
          await ws.file(`U${v}__t${v}.sql`, `drop table T${v};\n`);
        }
      };
      const records = async (ws: SqlWorkspace) =>
        (await ws.query(
          "SELECT migration_path, content_hash FROM framework_migrations ORDER BY migration_path",
        )).map((r) => `${r.migration_path} ${r.content_hash}`);
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: versions }).chain((n) =>
            fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }))
          ),
          async ([n, m]) => {
            const straight = await workspace();
            await setUp(straight);
            await straight.ok("--target", String(n));
            const round = await workspace();
            await setUp(round);
            await round.ok("--target", String(n));
            await round.ok("undo", "--target", String(m));
            await round.ok("--target", String(n));
            assert.deepEqual(await schema(round, kind), await schema(straight, kind));
            assert.deepEqual(await records(round), await records(straight));
          },
        ),
        propertyOptions(kind === "sqlite" ? 8 : 4),
      );
    });

    it("two runners racing on undo undo each version once", async () => {
      const ws = await workspace();
      await threeVersions(ws);
      await ws.ok();
      const [a, b] = await Promise.all([
        ws.run("undo", "--target", "1", "--json"),
        ws.run("undo", "--target", "1", "--json"),
      ]);
      assert.equal(a.code, 0, a.out);
      assert.equal(b.code, 0, b.out);
      assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3", "U2"]);
      assert.deepEqual(await recorded(ws), [
        "U2__b.sql",
        "U3__c.sql",
        "V1__log.sql",
        "V2__b.sql",
        "V3__c.sql",
      ]);
      // Between them, each version was undone once; the other saw it undone.
      const undone = [a, b].flatMap((r) =>
        r.report!.connections[0].files.filter((f) => f.result === "undone" && f.action === "undo")
          .map((f) => f.path)
      );
      assert.deepEqual(undone.sort(), ["V2__b.sql", "V3__c.sql"]);
    });

    if (kind === "postgres") {
      it("a plain undo that waited for a racing one undoes nothing more than it planned", async () => {
        const ws = await workspace();
        await threeVersions(ws);
        await ws.ok();
        // U3 waits on a gate the test holds: the first undo holds the lock while the second
        // plans V3 too and waits for it.
        await ws.query("SELECT pg_advisory_lock(4244)");
        await ws.file(
          "U3__c.sql",
          "SELECT pg_advisory_xact_lock(4244);\ndrop table C;\n" + log("U3"),
        );
        const env = { THAW_TEST_DB_PASSWORD: ws.password };
        const args = ["-c", ws.configDir, "--sqlPath", ws.root, "undo"];
        const first = startCli(args, env);
        const second = startCli(args, env);
        try {
          await Promise.race([
            first.printed(/waiting for the lock/),
            second.printed(/waiting for the lock/),
          ]);
        } finally {
          await ws.query("SELECT pg_advisory_unlock(4244)");
        }
        assert.equal(await first.closed, 0, first.stderr());
        assert.equal(await second.closed, 0, second.stderr());
        // V3 undone once; V2, which neither planned, still applied.
        assert.deepEqual(await logged(ws), ["V1", "V2", "V3", "U3"]);
        assert.equal(await ws.count("B"), 0);
      });
    }

    // MariaDB commits DDL as it runs: a killed undo there has dropped what it dropped, and the
    // next undo stops on it, as a killed migrate does (sql-migrations.md).
    if (kind === "mysql") return;

    it("a runner killed mid-undo: nothing undone; the next run undoes it once", async () => {
      const ws = await workspace();
      const reached = join(ws.root, "..", "reached");
      const hang = join(ws.root, "..", "hang");
      await ws.file("V1__log.sql", "create table RUN_LOG (SEQ int not null, WHAT text);\n");
      await ws.file("V2__b.sql", "create table B (V int);\n");
      // Drops B, says so, then waits forever while `hang` exists: killed inside its transaction.
      await ws.file(
        "U2__b.js",
        `import { existsSync, writeFileSync } from "node:fs";\n` +
          `export default async (ctx) => {\n` +
          `  await ctx.query("drop table B");\n` +
          `  await ctx.query("insert into RUN_LOG (SEQ, WHAT) values (0, 'U2')");\n` +
          `  writeFileSync(${JSON.stringify(reached)}, "");\n` +
          `  if (existsSync(${JSON.stringify(hang)})) await new Promise(() => {});\n` +
          `};\n`,
      );
      await ws.ok();
      await writeFile(hang, "");
      const runner = startCli(
        ["-c", ws.configDir, "--sqlPath", ws.root, "undo", "--json"],
        { THAW_TEST_DB_PASSWORD: ws.password },
      );
      try {
        await Promise.race([
          (async () => {
            while (!existsSync(reached)) await new Promise((r) => setTimeout(r, 20));
          })(),
          runner.closed,
        ]);
        assert.ok(existsSync(reached), `ended before the undo ran:\n${runner.stderr()}`);
        runner.signal("SIGKILL");
        await runner.closed;
      } finally {
        // A runner left running by a failed assertion must not outlive the test.
        if (runner.child.exitCode === null && runner.child.signalCode === null) {
          runner.signal("SIGKILL");
        }
      }
      // Its transaction died with it: B is there, V2 applied, no undo record.
      assert.equal(await ws.count("B"), 0);
      assert.deepEqual(await recorded(ws), ["V1__log.sql", "V2__b.sql"]);
      const status = await ws.ok("status", "--json");
      assert.deepEqual(status.report!.connections[0].files.map((f) => f.action), ["skip", "skip"]);
      await rm(hang);
      await ws.ok("undo");
      assert.deepEqual(await logged(ws), ["U2"]);
      assert.equal(await ws.count("B"), undefined);
      assert.deepEqual(await recorded(ws), ["U2__b.js", "V1__log.sql", "V2__b.sql"]);
    });
  });
}
