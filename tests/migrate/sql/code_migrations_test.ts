import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

// The line of `throw` in FILL (1-based): errors must name it.
const FILL = `type Ctx = {
  kind: string;
  query(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
};
export default async (ctx: Ctx): Promise<void> => {
  const p = ctx.kind === "postgres" ? "$1" : "?";
  await ctx.query(\`INSERT INTO items (v) VALUES (\${p})\`, [1]);
  await ctx.query(\`INSERT INTO items (v) VALUES (\${p})\`, [2]);
  throw new Error("no third item");
};
`;
const THROW_LINE = 9;

const TABLE = "CREATE TABLE items (v INT NOT NULL);\n";

async function recorded(ws: SqlWorkspace): Promise<string[]> {
  const rows = await ws.query(
    "SELECT migration_path FROM framework_migrations ORDER BY migration_path",
  );
  return rows.map((r) => String(r.migration_path));
}

for (const kind of KINDS) {
  describe(`migrations in code on ${kind}`, () => {
    const workspace = workspaces(kind);
    const transactional = kind !== "mysql";

    it("a file that inserts rows and then throws names its line, and is not recorded", async () => {
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      await ws.file("V2__fill.ts", FILL);
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out + run.err);
      const error = run.report!.error!;
      assert.equal(error.file, "V2__fill.ts");
      assert.equal(error.line, THROW_LINE, error.message);
      assert.match(error.message, /file V2__fill\.ts:9: no third item/);
      assert.deepEqual(await recorded(ws), ["V1__items.sql"]);
      if (transactional) {
        // The rows went with the transaction the record would have been written in.
        assert.equal(await ws.count("items"), 0);
      } else {
        assert.equal(await ws.count("items"), 2);
        assert.match(error.message, /what ran of it may have been committed/);
        assert.match(error.message, /V2__fill\.ts is not recorded/);
      }
    });

    it("runs once, is skipped on the next run, and an edit is reported as changed", async () => {
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      await ws.file("V2__fill.ts", FILL.replace('throw new Error("no third item")', "return"));
      const first = await ws.ok("--json");
      const file = first.report!.connections[0].files[1];
      assert.deepEqual([file.path, file.action, file.result, file.code], [
        "V2__fill.ts",
        "apply",
        "applied",
        true,
      ]);
      assert.equal(await ws.count("items"), 2);
      const second = await ws.ok("--json");
      assert.equal(second.report!.connections[0].files[1].action, "skip");
      assert.equal(await ws.count("items"), 2);
      assert.deepEqual(await recorded(ws), ["V1__items.sql", "V2__fill.ts"]);
      // Line ends and a final newline are no change; a changed statement is.
      await ws.file(
        "V2__fill.ts",
        FILL.replace('throw new Error("no third item")', "return").replaceAll("\n", "\r\n") +
          "\r\n",
      );
      assert.equal((await ws.ok("--json")).report!.connections[0].files[1].action, "skip");
      await ws.file("V2__fill.ts", FILL.replace('throw new Error("no third item")', "return 1"));
      const status = await ws.ok("status", "--json");
      assert.equal(status.report!.connections[0].files[1].action, "changed");
      assert.equal((await ws.run("validate")).code, 1);
      assert.equal(await ws.count("items"), 2);
    });

    it("a repeatable file in code runs again when it changes", async () => {
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      const refill = (n: number) =>
        `export default async (ctx) => {\n  await ctx.query("DELETE FROM items");\n` +
        `  await ctx.query("INSERT INTO items (v) VALUES (${n})");\n};\n`;
      await ws.file("R__refill.js", refill(1));
      await ws.ok();
      await ws.ok();
      assert.deepEqual((await ws.query("SELECT v FROM items")).map((r) => Number(r.v)), [1]);
      await ws.file("R__refill.js", refill(7));
      const again = await ws.ok("--json");
      assert.equal(again.report!.connections[0].files[1].action, "reapply");
      assert.deepEqual((await ws.query("SELECT v FROM items")).map((r) => Number(r.v)), [7]);
    });

    it("a failed query names the line of the call and the database's code", async () => {
      const ws = await workspace();
      await ws.file(
        "V1__bad.js",
        'export default async (ctx) => {\n  await ctx.query("SELECT 1");\n' +
          '  await ctx.query("SELECT * FROM no_such_table");\n};\n',
      );
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      const error = run.report!.error!;
      assert.equal(error.line, 3, error.message);
      assert.match(error.message, /no_such_table/);
      const code = { sqlite: undefined, postgres: "42P01", mysql: "ER_NO_SUCH_TABLE" }[kind];
      assert.equal(error.code, code);
    });

    it("a dry run lists the file as code and runs none of it, top-level code included", async () => {
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      await ws.file("V2__fill.js", 'throw new Error("imported");\nexport default () => {};\n');
      const dry = await ws.ok("--dry-run");
      assert.match(dry.out, /apply\s+V2__fill\.js \(would run code\)/);
      const status = await ws.ok("status");
      assert.match(status.out, /pending\s+V2__fill\.js \(code\)/);
      assert.equal(await ws.count("items"), undefined);
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      assert.equal(run.report!.error!.file, "V2__fill.js");
      assert.equal(run.report!.error!.line, 1, run.report!.error!.message);
      assert.match(run.report!.error!.message, /could not be imported: Error: imported/);
    });

    it("gives the datasource, placeholders and a log that masks their values", async () => {
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      await ws.file(
        "V2__log.js",
        "export default (ctx) => {\n" +
          "  ctx.log(`${ctx.connection} ${ctx.path} ${ctx.kind} token=${ctx.placeholders.token}`);\n" +
          '  if (!(ctx.signal instanceof AbortSignal)) throw new Error("no signal");\n};\n',
      );
      const { writeFile } = await import("node:fs/promises");
      const { join } = await import("node:path");
      await writeFile(
        join(ws.configDir, "application.yml"),
        `datasource:\n${ws.datasource("main")}    migrations:\n      enabled: true\n` +
          "      placeholders:\n        token: s3cr3t-value\n",
      );
      const run = await ws.ok();
      assert.match(
        run.out + run.err,
        new RegExp(`main {3}main V2__log\\.js ${kind} token=\\$\\{token\\}`),
      );
      assert.doesNotMatch(run.out + run.err, /s3cr3t-value/);
    });

    it("a query the code did not await before it returned is refused, not run after it", async () => {
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      // Kept for later: called once the file committed, it would run outside its transaction.
      await ws.file(
        "V2__late.js",
        "export default (ctx) => { globalThis.thawLateQuery = ctx.query; };\n",
      );
      await ws.ok();
      const late = (globalThis as { thawLateQuery?: (text: string) => Promise<unknown> })
        .thawLateQuery!;
      delete (globalThis as { thawLateQuery?: unknown }).thawLateQuery;
      await assert.rejects(
        late("INSERT INTO items (v) VALUES (9)"),
        /ctx\.query was called after the migration returned: await every query/,
      );
      assert.equal(await ws.count("items"), 0);
    });

    it("ctx.query takes one statement, and leaves the runner's transaction alone", async () => {
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      await ws.file(
        "V2__many.js",
        "export default async (ctx) => {\n" +
          '  await ctx.query("INSERT INTO items (v) VALUES (1)");\n' +
          '  try { await ctx.query("COMMIT"); } catch (e) { ctx.log(`refused: ${e.message}`); }\n' +
          '  await ctx.query("INSERT INTO items (v) VALUES (2); INSERT INTO items (v) VALUES (3)");\n' +
          "};\n",
      );
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      const error = run.report!.error!;
      assert.equal(error.file, "V2__many.js");
      assert.equal(error.line, 4, error.message);
      assert.match(error.message, /ctx\.query runs one statement, and this text holds 2/);
      assert.deepEqual(await recorded(ws), ["V1__items.sql"]);
      // Where the runner holds a transaction, COMMIT was refused, and the first row went with it.
      assert.equal(await ws.count("items"), transactional ? 0 : 1);
    });

    if (kind === "mysql") {
      it("a transaction the code left open is committed with it, before its record", async () => {
        const ws = await workspace();
        await ws.file("V1__items.sql", TABLE);
        await ws.file(
          "V2__open.js",
          "export default async (ctx) => {\n" +
            '  await ctx.query("START TRANSACTION");\n' +
            '  await ctx.query("INSERT INTO items (v) VALUES (1)");\n' +
            "};\n",
        );
        await ws.ok();
        assert.equal(await ws.count("items"), 1);
        assert.deepEqual(await recorded(ws), ["V1__items.sql", "V2__open.js"]);
      });
    }

    if (kind === "postgres") {
      it("a failed query the code caught fails the file, not the connection", async () => {
        const ws = await workspace();
        await ws.file("V1__items.sql", TABLE);
        await ws.file(
          "V2__caught.js",
          "export default async (ctx) => {\n" +
            '  await ctx.query("INSERT INTO items (v) VALUES (1)");\n' +
            '  try { await ctx.query("SELECT * FROM nowhere"); } catch { /* went on */ }\n' +
            "};\n",
        );
        const run = await ws.run("--json");
        assert.equal(run.code, 1);
        const error = run.report!.error!;
        assert.equal(error.file, "V2__caught.js");
        assert.match(error.message, /a query failed and the code went on .*aborts the transaction/);
        assert.deepEqual(await recorded(ws), ["V1__items.sql"]);
        assert.equal(await ws.count("items"), 0);
      });
    }

    it("a default export that is not a function fails the file, naming it", async () => {
      const ws = await workspace();
      await ws.file("V1__nothing.js", "export const up = () => {};\n");
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      assert.match(run.report!.error!.message, /V1__nothing\.js: its default export is missing/);
      assert.deepEqual(await recorded(ws).catch(() => []), []);
    });
  });
}

