import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { openPostgresPool } from "../../src/sql/postgres_pool.ts";
import { SqlClient } from "../../src/data/sql_client.ts";
import type { DataError } from "../../src/sql/data_error.ts";
import { rejection, testPools, waitsAcquireTimeout } from "./pools.ts";
import type { TestDatabase } from "../migrate/sql/databases.ts";
import { until } from "../runtime/raw_client.ts";
import { openPool } from "../../src/sql/open_pool.ts";
import { type TcpProxy, tcpProxy } from "./tcp_proxy.ts";
import type { PoolSettings } from "../../src/sql/pool_settings.ts";
import type { DataPool } from "../../src/sql/data_pool.ts";
import { PREPARED_PER_CONNECTION } from "../../src/sql/prepared_statements.ts";

// pg's warnings, from the file's start: pg warns once a process (a DeprecationWarning on stderr)
// at a query queued behind another that already waits, so a test after the first would not see it.
const pgWarnings: string[] = [];
process.on("warning", (warning: Error) => {
  if (/client\.query\(\)/.test(warning.message)) pgWarnings.push(warning.message);
});

// A warning is emitted on the next tick: delivered once the event loop turns (ticks run first).
const warningsDelivered = () => new Promise((resolve) => setImmediate(resolve));

describe("postgres_pool", () => {
  const open = testPools();

  it("gives pg.Pool as the native pool", async () => {
    const { pool, datasource } = await open("postgres");
    assert.equal(typeof openPostgresPool, "function");
    assert.equal(pool.kind, "postgres");
    assert.equal(pool.name, datasource.name);
    assert.ok(pool.native instanceof pg.Pool);
  });

  it("gives values back as documented", async () => {
    const { pool } = await open("postgres");
    const sql = new SqlClient(pool);
    const at = new Date("2024-01-02T03:04:05.678Z");
    const row = await sql.one`
      SELECT 9007199254740993::bigint AS big, 42::int AS int, 1.5::numeric AS num,
        2.5::float8 AS dbl, true AS yes, ${at}::timestamptz AS at, ${{ a: [1, "x"] }}::jsonb AS j,
        '{"b":null}'::json AS js, count(*) AS n, ${12345678901234567890n}::numeric AS param_big`;
    assert.deepEqual(row, {
      big: "9007199254740993",
      int: 42,
      num: "1.5",
      dbl: 2.5,
      yes: true,
      at,
      j: { a: [1, "x"] },
      js: { b: null },
      n: "1",
      param_big: "12345678901234567890",
    });
  });

  it("a connection killed under a statement fails the call saying so; the next call works", async () => {
    const { pool, admin, datasource } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    const { pid } = await sql.one<{ pid: number }>`SELECT pg_backend_pid() AS pid`;
    // Heard from the start: it fails while the test waits on the kill.
    const sleeping = rejection(sql.query`SELECT pg_sleep(60)`);
    await killWhileSleeping(admin, pid);
    const error = await sleeping;
    assert.equal(error.reason, "connection");
    assert.equal(error.datasource, datasource.name);
    assert.match(error.message, /SELECT pg_sleep\(60\): the connection was lost/);
    const next = await sql.one<{ pid: number }>`SELECT pg_backend_pid() AS pid`;
    assert.notEqual(next.pid, pid);
  });

  it("a held connection killed while idle fails its next statement; the pool recovers", async () => {
    const { pool, admin } = await open("postgres", { maxSize: 1 });
    const held = await pool.acquire();
    const [{ pid }] = (await held.run("SELECT pg_backend_pid() AS pid", [])).rows as {
      pid: number;
    }[];
    await admin.query(`SELECT pg_terminate_backend(${pid})`);
    await until(
      async () =>
        (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}`)).length === 0,
      "the session ended",
    );
    const error = await rejection(held.run("SELECT 1", []));
    assert.equal(error.reason, "connection");
    held.release(true);
    const sql = new SqlClient(pool);
    assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
  });

  it("an idle connection whose session the server ended is closed, not handed out", async () => {
    // Not closed by idle-timeout meanwhile: only by hearing its end.
    const { pool, admin } = await open("postgres", { maxSize: 1, idleTimeoutMs: 600_000 });
    const sql = new SqlClient(pool);
    const { pid } = await sql.one<{ pid: number }>`SELECT pg_backend_pid() AS pid`;
    assert.equal(pool.idleCount(), 1);
    await admin.query(`SELECT pg_terminate_backend(${pid})`);
    await until(() => Promise.resolve(pool.idleCount() === 0), "the ended connection closed");
    const next = await sql.one<{ pid: number }>`SELECT pg_backend_pid() AS pid`;
    assert.notEqual(next.pid, pid);
  });

  it("close waits for the connection held, then ends every session", async () => {
    const { pool, admin } = await open("postgres", { maxSize: 2 });
    const sql = new SqlClient(pool);
    assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
    const held = await pool.acquire();
    const order: string[] = [];
    const closing = pool.close().then(() => order.push("closed"));
    await rejection(pool.acquire());
    assert.deepEqual((await held.run("SELECT 2 AS two", [])).rows, [{ two: 2 }]);
    order.push("released");
    held.release();
    await closing;
    assert.deepEqual(order, ["released", "closed"]);
    await until(
      async () =>
        (await admin.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() " +
            "AND pid <> pg_backend_pid()",
        )).length === 0,
      "every session of the pool ended",
    );
  });

  it("a call waits its acquire-timeout for a busy pool, not the shorter connect-timeout", async () => {
    await waitsAcquireTimeout((settings) => open("postgres", settings));
  });

  // A pool on a fresh database through a proxy that can stop answering; both closed after `body`.
  async function throughProxy(
    settings: PoolSettings,
    body: (sql: SqlClient, proxy: TcpProxy, pool: DataPool) => Promise<void>,
  ): Promise<void> {
    const { datasource } = await open("postgres");
    const url = new URL(datasource.location);
    const proxy = await tcpProxy(url.hostname, Number(url.port));
    await proxy.up();
    url.port = String(proxy.port);
    const pool = await openPool({ ...datasource, location: url.href }, settings);
    try {
      await body(new SqlClient(pool), proxy, pool);
    } finally {
      // The proxy first: it cuts what a call may still wait on, so the pool can close.
      proxy.release();
      await proxy.down();
      await pool.close();
    }
  }

  // `size` connections opened, then idle past the 500 ms after which one is checked: time
  // passing is the condition under test, not an event. The statements may end before every
  // connection opened for them did (one served by another's return): idle from when all are.
  async function idlePastCheck(sql: SqlClient, pool: DataPool, size: number): Promise<void> {
    await Promise.all(Array.from({ length: size }, () => sql.query`SELECT 1 AS one`));
    await until(() => Promise.resolve(pool.idleCount() === size), "every connection idle");
    const idleFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.ok(performance.now() - idleFrom > 500);
  }

  it("checks idle connections within acquire-timeout, however many there are", async () => {
    const maxSize = 4;
    const settings = {
      maxSize,
      connectTimeoutMs: 2_000,
      acquireTimeoutMs: 3_000,
      statementTimeoutMs: 600_000,
    };
    await throughProxy(settings, async (sql, proxy, pool) => {
      await idlePastCheck(sql, pool, maxSize);
      // A database that stops answering: each idle connection's check waits its whole bound.
      proxy.hold();
      const error = await rejection(sql.query`SELECT 2 AS two`);
      // Not one check after another past it (four times connect-timeout), then a connect.
      assert.equal(error.reason, "timeout", error.message);
      assert.match(error.message, /within 3000 ms \(pool\.acquire-timeout\)/);
    });
  });

  it("checks a connection idle past 500 ms before handing it out: a dead one is replaced, not failed", async () => {
    const settings = {
      maxSize: 2,
      connectTimeoutMs: 1_000,
      // Far beyond the give-up: a call that waits on a dead connection's answer fails the test.
      statementTimeoutMs: 600_000,
    };
    await throughProxy(settings, async (sql, proxy, pool) => {
      await idlePastCheck(sql, pool, 2);
      // Both connections dead without a word, as a firewall that dropped them leaves them.
      proxy.sever();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const rows = await Promise.race([
        sql.query`SELECT 2 AS two`,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("still waiting after 30 s")), 30_000);
        }),
      ]).finally(() => clearTimeout(timer));
      assert.deepEqual(rows, [{ two: 2 }]);
    });
  });

  it("closes the connections idle past idle-timeout; the next call opens another", async () => {
    const { pool, admin } = await open("postgres", { maxSize: 3, idleTimeoutMs: 300 });
    const sql = new SqlClient(pool);
    const sessions = async () => {
      const [{ n }] = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() " +
          "AND pid <> pg_backend_pid()",
      );
      return Number(n);
    };
    // Three connections held at once, so that three are opened; then all given back.
    let giveBack!: () => void;
    const given = new Promise<void>((resolve) => giveBack = resolve);
    const held = Promise.all([1, 2, 3].map((n) =>
      sql.transaction(async () => {
        await sql.one`SELECT ${n}::int AS n`;
        await given;
      })
    ));
    await until(async () => await sessions() === 3, "three sessions open");
    giveBack();
    await held;
    await until(() => Promise.resolve(pool.idleCount() === 0), "the idle connections closed");
    await until(async () => await sessions() === 0, "their sessions ended on the server");
    // Held while it looks: idle, the new one could close again before the count.
    await sql.transaction(async () => {
      assert.deepEqual(await sql.one`SELECT ${4}::int AS n`, { n: 4 });
      assert.equal(await sessions(), 1);
    });
  });

  it("closes a connection the native pool's callers gave back, idle past idle-timeout", async () => {
    const { pool } = await open("postgres", { maxSize: 2, idleTimeoutMs: 300 });
    const native = pool.native as pg.Pool;
    assert.deepEqual((await native.query("SELECT 1 AS one")).rows, [{ one: 1 }]);
    await until(
      () => Promise.resolve(native.totalCount === 0),
      "the native pool's idle client closed",
    );
  });

  // A transaction's calls side by side share its connection, and a statement with a timeout of
  // its own goes with its SET LOCAL: pg must not be handed a query while another waits (it
  // prints a deprecation warning on the user's stderr), and each still runs in its order.
  it("statements side by side in a transaction, with their SET LOCAL, make pg print nothing", async () => {
    const { pool } = await open("postgres", { maxSize: 1, queryTimeoutMs: 60_000 });
    const sql = new SqlClient(pool);
    const results = await sql.transaction(async () => {
      const side = await Promise.all([
        sql.withTimeout(5_000)
          .query`SELECT ${1}::int AS n, current_setting('statement_timeout') AS t`,
        sql.query`SELECT ${2}::int AS n, current_setting('statement_timeout') AS t`,
        sql.withTimeout(7_000)
          .query`SELECT ${3}::int AS n, current_setting('statement_timeout') AS t`,
        sql.query`SELECT ${4}::int AS n, current_setting('statement_timeout') AS t`,
      ]);
      // The connection's prepared statements full: the next one puts one out (a Close) too.
      for (let i = 0; i < PREPARED_PER_CONNECTION; i++) {
        await sql.unsafe(`SELECT $1::int AS n${i}`, [i]);
      }
      const last = await sql.withTimeout(9_000)
        .query`SELECT ${5}::int AS n, current_setting('statement_timeout') AS t`;
      return [...side.flat(), ...last];
    }, { timeout: 120 });
    assert.deepEqual(results, [
      { n: 1, t: "5s" },
      { n: 2, t: "1min" },
      { n: 3, t: "7s" },
      { n: 4, t: "1min" },
      { n: 5, t: "9s" },
    ]);
    await warningsDelivered();
    assert.deepEqual(pgWarnings, []);
  });

  // Those held back for pg's queue fail with the connection too, not at their bound (an hour here).
  it("statements waiting their turn on a connection killed under them fail with it", async () => {
    const { pool, admin } = await open("postgres", { maxSize: 1, statementTimeoutMs: 3_600_000 });
    const sql = new SqlClient(pool);
    let outcomes: PromiseSettledResult<unknown>[] = [];
    await rejection(sql.transaction(async () => {
      const { pid } = await sql.one<{ pid: number }>`SELECT pg_backend_pid() AS pid`;
      const waiting = Promise.allSettled([
        sql.query`SELECT pg_sleep(${60})`,
        sql.withTimeout(5_000).query`SELECT ${1}::int AS one`,
        sql.query`SELECT ${2}::int AS two`,
        sql.withTimeout(6_000).query`SELECT ${3}::int AS three`,
      ]);
      await killWhileSleeping(admin, pid);
      outcomes = await waiting;
    }));
    assert.deepEqual(
      outcomes.map((o) => o.status === "rejected" && (o.reason as DataError).reason),
      ["connection", "connection", "connection", "connection"],
    );
  });

  // Cut by statement-timeout, the connection is closed: what waited its turn is not sent to it.
  it("statements waiting their turn on a connection closed at a timeout are not sent to it", async () => {
    const { pool } = await open("postgres", { maxSize: 1, statementTimeoutMs: 500 });
    const sql = new SqlClient(pool);
    let outcomes: PromiseSettledResult<unknown>[] = [];
    await rejection(sql.transaction(async () => {
      outcomes = await Promise.allSettled([
        sql.query`SELECT pg_sleep(${5})`,
        sql.query`SELECT ${1}::int AS one`,
        sql.query`SELECT ${2}::int AS two`,
      ]);
    }));
    assert.deepEqual(outcomes.map((o) => o.status), ["rejected", "rejected", "rejected"]);
    await warningsDelivered();
    assert.deepEqual(pgWarnings, []);
  });
  // A statement sent with its SET LOCAL, to a database that stops answering: cut at its bound
  // while the SET still waits, its failure is the call's, not an unhandled rejection.
  it("a statement cut at its bound while its SET LOCAL waits leaves no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const heard = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", heard);
    try {
      await throughProxy({ maxSize: 1, statementTimeoutMs: 300 }, async (sql, proxy) => {
        const error = await rejection(sql.transaction(async () => {
          await sql.query`SELECT ${1}::int AS one`;
          proxy.hold();
          await sql.withTimeout(100).query`SELECT ${2}::int AS two`;
        }));
        assert.equal(error.reason, "timeout", error.message);
        proxy.release();
        await warningsDelivered();
      });
      await warningsDelivered();
    } finally {
      process.off("unhandledRejection", heard);
    }
    assert.deepEqual(unhandled, []);
  });
});

/** Ends session `pid` on the server once it runs its `pg_sleep`: a connection killed mid-statement. */
async function killWhileSleeping(admin: TestDatabase, pid: number): Promise<void> {
  await until(
    async () =>
      (await admin.query(
        `SELECT 1 FROM pg_stat_activity WHERE pid = ${pid} AND query LIKE '%pg_sleep%'`,
      )).length > 0,
    "the statement runs",
  );
  await admin.query(`SELECT pg_terminate_backend(${pid})`);
}
