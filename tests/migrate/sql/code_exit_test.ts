import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startCli } from "../cli_process.ts";
import { checkReport } from "../report_shape.ts";
import { RUNTIME } from "../../runtime.ts";
import { KINDS, workspaces } from "./databases.ts";

// MariaDB runs a file in no transaction: what is left there is another matter (sql-migrations.md).
const KINDS_HERE = KINDS.filter((kind) => kind !== "mysql");

// How a code file could end the runner's process on this runtime.
const EXITS = RUNTIME === "deno" ? ["process.exit", "Deno.exit"] : ["process.exit"];

for (const kind of KINDS_HERE) {
  describe(`a code migration that ends the process on ${kind}`, () => {
    const workspace = workspaces(kind);

    for (const exit of EXITS) {
      it(`${exit}(0) is refused: the file fails, is rolled back, the run reports it and exits 1`, async () => {
        const ws = await workspace();
        await ws.file("V1__table.sql", "CREATE TABLE items (v INT);\n");
        await ws.file(
          "V2__exit.js",
          `import process from "node:process";
export default async (ctx) => {
  await ctx.query("CREATE TABLE half_done (x INT)");
  ${exit === "Deno.exit" ? "Deno" : "process"}.exit(0);
};
`,
        );
        await ws.file("V3__after.sql", "CREATE TABLE later (v INT);\n");
        const runner = startCli(
          ["-c", ws.configDir, "--sqlPath", ws.root, "--json"],
          { THAW_TEST_DB_PASSWORD: ws.password },
        );
        assert.equal(await runner.closed, 1, runner.stdout() + runner.stderr());
        const report = JSON.parse(runner.stdout());
        checkReport(report);
        assert.equal(report.error.kind, "failure");
        assert.equal(report.error.file, "V2__exit.js");
        assert.match(report.error.message, new RegExp(`called ${exit.replace(".", "\\.")}\\(0\\)`));
        assert.equal(await ws.count("half_done"), undefined);
        assert.equal(await ws.count("later"), undefined);
        const rows = await ws.query("SELECT migration_path FROM framework_migrations");
        assert.deepEqual(rows.map((r) => r.migration_path), ["V1__table.sql"]);
      });
    }
  });
}