// A code file that inserts one row, says so, and ends only when the test writes to the runner's
// stdin: the runner running it holds the file's transaction (and, on PostgreSQL and MariaDB, the
// run's lock) exactly as long as the test wants.
const GATED = `import process from "node:process";

type Ctx = {
  kind: string;
  log(message: string): void;
  query(text: string, params?: unknown[]): Promise<unknown[]>;
};
export default async (ctx: Ctx): Promise<void> => {
  const p = ctx.kind === "postgres" ? "$1" : "?";
  await ctx.query(\`INSERT INTO items (v) VALUES (\${p})\`, [1]);
  ctx.log(\`inserted in \${process.pid}, waiting for the gate\`);
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.pause();
};
`;

for (const kind of KINDS) {
  describe(`migrations in code on ${kind}, two runners`, () => {
    const workspace = workspaces(kind);

    it("two processes racing on a code file: it runs once, one row, one record, both exit 0", async () => {
      const { startCli } = await import("../cli_process.ts");
      const ws = await workspace();
      await ws.file("V1__items.sql", TABLE);
      await ws.file("V2__one.ts", GATED);
      const args = ["-c", ws.configDir, "--sqlPath", ws.root, "--lock-timeout", "600"];
      const env = { THAW_TEST_DB_PASSWORD: ws.password };
      const first = startCli(args, env);
      let second: ReturnType<typeof startCli> | undefined;
      try {
        // The first is inside the code file, its row inserted and not committed.
        await first.printed(/main {3}inserted in \d+, waiting for the gate/);
        second = startCli(args, env);
        // The second read the records without V2 (it is pending for it too), and waits for the
        // run's lock (on SQLite, the write lock the first holds for its whole run).
        await second.printed(/note: main: waiting for the lock of /);
        first.child.stdin.end("go\n");
        assert.equal(await first.closed, 0, first.stderr());
      } finally {
        // Were the second to run the file too, it must not wait for a gate forever.
        second?.child.stdin.end("go\n");
        first.child.stdin.end();
      }
      const other = second!;
      assert.equal(await other.closed, 0, other.stderr());
      assert.doesNotMatch(other.stderr(), /inserted in/);
      assert.match(first.stdout(), /main: 2 applied, 0 unchanged/);
      assert.match(other.stdout(), /main: 0 applied, 2 unchanged/);
      assert.equal(await ws.count("items"), 1);
      assert.deepEqual(await recorded(ws), ["V1__items.sql", "V2__one.ts"]);
    });
  });
}
