import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { openSqlitePool } from "../../src/data/sqlite_pool.ts";
import { POOL_DEFAULTS } from "../../src/data/pool_settings.ts";
import { SqlClient } from "../../src/data/sql_client.ts";
import { rejection, testPools } from "./pools.ts";
import { RUNTIME } from "../runtime.ts";
import { SQLITE } from "../sqlite.ts";

describe("sqlite_pool", () => {
  if (SQLITE === undefined) {
    it("refuses SQLite on a Node without node:sqlite, naming the datasource", async () => {
      const pool = openSqlitePool({
        name: "notes",
        kind: "sqlite",
        location: ":memory:",
        migrationsEnabled: false,
        strictOrder: false,
        validateOnMigrate: false,
        table: "framework_migrations",
      }, POOL_DEFAULTS);
      const error = await rejection(pool.acquire());
      assert.equal(error.reason, "connect");
      assert.match(
        error.message,
        /^datasource "notes": cannot open :memory:: SQLite needs a runtime with node:sqlite/,
      );
    });
    return;
  }
  const open = testPools();

  it("gives values back as documented", async () => {
    const { pool } = await open("sqlite");
    assert.equal(typeof openSqlitePool, "function");
    const sql = new SqlClient(pool);
    const at = new Date("2024-01-02T03:04:05.678Z");
    const row = await sql.one`SELECT 42 AS int, 1.5 AS real, ${true} AS yes, ${false} AS no,
      ${at} AS at, json_object('a', 1) AS j, ${null} AS empty, ${undefined} AS missing,
      ${12n} AS big, x'00ff' AS bytes, COUNT(*) AS n`;
    assert.deepEqual({ ...row, bytes: [...(row.bytes as Uint8Array)] }, {
      int: 42,
      real: 1.5,
      yes: 1,
      no: 0,
      at: "2024-01-02T03:04:05.678Z",
      j: '{"a":1}',
      empty: null,
      missing: null,
      big: 12,
      bytes: [0, 255],
      n: 1,
    });
    // Beyond the safe integers: an error on Deno and Node, a rounded number on Bun.
    const beyond = sql.one`SELECT 9007199254740993 AS big`;
    if (RUNTIME === "bun") assert.deepEqual(await beyond, { big: 9007199254740992 });
    else assert.match((await rejection(beyond)).message, /too large/);
  });

  it("gives :memory: one connection, shared by every call", async () => {
    const { pool, datasource } = await open("sqlite", { maxSize: 5, acquireTimeoutMs: 100 }, {
      memory: true,
    });
    const sql = new SqlClient(pool);
    await sql.execute`CREATE TABLE t (v TEXT)`;
    await sql.execute`INSERT INTO t VALUES (${"kept"})`;
    const held = await pool.acquire();
    const error = await rejection(sql.query`SELECT v FROM t`);
    assert.equal(error.reason, "timeout");
    assert.equal(error.datasource, datasource.name);
    held.release();
    assert.deepEqual(await sql.query`SELECT v FROM t`, [{ v: "kept" }]);
  });

  it("gives a file up to maxSize connections, each seeing the others' writes", async () => {
    const { pool } = await open("sqlite", { maxSize: 2, acquireTimeoutMs: 100 });
    const a = await pool.acquire();
    const b = await pool.acquire();
    await a.run("CREATE TABLE t (v TEXT)", []);
    await a.run("INSERT INTO t VALUES (?)", ["x"]);
    assert.deepEqual((await b.run("SELECT v FROM t", [])).rows, [{ v: "x" }]);
    const third = await rejection(pool.acquire());
    assert.equal(third.reason, "timeout");
    // A waiter gets the connection given back.
    const waiting = pool.acquire();
    a.release();
    const c = await waiting;
    c.release();
    b.release();
  });

  it("waits busyTimeoutMs for another connection's write lock, then fails naming it", async () => {
    const { pool } = await open("sqlite", { maxSize: 2, busyTimeoutMs: 50 });
    const a = await pool.acquire();
    const b = await pool.acquire();
    await a.run("CREATE TABLE t (v TEXT)", []);
    await a.run("BEGIN IMMEDIATE", []);
    await a.run("INSERT INTO t VALUES (1)", []);
    const error = await rejection(b.run("INSERT INTO t VALUES (2)", []));
    assert.equal(error.reason, "statement");
    assert.match(error.message, /locked/);
    await a.run("COMMIT", []);
    await b.run("INSERT INTO t VALUES (2)", []);
    a.release();
    b.release();
  });

  it("puts a file in WAL mode, and serves one it cannot switch as it is", async () => {
    const { pool, admin, datasource } = await open("sqlite", { busyTimeoutMs: 50 });
    // The admin connection makes the file, in SQLite's default journal, and holds its write
    // lock: a switch to WAL needs the file to itself, so the pool's first handle cannot make it.
    await admin.query("CREATE TABLE t (v TEXT)");
    await admin.query("INSERT INTO t VALUES ('kept')");
    await admin.query("BEGIN IMMEDIATE");
    await admin.query("INSERT INTO t VALUES ('pending')");
    const sql = new SqlClient(pool);
    assert.deepEqual(await sql.query`SELECT v FROM t`, [{ v: "kept" }]);
    assert.deepEqual(await sql.query`PRAGMA journal_mode`, [{ journal_mode: "delete" }]);
    await admin.query("COMMIT");
    // A pool that opens the file free switches it, and the file stays so.
    const next = new SqlClient(openSqlitePool(datasource, POOL_DEFAULTS));
    try {
      assert.deepEqual(await next.query`PRAGMA journal_mode`, [{ journal_mode: "wal" }]);
      assert.deepEqual(await next.query`SELECT v FROM t ORDER BY v`, [
        { v: "kept" },
        { v: "pending" },
      ]);
    } finally {
      await (next.pool as { close(): Promise<void> }).close();
    }
  });

  it("refuses a file whose folder is missing (a mistyped path) as a connect error, creating nothing", async () => {
    const { datasource } = await open("sqlite");
    const folder = join(dirname(datasource.location), "dta", "sub");
    const pool = openSqlitePool({ ...datasource, location: join(folder, "app.db") }, POOL_DEFAULTS);
    try {
      // Given back if it opens, so that the pool closes.
      const error = await rejection(pool.acquire().then((connection) => connection.release()));
      assert.equal(error.reason, "connect");
      assert.equal(error.datasource, datasource.name);
      assert.ok(
        error.message.startsWith(
          `datasource "${datasource.name}": cannot open ${join(folder, "app.db")}: ` +
            `its folder ${join(dirname(datasource.location), "dta")} does not exist`,
        ),
        error.message,
      );
      assert.equal(existsSync(join(dirname(datasource.location), "dta")), false);
    } finally {
      await pool.close();
    }
  });

  it("refuses calls once closed", async () => {
    const { pool } = await open("sqlite");
    await pool.close();
    assert.equal((await rejection(pool.acquire())).reason, "closed");
  });
});
