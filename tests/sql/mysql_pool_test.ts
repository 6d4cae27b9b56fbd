import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Buffer } from "node:buffer";
import { openMysqlPool } from "../../src/sql/mysql_pool.ts";
import { SqlClient } from "../../src/data/sql_client.ts";
import { rejection, testPools, waitsAcquireTimeout } from "./pools.ts";
import { until } from "../runtime/raw_client.ts";

describe("mysql_pool (MariaDB)", () => {
  const open = testPools();

  it("gives mysql2's pool as the native pool", async () => {
    const { pool } = await open("mysql");
    assert.equal(typeof openMysqlPool, "function");
    assert.equal(pool.kind, "mysql");
    assert.equal(typeof (pool.native as { getConnection: unknown }).getConnection, "function");
  });

  it("gives values back as documented", async () => {
    const { pool } = await open("mysql");
    const sql = new SqlClient(pool);
    const held = await pool.acquire();
    await held.run(
      `CREATE TABLE v (big BIGINT, small BIGINT, flag BOOLEAN, at DATETIME(3), day DATE,
        doc JSON, price DECIMAL(10,2), bytes BLOB)`,
      [],
    );
    held.release();
    const at = new Date("2024-01-02T03:04:05.678Z");
    await sql.execute`INSERT INTO v VALUES (${"9007199254740993"}, ${42}, ${true}, ${at},
      ${"2024-01-02"}, ${JSON.stringify({ a: [1] })}, ${"1.50"}, ${Buffer.from([0, 255])})`;
    const row = await sql.one<Record<string, unknown>>`SELECT *, COUNT(*) AS n FROM v`;
    assert.deepEqual({ ...row, bytes: [...(row.bytes as Uint8Array)] }, {
      big: "9007199254740993",
      small: 42,
      flag: 1,
      at,
      day: new Date("2024-01-02T00:00:00.000Z"),
      doc: { a: [1] },
      price: "1.50",
      bytes: [0, 255],
      n: 1,
    });
  });

  it("a connection killed under a statement fails the call saying so; the next call works", async () => {
    const { pool, admin, datasource } = await open("mysql", { maxSize: 1 });
    const sql = new SqlClient(pool);
    const { id } = await sql.one<{ id: number }>`SELECT CONNECTION_ID() AS id`;
    // Heard from the start: it fails while the test waits on the kill.
    const sleeping = rejection(sql.query`SELECT SLEEP(60)`);
    await until(
      async () =>
        (await admin.query(
          `SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ${id} AND INFO LIKE '%SLEEP(60)%'`,
        )).length > 0,
      "the statement runs",
    );
    await admin.query(`KILL ${id}`);
    const error = await sleeping;
    assert.equal(error.reason, "connection", error.message);
    assert.equal(error.datasource, datasource.name);
    assert.match(error.message, /SELECT SLEEP\(60\): the connection was lost/);
    const next = await sql.one<{ id: number }>`SELECT CONNECTION_ID() AS id`;
    assert.notEqual(next.id, id);
  });

  it("a held connection killed while idle fails its next statement; the pool recovers", async () => {
    const { pool, admin } = await open("mysql", { maxSize: 1 });
    const held = await pool.acquire();
    const [{ id }] = (await held.run("SELECT CONNECTION_ID() AS id", [])).rows as {
      id: number;
    }[];
    await admin.query(`KILL ${id}`);
    await until(
      async () =>
        (await admin.query(`SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ${id}`))
          .length === 0,
      "the session ended",
    );
    const error = await rejection(held.run("SELECT 1", []));
    assert.equal(error.reason, "connection", error.message);
    held.release(true);
    const sql = new SqlClient(pool);
    assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
  });

  // A result is sent whole before the connection takes another statement: given back in the
  // middle of one, the next user would wait behind its rest, or find it paused for ever.
  it("a connection given back while a stream still reads is closed, not handed on", async () => {
    const { pool } = await open("mysql", { maxSize: 1, statementTimeoutMs: 5_000 });
    const sql = new SqlClient(pool);
    const before = String((await sql.one<{ id: unknown }>`SELECT CONNECTION_ID() AS id`).id);
    const connection = await pool.acquire();
    const rows = await connection.cursor("SELECT seq FROM seq_1_to_100000", [], true);
    assert.equal((await rows.next()).length > 0, true);
    connection.release();
    const after = await sql.one<{ id: unknown }>`SELECT CONNECTION_ID() AS id`;
    assert.notEqual(String(after.id), before);
  });

  it("a call waits its acquire-timeout for a busy pool, not the shorter connect-timeout", async () => {
    await waitsAcquireTimeout((settings) => open("mysql", settings));
  });
});
