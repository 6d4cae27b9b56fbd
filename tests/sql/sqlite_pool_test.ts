import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { openSqlitePool } from "../../src/sql/sqlite_pool.ts";
import { POOL_DEFAULTS } from "../../src/sql/pool_settings.ts";
import { openPool } from "../../src/sql/open_pool.ts";
import type { DataConnection } from "../../src/sql/data_pool.ts";
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
    assert.equal(error.code, "SQLITE_BUSY");
    await a.run("COMMIT", []);
    await b.run("INSERT INTO t VALUES (2)", []);
    a.release();
    b.release();
  });

  // The code SQLite gives a write that waited out its busy timeout, whoever held the lock: a
  // writing transaction of the pool (whose lock a write waits for without blocking the thread),
  // or another process.
  it("gives SQLITE_BUSY to a write that waited out busyTimeoutMs for the pool's write lock", async () => {
    const { pool } = await open("sqlite", { maxSize: 3, busyTimeoutMs: 50 });
    const a = await pool.acquire();
    const b = await pool.acquire();
    try {
      await a.run("CREATE TABLE t (v TEXT)", []);
      await a.control("BEGIN IMMEDIATE");
      await a.run("INSERT INTO t VALUES (1)", []);
      const write = await rejection(b.run("INSERT INTO t VALUES (2)", []));
      assert.equal(write.reason, "statement");
      assert.match(write.message, /database is locked/);
      assert.equal(write.code, "SQLITE_BUSY", write.message);
      const begin = await rejection(b.control("BEGIN IMMEDIATE"));
      assert.equal(begin.code, "SQLITE_BUSY", begin.message);
      const rows = await rejection((async () => {
        for await (const _ of new SqlClient(pool).stream`INSERT INTO t VALUES (3) RETURNING v`) {
          // none: refused before its first row
        }
      })());
      assert.equal(rows.code, "SQLITE_BUSY", rows.message);
      await a.control("COMMIT");
      await b.run("INSERT INTO t VALUES (2)", []);
    } finally {
      a.release();
      b.release();
    }
  });

  it("gives SQLITE_BUSY to a write that waited out busyTimeoutMs for another process's lock", async () => {
    const { pool, admin } = await open("sqlite", { busyTimeoutMs: 50 });
    const sql = new SqlClient(pool);
    await sql.execute`CREATE TABLE t (v TEXT)`;
    await admin.query("BEGIN IMMEDIATE");
    try {
      const error = await rejection(sql.execute`INSERT INTO t VALUES (${"x"})`);
      assert.equal(error.reason, "statement");
      assert.equal(error.code, "SQLITE_BUSY", error.message);
    } finally {
      await admin.query("COMMIT");
    }
    await sql.execute`INSERT INTO t VALUES (${"x"})`;
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

  // What each connection says of itself.
  const pragmas = async (connection: DataConnection) => ({
    synchronous: (await connection.run("PRAGMA synchronous", [])).rows[0].synchronous,
    journal: (await connection.run("PRAGMA journal_mode", [])).rows[0].journal_mode,
    foreignKeys: (await connection.run("PRAGMA foreign_keys", [])).rows[0].foreign_keys,
  });

  it("gives every connection foreign keys on, SQLite's FULL synchronous and WAL by default", async () => {
    const { pool } = await open("sqlite", { maxSize: 2 });
    const a = await pool.acquire();
    const b = await pool.acquire();
    for (const connection of [a, b]) {
      assert.deepEqual(await pragmas(connection), {
        synchronous: 2,
        journal: "wal",
        foreignKeys: 1,
      });
    }
    a.release();
    b.release();
    const memory = await open("sqlite", {}, { memory: true });
    const only = await memory.pool.acquire();
    assert.deepEqual(await pragmas(only), { synchronous: 2, journal: "memory", foreignKeys: 1 });
    only.release();
  });

  it("refuses a row whose foreign key points nowhere, by default, as a statement error", async () => {
    const { pool } = await open("sqlite");
    const sql = new SqlClient(pool);
    await sql.execute`CREATE TABLE parents (id INTEGER PRIMARY KEY)`;
    await sql.execute`CREATE TABLE kids (parent INTEGER REFERENCES parents (id))`;
    await sql.execute`INSERT INTO parents (id) VALUES (${1})`;
    await sql.execute`INSERT INTO kids (parent) VALUES (${1})`;
    const error = await rejection(sql.execute`INSERT INTO kids (parent) VALUES (${2})`);
    assert.equal(error.reason, "statement");
    assert.equal(error.code, "SQLITE_CONSTRAINT_FOREIGNKEY");
    assert.match(
      error.message,
      /^datasource "sqlite_main": INSERT INTO kids .*FOREIGN KEY constraint failed/,
    );
    await rejection(sql.execute`DELETE FROM parents`);
    assert.deepEqual(await sql.query`SELECT parent FROM kids`, [{ parent: 1 }]);
    // Off when asked.
    const off = new SqlClient((await open("sqlite", { sqlite: { foreignKeys: false } })).pool);
    await off.execute`CREATE TABLE parents (id INTEGER PRIMARY KEY)`;
    await off.execute`CREATE TABLE kids (parent INTEGER REFERENCES parents (id))`;
    assert.equal((await off.execute`INSERT INTO kids (parent) VALUES (${2})`).rowsAffected, 1);
  });

  it("applies pool.sqlite's settings on each connection it opens", async () => {
    const { pool } = await open("sqlite", {
      maxSize: 2,
      sqlite: { synchronous: "NORMAL", journalMode: "TRUNCATE", foreignKeys: false },
    });
    const a = await pool.acquire();
    const b = await pool.acquire();
    for (const connection of [a, b]) {
      assert.deepEqual(await pragmas(connection), {
        synchronous: 1,
        journal: "truncate",
        foreignKeys: 0,
      });
    }
    a.release();
    b.release();
    const synchronous = { OFF: 0, NORMAL: 1, FULL: 2, EXTRA: 3 } as const;
    for (const [name, level] of Object.entries(synchronous)) {
      const { pool } = await open("sqlite", {
        sqlite: { synchronous: name as keyof typeof synchronous, journalMode: "WAL" },
      });
      const connection = await pool.acquire();
      assert.deepEqual(await pragmas(connection), {
        synchronous: level,
        journal: "wal",
        foreignKeys: 1,
      });
      connection.release();
    }
    for (const mode of ["DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL"] as const) {
      const { pool } = await open("sqlite", { sqlite: { journalMode: mode } });
      const connection = await pool.acquire();
      assert.equal((await pragmas(connection)).journal, mode.toLowerCase());
      connection.release();
    }
    // :memory: keeps its journal in memory.
    const memory = await open("sqlite", { sqlite: { journalMode: "MEMORY" } }, { memory: true });
    const connection = await memory.pool.acquire();
    assert.equal((await pragmas(connection)).journal, "memory");
    connection.release();
  });

  it("refuses a journal mode :memory: cannot have, naming the key", async () => {
    const { datasource } = await open("sqlite", {}, { memory: true });
    for (const mode of ["WAL", "DELETE", "TRUNCATE", "PERSIST"] as const) {
      await assert.rejects(openPool(datasource, { sqlite: { journalMode: mode } }), {
        name: "RangeError",
        message: new RegExp(
          `^datasource "sqlite_main": pool\\.sqlite\\.journal-mode ${mode} is not possible on ` +
            "sqlite::memory:, whose journal is in memory: MEMORY",
        ),
      });
    }
  });

  it("fails the connection, naming the key, when SQLite keeps another journal mode than asked", async () => {
    const { pool, admin } = await open("sqlite", {
      sqlite: { journalMode: "WAL" },
      busyTimeoutMs: 50,
    });
    // The admin connection holds the file's write lock: no switch to WAL can be made.
    await admin.query("CREATE TABLE t (v TEXT)");
    await admin.query("BEGIN IMMEDIATE");
    await admin.query("INSERT INTO t VALUES ('pending')");
    const error = await rejection(pool.acquire().then((connection) => connection.release()));
    assert.equal(error.reason, "connect");
    // SQLite waits busy_timeout for the lock, then says so (or keeps the mode it has).
    assert.match(
      error.message,
      /cannot open .*: pool\.sqlite\.journal-mode WAL: (database is locked|SQLite kept delete)/,
    );
    await admin.query("COMMIT");
  });

  it("refuses calls once closed", async () => {
    const { pool } = await open("sqlite");
    await pool.close();
    assert.equal((await rejection(pool.acquire())).reason, "closed");
  });
});
