import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type Kind, KINDS, workspaces } from "./databases.ts";
import { migrate, MigrationRunError } from "../../../migrate.ts";
import { startCli } from "../cli_process.ts";

// Per kind: the same behaviour on SQLite, PostgreSQL and MariaDB, against the real databases.
const ID_COLUMN: Record<Kind, string> = {
  sqlite: "id INTEGER PRIMARY KEY",
  postgres: "id SERIAL PRIMARY KEY",
  mysql: "id INT AUTO_INCREMENT PRIMARY KEY",
};
const SLEEP: Record<Kind, string> = {
  sqlite: "",
  postgres: "SELECT pg_sleep(1.5);",
  mysql: "SELECT SLEEP(1.5);",
};

for (const kind of KINDS) {
  describe(`SQL runner on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("applies files in path order, sub-folders included, and records each with its hash", async () => {
      const ws = await workspace();
      const users =
        `-- users\nCREATE TABLE users (${ID_COLUMN[kind]}, email VARCHAR(200) NOT NULL);\n` +
        `INSERT INTO users (email) VALUES ('a@example.com');\n`;
      await ws.file("001-users.sql", users);
      await ws.file("release-1/002-orders.sql", "CREATE TABLE orders (user_id INT);\n");
      await ws.file("release-1/notes.txt", "not a migration");
      const run = await ws.ok("--json");
      assert.deepEqual(run.report!.connections[0].files.map((f) => [f.path, f.result]), [
        ["001-users.sql", "applied"],
        ["release-1/002-orders.sql", "applied"],
      ]);
      assert.equal(await ws.count("users"), 1);
      assert.equal(await ws.count("orders"), 0);
      const records = await ws.query(
        "SELECT migration_path, content_hash, executed_at, executed_by, execution_ms " +
          "FROM framework_migrations ORDER BY id",
      );
      assert.deepEqual(records.map((r) => r.migration_path), [
        "001-users.sql",
        "release-1/002-orders.sql",
      ]);
      // The checksum leaves the final line end out.
      assert.equal(
        records[0].content_hash,
        createHash("sha256").update(users.slice(0, -1)).digest("hex"),
      );
      assert.equal(records[0].executed_by, "tester@test");
      assert.ok(Number(records[0].execution_ms) >= 0);
      const executedAt = new Date(
        String(
          records[0].executed_at instanceof Date
            ? records[0].executed_at.toISOString()
            : records[0].executed_at,
        ),
      );
      assert.ok(Math.abs(Date.now() - executedAt.getTime()) < 600_000, String(executedAt));
    });

    it("runs nothing on a re-run", async () => {
      const ws = await workspace();
      await ws.file(
        "001.sql",
        `CREATE TABLE log (v VARCHAR(10));\nINSERT INTO log VALUES ('x');\n`,
      );
      await ws.ok();
      const again = await ws.ok("--json");
      assert.equal(again.report!.connections[0].applied, 0);
      assert.equal(again.report!.connections[0].skipped, 1);
      assert.equal(await ws.count("log"), 1);
    });

    it("does not re-run a changed file: a warning, changed in status, validate fails", async () => {
      const ws = await workspace();
      await ws.file(
        "001.sql",
        `CREATE TABLE log (v VARCHAR(10));\nINSERT INTO log VALUES ('x');\n`,
      );
      await ws.ok();
      assert.equal((await ws.ok("validate")).code, 0);
      await ws.file(
        "001.sql",
        `CREATE TABLE log (v VARCHAR(10));\nINSERT INTO log VALUES ('y');\n`,
      );
      await ws.file("002.sql", `INSERT INTO log VALUES ('z');\n`);
      const run = await ws.ok();
      assert.match(
        run.err,
        /001\.sql changed after it was applied; it runs once and is not run again/,
      );
      assert.deepEqual(
        (await ws.query("SELECT v FROM log ORDER BY v")).map((r) => r.v),
        ["x", "z"],
      );
      const status = await ws.ok("status");
      assert.match(status.out, /changed +001\.sql/);
      const validate = await ws.run("validate");
      assert.equal(validate.code, 1);
      assert.match(validate.err, /changed +001\.sql/);
    });

    it("stops at a failing file with the file, the line and the database's error", async () => {
      const ws = await workspace();
      await ws.file("001.sql", `CREATE TABLE a (v INT);\n`);
      await ws.file(
        "002.sql",
        `CREATE TABLE b (v INT);\nINSERT INTO b VALUES (1);\n\n-- the next one fails\n` +
          `INSERT INTO missing_table VALUES (1);\nCREATE TABLE c (v INT);\n`,
      );
      await ws.file("003.sql", `CREATE TABLE d (v INT);\n`);
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      const error = run.report!.error!;
      assert.equal(error.file, "002.sql");
      assert.equal(error.line, 5);
      assert.match(error.message, /002\.sql:5: in `INSERT INTO missing_table VALUES \(1\);`/);
      assert.match(error.message, /missing_table/);
      assert.equal(await ws.count("a"), 0);
      assert.equal(await ws.count("c"), undefined);
      assert.equal(await ws.count("d"), undefined, "later files must not run");
      const recorded = await ws.query("SELECT migration_path FROM framework_migrations");
      assert.deepEqual(recorded.map((r) => r.migration_path), ["001.sql"]);
      if (kind === "mysql") {
        // DDL commits implicitly there: the earlier statements stay, and the message says so.
        assert.equal(await ws.count("b"), 1);
        assert.match(error.message, /may have been committed/);
      } else {
        // One transaction for the file and its record: nothing of it remains.
        assert.equal(await ws.count("b"), undefined);
      }
    });

    it("names the line of a statement that fails at run time, after others completed", async () => {
      const ws = await workspace();
      await ws.file(
        "001.sql",
        `CREATE TABLE u (v INT PRIMARY KEY);\nINSERT INTO u VALUES (1);\n` +
          `SELECT 'a;b' AS x;\n/* ; */ INSERT INTO u VALUES (1);\n`,
      );
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      assert.equal(run.report!.error!.line, 4);
    });

    it("applies each file once when two runners start together", async () => {
      const ws = await workspace();
      await ws.file("001.sql", `CREATE TABLE log (v VARCHAR(10));\n${SLEEP[kind]}\n`);
      for (let i = 2; i <= 6; i++) {
        await ws.file(`00${i}.sql`, `INSERT INTO log VALUES ('${i}');\n`);
      }
      const [a, b] = await Promise.all([ws.run(), ws.run()]);
      assert.deepEqual([a.code, b.code], [0, 0], a.err + b.err);
      assert.deepEqual(
        (await ws.query("SELECT v FROM log ORDER BY v")).map((r) => r.v),
        ["2", "3", "4", "5", "6"],
      );
      assert.equal(await ws.count("framework_migrations"), 6);
    });

    // PostgreSQL and MariaDB: tests/migrate/sql/sql_lock_test.ts.
    if (kind === "sqlite") {
      it("exits 3 when the database stays locked for writing past --lock-timeout", async () => {
        const ws = await workspace();
        await ws.file("001.sql", `CREATE TABLE a (v INT);\n`);
        await ws.query("CREATE TABLE held (v INT)");
        await ws.query("BEGIN IMMEDIATE");
        try {
          const run = await ws.run("--lock-timeout", "0.2");
          assert.equal(run.code, 3, run.err);
          assert.match(run.err, /locked for writing; waited 0\.2 s \(--lock-timeout\)/);
          // migrate() names its own option.
          const api = await migrate({
            config: ws.configDir,
            migrations: ws.root,
            lockTimeoutMs: 200,
          })
            .then(() => undefined, (error: unknown) => error);
          assert.ok(api instanceof MigrationRunError && api.kind === "lock", String(api));
          assert.match(api.message, /locked for writing; waited 0\.2 s \(lockTimeoutMs\)/);
        } finally {
          await ws.query("ROLLBACK");
        }
      });

      // A runner reads the records before it takes the lock; a writer committing then (another
      // runner) holds SQLite's exclusive lock for a moment. The read waits for it as the write does.
      it("waits for a writer before reading the records too, up to --lock-timeout", async () => {
        const ws = await workspace();
        await ws.file("001.sql", `CREATE TABLE a (v INT);\n`);
        await ws.query("CREATE TABLE held (v INT)");
        await ws.query("BEGIN EXCLUSIVE");
        try {
          const started = performance.now();
          const run = await ws.run("--lock-timeout", "0.3");
          // The wait itself, not only its message: SQLite's busy handler sleeps the whole timeout.
          assert.ok(performance.now() - started >= 300, "it waited for the lock");
          assert.equal(run.code, 3, run.err);
          assert.match(run.err, /locked for writing; waited 0\.3 s/);
        } finally {
          await ws.query("ROLLBACK");
        }
        assert.equal(await ws.count("a"), undefined);
      });

      it("five runner processes started together each exit 0 and apply each file once", async () => {
        const ws = await workspace();
        for (let i = 1; i <= 9; i++) {
          await ws.file(
            `00${i}.sql`,
            `CREATE TABLE t${i} (v INT);\nINSERT INTO t${i} VALUES (${i});\n`,
          );
        }
        const runners = Array.from(
          { length: 5 },
          () => startCli(["-c", ws.configDir, "--sqlPath", ws.root, "--lock-timeout", "60"]),
        );
        const codes = await Promise.all(runners.map((r) => r.closed));
        assert.deepEqual(codes, [0, 0, 0, 0, 0], runners.map((r) => r.stderr()).join("\n"));
        for (let i = 1; i <= 9; i++) assert.equal(await ws.count(`t${i}`), 1);
        assert.equal(await ws.count("framework_migrations"), 9);
      });
    }

    it("lists the plan on --dry-run and runs nothing", async () => {
      const ws = await workspace();
      await ws.file("001.sql", `CREATE TABLE a (v INT);\n`);
      const run = await ws.ok("--dry-run");
      assert.match(run.out, /apply +001\.sql/);
      await ws.ok("status");
      await ws.ok("validate");
      if (kind === "sqlite") {
        // Reading creates nothing, not even the database file.
        await assert.rejects(stat(new URL(ws.db.url.replace(/^sqlite:/, "file://"))));
      }
      assert.equal(await ws.count("a"), undefined);
      assert.equal(await ws.count("framework_migrations"), undefined);
    });

    if (kind !== "sqlite") {
      it("fails with the server's reason on a wrong password, without printing it", async () => {
        const ws = await workspace({ password: "wrong-Pa55word" });
        await ws.file("001.sql", `CREATE TABLE a (v INT);\n`);
        const run = await ws.run();
        assert.equal(run.code, 1);
        assert.match(run.err, /cannot connect to .*(password authentication failed|Access denied)/);
        assert.ok(!run.err.includes("wrong-Pa55word"));
      });
    }
  });
}

describe("SQL runner command line", () => {
  // The quickest database this runtime has.
  const workspace = workspaces(KINDS[0]);

  it("exits 2 with the file, line and key of a bad datasource, before connecting", async () => {
    const ws = await workspace();
    await writeFile(
      join(ws.configDir, "application.yml"),
      "datasource:\n  - name: main\n    url: postgres:///nohost\n    migrations: { enabled: true }\n",
    );
    const run = await ws.run();
    assert.equal(run.code, 2);
    assert.match(run.err, /application\.yml:3: datasource\[0\]\.url must be sqlite:<file>/);
  });

  it("exits 2 and explains what to add when no datasource is configured", async () => {
    const ws = await workspace();
    await writeFile(join(ws.configDir, "application.yml"), "server:\n  port: 8080\n");
    const run = await ws.run();
    assert.equal(run.code, 2);
    assert.match(
      run.err,
      /No SQL datasource[\s\S]*datasource:\n {2}- name: main\n {4}url: sqlite:/,
    );
  });

  it("runs nothing while a file is not UTF-8, and names it", async () => {
    const ws = await workspace();
    await ws.file("001.sql", "CREATE TABLE a (v INT);\n");
    await ws.file("002.sql", new Uint8Array([0x53, 0x45, 0xff, 0x3b]));
    const run = await ws.run();
    assert.equal(run.code, 1);
    assert.match(run.err, /002\.sql: is not valid UTF-8 \(nothing was sent\)/);
    assert.equal(await ws.count("a"), undefined);
  });

  it("runs only enabled datasources, and refuses --connection on a disabled one", async () => {
    const ws = await workspace();
    // "other" keeps its records in a table of its own, on the same database.
    const yml = join(ws.configDir, "application.yml");
    await writeFile(
      yml,
      (await readFile(yml, "utf8")) + ws.datasource("off") + ws.datasource("other") +
        `    migrations: { enabled: true, table: other_migrations }\n`,
    );
    await ws.file("001.sql", "CREATE TABLE a (v INT);\n");
    await mkdir(join(ws.root, "other"), { recursive: true });
    await writeFile(join(ws.root, "other", "001.sql"), "CREATE TABLE b (v INT);\n");
    const only = await ws.ok("--connection", "other", "--json");
    assert.deepEqual(only.report!.connections.map((c) => [c.name, c.state]), [
      ["main", "not-selected"],
      ["off", "not-selected"],
      ["other", "ran"],
    ]);
    assert.equal(await ws.count("a"), undefined);
    const all = await ws.ok("--json");
    assert.deepEqual(all.report!.connections.map((c) => [c.name, c.state, c.applied]), [
      ["main", "ran", 1],
      ["off", "disabled", 0],
      ["other", "ran", 0],
    ]);
    const off = await ws.run("--connection", "off");
    assert.equal(off.code, 2);
    assert.match(off.err, /--connection off: set migrations\.enabled: true on it first/);
  });

  it("has no lock to remove on unlock: SQL locks end with their connection", async () => {
    const ws = await workspace();
    const run = await ws.ok("unlock");
    assert.match(run.out, /main: nothing to remove/);
  });
});
