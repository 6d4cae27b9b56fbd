import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { poolSettingsFrom, resolvePoolSettings } from "../../src/sql/pool_settings.ts";
import { SqlClient } from "../../src/data/sql_client.ts";
import {
  queryTimeout,
  TRANSACTION_STEP_MS,
  TRANSACTION_TIMEOUT,
} from "../../src/sql/query_timeout.ts";
import fc from "fast-check";
import { propertyOptions } from "../property.ts";
import { openPool } from "../../src/sql/open_pool.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { datasourceEntries, KINDS, rejection, testPools } from "./pools.ts";
import type { Datasource } from "../../src/sql/datasource.ts";
import type { DataError } from "../../src/sql/data_error.ts";
import { bootstrap } from "../../mod.ts";
import { data } from "../../data.ts";

// A statement that runs far past the timeouts under test (200 ms): the database stops it.
const LONG = {
  postgres: (sql: SqlClient) => sql.query`SELECT pg_sleep(${5})`,
  mysql: (sql: SqlClient) => sql.query`SELECT SLEEP(${5}) AS slept`,
} as const;

// The session a call runs on: the same one after a timeout proves the connection was kept.
const SESSION = {
  postgres: async (sql: SqlClient) =>
    String((await sql.one<{ id: unknown }>`SELECT pg_backend_pid() AS id`).id),
  mysql: async (sql: SqlClient) =>
    String((await sql.one<{ id: unknown }>`SELECT CONNECTION_ID() AS id`).id),
} as const;

describe("query timeout: settings", () => {
  it("reads pool.query-timeout as a duration, naming the key when it is out of range", () => {
    const at = (key: string) => `application.yml:4: datasource[0].${key}`;
    assert.deepEqual(poolSettingsFrom({ "query-timeout": "5s" }, at), { queryTimeoutMs: 5_000 });
    // None by default; given in code, checked as the other settings are.
    assert.equal(resolvePoolSettings("main", {}).queryTimeoutMs, undefined);
    assert.throws(
      () => resolvePoolSettings("reports", { queryTimeoutMs: Number.NaN }),
      /datasource "reports": pool\.query-timeout must be a positive number, got NaN/,
    );
    assert.throws(
      () => poolSettingsFrom({ "query-timeout": 0 }, at),
      (e: unknown) =>
        e instanceof ConfigError &&
        /datasource\[0\]\.pool\.query-timeout: give milliseconds .*, above 0, got 0/.test(
          e.message,
        ),
    );
  });

  it("refuses withTimeout with a value that is not a time span above 0, naming the call", async () => {
    const open = testPools();
    const { pool } = await open(KINDS.includes("postgres") ? "postgres" : "sqlite");
    const sql = new SqlClient(pool);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "5 seconds", 1.5]) {
      assert.throws(
        () => sql.withTimeout(bad),
        (error: Error) =>
          error instanceof RangeError &&
          /withTimeout\(timeout\): give milliseconds \(250\) or a duration/.test(error.message),
      );
    }
  });
});

describe("queryTimeout: a statement's timeout", () => {
  it("is the call's, else the pool's, and inside a transaction's time the lesser of it and what is left, up to a second", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 1, max: 10_000_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 10_000_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: -1_000, max: 10_000_000 }), { nil: undefined }),
        (call, pool, fromNow) => {
          const deadline = fromNow === undefined ? undefined : performance.now() + fromNow;
          const timeout = queryTimeout(call, pool, deadline);
          const asked = call ?? pool;
          if (asked === undefined) return assert.equal(timeout, undefined);
          assert.ok(timeout !== undefined && timeout.ms >= 1 && timeout.ms <= asked);
          if (timeout.by === TRANSACTION_TIMEOUT) {
            // Whole seconds, never past what was left by a second or more.
            assert.ok(deadline !== undefined && timeout.ms % TRANSACTION_STEP_MS === 0);
            assert.ok(timeout.ms <= Math.max(0, fromNow!) + TRANSACTION_STEP_MS, `${timeout.ms}`);
          } else {
            assert.equal(timeout.ms, asked);
            assert.equal(timeout.by, call !== undefined ? "withTimeout" : "pool.query-timeout");
          }
        },
      ),
      propertyOptions(),
    );
  });
});

