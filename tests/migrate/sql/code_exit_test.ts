import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
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

// What a code file may start that outlives its call: a timer, a listener of ctx.signal, a
// promise nobody awaits. What they throw is thrown outside the file's awaited chain.
const LATER = [
  {
    name: "process.exit(0) from a timer",
    body: "await new Promise(() => setTimeout(() => process.exit(0), 0));",
    message: /called process\.exit\(0\)/,
  },
  {
    name: "process.exit(0) from a listener of ctx.signal",
    body: `ctx.signal.addEventListener("abort", () => process.exit(0));
  writeFileSync(STARTED, "");
  await new Promise(() => {});`,
    message: /called process\.exit\(0\)/,
    signalled: true,
  },
  {
    name: "a throw from a timer",
    body:
      'await new Promise(() => setTimeout(() => { throw new Error("thrown by a timer"); }, 0));',
    message: /thrown by a timer/,
  },
  {
    name: "a rejection nobody handles",
    body: 'void Promise.reject(new Error("rejected unhandled"));\n  await new Promise(() => {});',
    message: /rejected unhandled/,
  },
];

for (const kind of KINDS_HERE) {
  describe(`a code migration that fails outside its awaited chain on ${kind}`, () => {
    const workspace = workspaces(kind);

    for (const later of LATER) {
      it(`${later.name}: the file fails, is rolled back, the run reports it and exits 1`, async () => {
        const ws = await workspace();
        const started = join(ws.root, "..", "started");
        await ws.file("V1__table.sql", "CREATE TABLE items (v INT);\n");
        await ws.file(
          "V2__later.js",
          `import { writeFileSync } from "node:fs";
import process from "node:process";
const STARTED = ${JSON.stringify(started)};
export default async (ctx) => {
  await ctx.query("CREATE TABLE half_done (x INT)");
  ${later.body}
};
`,
        );
        await ws.file("V3__after.sql", "CREATE TABLE later (v INT);\n");
        const runner = startCli(
          ["-c", ws.configDir, "--sqlPath", ws.root, "--json"],
          { THAW_TEST_DB_PASSWORD: ws.password },
        );
        try {
          if (later.signalled) {
            await Promise.race([until(() => existsSync(started)), runner.closed]);
            assert.ok(existsSync(started), `ended before the code ran:\n${runner.stderr()}`);
            runner.signal("SIGTERM");
          }
          assert.equal(await runner.closed, 1, runner.stdout() + runner.stderr());
        } finally {
          if (runner.child.exitCode === null) runner.signal("SIGKILL");
        }
        const report = JSON.parse(runner.stdout());
        checkReport(report);
        assert.equal(report.error.file, "V2__later.js");
        assert.match(report.error.message, later.message);
        assert.equal(await ws.count("half_done"), undefined);
        assert.equal(await ws.count("later"), undefined);
        const rows = await ws.query("SELECT migration_path FROM framework_migrations");
        assert.deepEqual(rows.map((r) => r.migration_path), ["V1__table.sql"]);
      });
    }
  });
}

for (const kind of KINDS_HERE) {
  describe(`a second signal while a code migration runs on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("ends the process at once with 130, as between files", async () => {
      const ws = await workspace();
      const started = join(ws.root, "..", "started");
      const aborted = join(ws.root, "..", "aborted");
      await ws.file(
        "V1__wait.js",
        `import { writeFileSync } from "node:fs";
export default async (ctx) => {
  ctx.signal.addEventListener("abort", () => writeFileSync(${JSON.stringify(aborted)}, ""));
  writeFileSync(${JSON.stringify(started)}, "");
  await new Promise(() => {});
};
`,
      );
      // A stop timeout far past the test's: only the second signal can end the run in time.
      const runner = startCli(
        ["-c", ws.configDir, "--sqlPath", ws.root, "--json", "--stop-timeout", "3600"],
        { THAW_TEST_DB_PASSWORD: ws.password },
      );
      try {
        await Promise.race([until(() => existsSync(started)), runner.closed]);
        assert.ok(existsSync(started), `ended before the code ran:\n${runner.stderr()}`);
        runner.signal("SIGTERM");
        await Promise.race([until(() => existsSync(aborted)), runner.closed]);
        assert.ok(existsSync(aborted), `ended at the first signal:\n${runner.stderr()}`);
        runner.signal("SIGTERM");
        assert.equal(await runner.closed, 130, runner.stdout() + runner.stderr());
        assert.doesNotMatch(runner.stdout() + runner.stderr(), /called process\.exit/);
      } finally {
        if (runner.child.exitCode === null) runner.signal("SIGKILL");
      }
    });
  });
}

/** Polls a condition of the outside world (a file written by the migration) until it holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 20));
}
