import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { migrate, MigrationRunError } from "../../../migrate.ts";
import { startCli } from "../cli_process.ts";
import { checkReport } from "../report_shape.ts";
import { KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

// SQLite needs a built-in node:sqlite; PostgreSQL keeps a socket open while the code waits, which
// on Node keeps the process alive where SQLite leaves nothing to wait on.
const KINDS_HERE = KINDS.filter((kind) => kind !== "mysql");

/** Polls a condition of the outside world (a file written by the migration) until it holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 20));
}

/** A code file that creates a table, says so by writing `marker`, then waits on what never comes. */
function hanging(marker: string): string {
  return `import { writeFileSync } from "node:fs";
export default async (ctx) => {
  await ctx.query("CREATE TABLE half_done (x INT)");
  writeFileSync(${JSON.stringify(marker)}, "");
  await new Promise(() => {});
};
`;
}

async function recorded(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query(
    "SELECT migration_path FROM framework_migrations ORDER BY migration_path",
  );
  return rows.map((r) => String(r.migration_path));
}

for (const kind of KINDS_HERE) {
  describe(`a code migration interrupted on ${kind}`, () => {
    const workspace = workspaces(kind);

    for (const where of ["migration", "afterMigrate callback"] as const) {
      it(`a ${where} that never settles: SIGTERM, --stop-timeout, rolled back, reported interrupted`, async () => {
        const ws = await workspace();
        const marker = join(ws.root, "..", "reached");
        await ws.file("V1__table.sql", "CREATE TABLE items (v INT);\n");
        await ws.file(where === "migration" ? "V2__hang.js" : "afterMigrate.js", hanging(marker));
        const runner = startCli(
          ["-c", ws.configDir, "--sqlPath", ws.root, "--json", "--stop-timeout", "1"],
          { THAW_TEST_DB_PASSWORD: ws.password },
        );
        try {
          // Inside the code, its table created and not committed; or the process ended first.
          await Promise.race([until(() => existsSync(marker)), runner.closed]);
          assert.ok(existsSync(marker), `ended before the code ran:\n${runner.stderr()}`);
          runner.signal("SIGTERM");
          assert.equal(await runner.closed, 1, runner.stderr());
        } finally {
          // A runner that ignored the signal must not outlive the test.
          if (runner.child.exitCode === null) runner.signal("SIGKILL");
        }
        const report = JSON.parse(runner.stdout());
        checkReport(report);
        assert.equal(report.error.kind, "interrupted", runner.stdout());
        assert.equal(report.error.file, where === "migration" ? "V2__hang.js" : "afterMigrate.js");
        assert.match(report.error.message, /did not stop within 1 s of the interruption/);
        // Rolled back: what the code did is gone, and the file is not recorded.
        assert.equal(await ws.count("half_done"), undefined);
        assert.deepEqual(await recorded(ws), ["V1__table.sql"]);
      });
    }

    it("a migration that honours ctx.signal is reported interrupted, not failed", async () => {
      const ws = await workspace();
      await ws.file(
        "V1__wait.js",
        `export default async (ctx) => {
  await ctx.query("CREATE TABLE half_done (x INT)");
  ctx.log("waiting for the signal");
  await new Promise((_, reject) => {
    const stop = () => reject(new Error("stopped at a safe point"));
    if (ctx.signal.aborted) stop();
    else ctx.signal.addEventListener("abort", stop);
  });
};
`,
      );
      const stop = new AbortController();
      const error = await migrate({
        config: ws.configDir,
        migrations: ws.root,
        env: { THAW_TEST_DB_PASSWORD: ws.password },
        signal: stop.signal,
        onProgress: (line) => {
          if (line.includes("waiting for the signal")) stop.abort();
        },
      }).then(() => undefined, (thrown: unknown) => thrown);
      assert.ok(error instanceof MigrationRunError, String(error));
      assert.equal(error.kind, "interrupted", error.message);
      assert.equal(error.file, "V1__wait.js");
      assert.match(error.message, /stopped at a safe point/);
      assert.equal(await ws.count("half_done"), undefined);
    });
  });
}