describe("query timeout on SQLite", () => {
  // Refused before any handle opens: on every runtime, with SQLite built in or not.
  const datasource: Datasource = {
    name: "local",
    kind: "sqlite",
    location: ":memory:",
    migrationsEnabled: false,
    strictOrder: false,
    validateOnMigrate: false,
    table: "framework_migrations",
  };

  it("is refused: a synchronous statement cannot be stopped, and saying so beats pretending", async () => {
    const pool = await openPool(datasource, {});
    try {
      assert.throws(
        () => new SqlClient(pool).withTimeout(200),
        /datasource "local": withTimeout\(\) cannot be kept on SQLite/,
      );
    } finally {
      await pool.close();
    }
    await assert.rejects(
      openPool(datasource, { queryTimeoutMs: 200 }),
      /datasource "local": pool\.query-timeout cannot be kept on SQLite/,
    );
    // In the configuration: named where it is written.
    await assert.rejects(
      bootstrap({
        config: {
          datasource: [{ name: "local", url: "sqlite::memory:", pool: { "query-timeout": "5s" } }],
        },
        data: data(),
      }),
      {
        name: "ConfigError",
        message: /datasource\[0\]\.pool\.query-timeout cannot be kept on SQLite/,
      },
    );
  });
});

for (const kind of (["postgres", "mysql"] as const).filter((k) => KINDS.includes(k))) {
  describe(`query timeout on ${kind}`, () => {
    const open = testPools();
    const database = datasourceEntries();
    const long = LONG[kind];
    const session = SESSION[kind];

    it("pool.query-timeout: the database stops the statement, and its connection serves the next call", async () => {
      // As an app configures it.
      const { entry } = await database(kind, "main", {
        pool: { "max-size": 1, "query-timeout": "200ms" },
      });
      const app = await bootstrap({ config: { datasource: [entry] }, data: data() });
      try {
        const sql = app.getBean(SqlClient);
        const before = await session(sql);
        const error = await rejection(long(sql));
        assert.equal(error.reason, "timeout");
        assert.match(
          error.message,
          /stopped by the database at its query timeout \(200 ms, pool\.query-timeout\)/,
        );
        // The one connection of the pool, kept: the same session answers.
        assert.equal(await session(sql), before);
      } finally {
        await app.close();
      }
    });

    it("inside a transaction with a timeout, the database stops a statement at the first of the two", async () => {
      const { pool } = await open(kind, { maxSize: 1 });
      const sql = new SqlClient(pool);
      const before = await session(sql);
      // What is left of the transaction's 0.3 s comes before the statement's 60 s.
      const error = await rejection(sql.transaction(async () => {
        await long(sql.withTimeout(60_000));
      }, { timeout: 0.3 }));
      assert.equal(error.reason, "transaction");
      assert.match(error.message, /stopped by the database at the transaction's timeout/);
      // Stopped by the database, not cut by the client: the connection was kept.
      assert.equal(await session(sql), before);
    });

    // Statements of one transaction run one after another on its connection: one waiting its
    // turn is not running, and its own timeout (the database's, from when it starts) must not
    // be counted by the client from when it was queued.
    it("a withTimeout statement waiting behind another in its transaction is not cut while it waits", async () => {
      const { pool } = await open(kind, { maxSize: 1 });
      const sql = new SqlClient(pool);
      const before = await session(sql);
      const results = await sql.transaction(async () => {
        const [first, second] = await Promise.all([
          kind === "postgres"
            ? sql.withTimeout(10_000).query`SELECT pg_sleep(${2}) AS slept`
            : sql.withTimeout(10_000).query`SELECT SLEEP(${2}) AS slept`,
          sql.withTimeout(200).query`SELECT 1 AS one`,
        ]);
        return { first: first.length, second };
      }, { timeout: 30 });
      assert.deepEqual(results, { first: 1, second: [{ one: 1 }] });
      // Nothing was cut: the connection was kept.
      assert.equal(await session(sql), before);
    });

    it("withTimeout(ms): its statements only, outside and inside a transaction", async () => {
      const { pool } = await open(kind, { maxSize: 1 });
      const sql = new SqlClient(pool);
      const before = await session(sql);
      const quick = sql.withTimeout(200);
      const error = await rejection(long(quick));
      assert.equal(error.reason, "timeout");
      assert.match(error.message, /query timeout \(200 ms, withTimeout\)/);
      assert.equal(await session(sql), before);
      // The client it came from keeps no timeout: a statement past 200 ms runs to its end.
      const slept = kind === "postgres"
        ? sql.query`SELECT pg_sleep(${0.4}) AS slept`
        : sql.query`SELECT SLEEP(${0.4}) AS slept`;
      assert.equal((await slept).length, 1);
      // Inside a transaction, on the transaction's connection.
      // (PostgreSQL aborts the transaction there, as at any failure; MariaDB goes on.)
      const inside = await rejection(sql.transaction(async () => {
        assert.equal(await session(sql), before);
        const failure = await rejection(long(quick));
        assert.equal(failure.reason, "timeout");
        throw failure;
      }));
      assert.equal(inside.reason, "timeout");
      // The rollback undid what the transaction set in the session: the timeout still holds.
      assert.equal((await rejection(long(quick))).reason, "timeout");
      assert.equal(await session(quick), before);
    });

    // In a transaction a stream's batches and the loop's own statements share the session: a
    // withTimeout call in the loop must not cut the stream's next batch.
    if (kind === "postgres") {
      it("a withTimeout call inside a stream's loop leaves the stream's next batch its own", async () => {
        const { pool } = await open(kind, { maxSize: 1 });
        const sql = new SqlClient(pool);
        let read = 0;
        await sql.transaction(async () => {
          const slow = sql.stream<{ n: number }>`
            SELECT n, CASE WHEN n = 1500 THEN pg_sleep(${0.3}) END AS slept
            FROM generate_series(1, 2000) AS n`;
          for await (const _ of slow) {
            if (read++ === 0) await sql.withTimeout(50).query`SELECT 1 AS one`;
          }
        });
        assert.equal(read, 2000);
      });
    }

    // A batch is a statement (FETCH): one sent after the transaction's timeout passed fails, as
    // any statement then does, rather than run under the second the limit goes up to.
    if (kind === "postgres") {
      it("a stream's batch sent after the transaction's timeout fails, and the transaction rolls back", async () => {
        const { pool } = await open(kind, { maxSize: 1, queryTimeoutMs: 60_000 });
        const sql = new SqlClient(pool);
        let read = 0;
        // Each batch of 1000 rows takes 0.3 s of the database's time: the third is sent past 0.5 s.
        const error = await rejection(sql.transaction(async () => {
          const slow = sql.stream<{ n: number }>`
            SELECT n, CASE WHEN n % 1000 = 0 THEN pg_sleep(${0.3}) END AS slept
            FROM generate_series(1, 5000) AS n`;
          for await (const _ of slow) read++;
        }, { timeout: 0.5 }));
        assert.equal(error.reason, "transaction", error.message);
        assert.match(error.message, /ran past its timeout/);
        assert.ok(read < 5000, `${read} rows read`);
      });
    }

    if (kind === "postgres") {
      // The two statements share the transaction's session: each must run under its own.
      it("two withTimeout calls at once in one transaction each run under their own timeout", async () => {
        const { pool } = await open(kind, { maxSize: 1 });
        const sql = new SqlClient(pool);
        let outcomes: PromiseSettledResult<unknown>[] = [];
        // The stopped statement aborts the transaction (PostgreSQL): its COMMIT rolls back.
        await rejection(sql.transaction(async () => {
          outcomes = await Promise.allSettled([
            sql.withTimeout(60_000).query`SELECT pg_sleep(${0.3}) AS slept`,
            sql.withTimeout(100).query`SELECT pg_sleep(${5}) AS slept`,
          ]);
        }));
        const [first, second] = outcomes;
        assert.equal(first.status, "fulfilled", String((first as PromiseRejectedResult).reason));
        assert.equal(second.status, "rejected");
        const error = (second as PromiseRejectedResult).reason as DataError;
        assert.equal(error.reason, "timeout", error.message);
        assert.match(error.message, /query timeout \(100 ms, withTimeout\)/);
      });

      // A rollback to a savepoint undoes the SET LOCAL sent since: the session is back at the
      // value before it, which the next statement must not take for the one it set.
      it("after a NESTED call rolled back, a statement runs under its own timeout again", async () => {
        const { pool } = await open(kind, { maxSize: 1 });
        const sql = new SqlClient(pool);
        const slept = await sql.transaction(async () => {
          await sql.withTimeout(100).query`SELECT ${1}::int AS one`;
          await assert.rejects(
            sql.transaction(async () => {
              await sql.withTimeout(60_000).query`SELECT ${1}::int AS one`;
              throw new Error("undone");
            }, { propagation: "NESTED" }),
            /undone/,
          );
          return await sql.withTimeout(60_000).query`SELECT pg_sleep(${0.3}) AS slept`;
        });
        assert.equal(slept.length, 1);
      });

      // A deferred constraint trigger runs at COMMIT: the last statement's timeout must not cut it.
      it("a COMMIT after a withTimeout statement runs under the pool's timeout, not that one's", async () => {
        const { pool, admin } = await open(kind, { maxSize: 1 });
        const sql = new SqlClient(pool);
        await sql.unsafe(`
          CREATE TABLE checked (v int NOT NULL);
          CREATE FUNCTION slow_check() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$;
          CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON checked DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION slow_check();`);
        await sql.transaction(async () => {
          await sql.execute`INSERT INTO checked (v) VALUES (${1})`;
          await sql.withTimeout(100).query`SELECT ${1}::int AS one`;
        });
        assert.deepEqual(await admin.query("SELECT v FROM checked"), [{ v: 1 }]);
        // And the session runs the next call under the pool's timeout (none) too.
        assert.deepEqual(await sql.query`SELECT current_setting('statement_timeout') AS t`, [
          { t: "0" },
        ]);
      });

      // A SET the statement needed is part of it: its failure is the statement's.
      it("a statement whose timeout the session refuses fails naming that statement", async () => {
        const { pool } = await open(kind, { maxSize: 1 });
        const sql = new SqlClient(pool);
        // Past PostgreSQL's range for statement_timeout (2^31 - 1 ms).
        const outside = await rejection(
          sql.withTimeout(3_000_000_000).query`SELECT ${1}::int AS one`,
        );
        assert.equal(outside.statement, "SELECT $1::int AS one");
        assert.match(
          outside.message,
          /SELECT \$1::int AS one: invalid value for parameter "statement_timeout"/,
        );
        // In a transaction a failure aborted: the timeout's SET fails first.
        const inside = await rejection(sql.transaction(async () => {
          await rejection(sql.query`SELECT * FROM missing_table`);
          const error = await rejection(sql.withTimeout(100).query`SELECT ${2}::int AS two`);
          assert.equal(error.statement, "SELECT $1::int AS two");
          assert.match(error.message, /not run: the database aborted the transaction/);
        }));
        assert.equal(inside.reason, "transaction", inside.message);
      });
    }

    if (kind === "mysql") {
      // The limit is part of the statement's text (SET STATEMENT ... FOR): were it what is left
      // to the millisecond, each statement of a loop would be prepared anew.
      it("in a transaction with a timeout, a loop's statements share their prepared statement", async () => {
        const { pool } = await open(kind, { maxSize: 1, queryTimeoutMs: 120_000 });
        const sql = new SqlClient(pool);
        const prepares = async () =>
          Number(
            (await sql.one<{ n: unknown }>`
              SELECT VARIABLE_VALUE AS n FROM information_schema.SESSION_STATUS
              WHERE VARIABLE_NAME = ${"COM_STMT_PREPARE"}`).n,
          );
        const { made, seconds } = await sql.transaction(async () => {
          // Once, so that the count's own statement is prepared before the loop.
          await prepares();
          const before = await prepares();
          const started = performance.now();
          for (let i = 0; i < 200; i++) await sql.query`SELECT ${i} AS i`;
          const seconds = (performance.now() - started) / 1000;
          return { made: (await prepares()) - before, seconds };
        }, { timeout: 60 });
        // One text per whole second left: the loop's, and its count's, at most once more each
        // time a second passes.
        assert.ok(made <= 2 * (Math.floor(seconds) + 2), `${made} prepared in ${seconds} s`);
      });
    }

    // The session keeps the timeout a withTimeout call set in it (PostgreSQL): a later call on
    // that connection without one must not run under it, a stream's statements included.
    it("a stream after a withTimeout call on the same connection runs without that timeout", async () => {
      const { pool } = await open(kind, { maxSize: 1 });
      const sql = new SqlClient(pool);
      const before = await session(sql);
      assert.equal((await rejection(long(sql.withTimeout(100)))).reason, "timeout");
      const rows: unknown[] = [];
      const slow = kind === "postgres"
        ? sql.stream`SELECT pg_sleep(${0.3}) AS slept`
        : sql.stream`SELECT SLEEP(${0.3}) AS slept`;
      for await (const row of slow) rows.push(row);
      assert.equal(rows.length, 1);
      assert.equal(await session(sql), before);
    });
  });
}
