// sql.stream on each database: rows read a batch at a time (a PostgreSQL cursor, MariaDB's
// streamed result, SQLite's iterator), on the transaction's connection inside one, else on a
// connection held for the iteration and given back however the loop ends.
import assert from "node:assert/strict";
import { DIALECTS } from "../../src/sql/dialects.ts";
import { describe, it } from "node:test";
import { SqlClient } from "../../src/data/sql_client.ts";
import { type Kind, KINDS, rejection, testPools } from "../sql/pools.ts";
import { RUNTIME } from "../runtime.ts";
import { until } from "../runtime/raw_client.ts";

/** More rows than a batch, many times over: the rows come in several batches. */
const COUNT = 20_000;

// The numbers 1..count: a recursive CTE, but on MariaDB (whose recursion stops at
// max_recursive_iterations, 1000 by default) its sequence table.
function numbers(sql: SqlClient, count: number): AsyncIterable<{ n: number }> {
  return sql.kind === "mysql"
    ? sql.stream<{ n: number }>`SELECT seq AS n FROM ${SqlClient.identifier(`seq_1_to_${count}`)}`
    : sql.stream<{ n: number }>`
      WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ${count})
      SELECT n FROM r`;
}

// A statement whose row `at` fails on the database, after the rows before it were sent.
async function failingAt(sql: SqlClient, kind: Kind, at: number): Promise<AsyncIterable<unknown>> {
  switch (kind) {
    case "postgres":
      return sql.stream`SELECT n, 1 / (${at} - n) AS q FROM generate_series(1, ${COUNT}) AS n`;
    case "sqlite":
      return sql.stream`
        WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ${COUNT})
        SELECT n, CASE WHEN n = ${at} THEN abs(-9223372036854775807 - 1) ELSE n END AS q FROM r`;
    case "mysql":
      // MariaDB's division by zero is NULL: a function that signals fails the row instead.
      await sql.unsafe(
        "CREATE FUNCTION fail_at(n INT, at_row INT) RETURNS INT DETERMINISTIC BEGIN " +
          "IF n = at_row THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'failed at the row'; " +
          "END IF; RETURN n; END",
      );
      return sql.stream`
        SELECT seq AS n, fail_at(seq, ${at}) AS q FROM ${
        SqlClient.identifier(`seq_1_to_${COUNT}`)
      }`;
  }
}

for (const kind of KINDS) {
  describe(`sql.stream on ${kind}`, () => {
    const open = testPools();
    // One connection: a stream that kept its connection would leave the next call waiting.
    const single = async () => {
      const { pool, admin } = await open(kind, { maxSize: 1, acquireTimeoutMs: 5_000 });
      return { sql: new SqlClient(pool), pool, admin };
    };

    it("gives every row, in order, across many batches", async () => {
      const { sql, pool } = await single();
      let expected = 1;
      for await (const row of numbers(sql, COUNT)) {
        assert.equal(Number(row.n), expected++);
      }
      assert.equal(expected, COUNT + 1);
      // Run again: the iterable is a statement, not one run of it.
      let again = 0;
      for await (const _ of numbers(sql, 3)) again++;
      assert.equal(again, 3);
      assert.equal(pool.idleCount(), 1);
    });

    it("runs the statement anew for each loop over the same iterable", async () => {
      const { sql } = await single();
      await sql.execute`CREATE TABLE looped (v INT NOT NULL)`;
      await sql.execute`INSERT INTO looped (v) VALUES (1), (2), (3)`;
      const rows = sql.stream<{ v: number }>`SELECT v FROM looped ORDER BY v`;
      const first: number[] = [];
      for await (const row of rows) first.push(Number(row.v));
      await sql.execute`INSERT INTO looped (v) VALUES (4)`;
      const second: number[] = [];
      for await (const row of rows) second.push(Number(row.v));
      assert.deepEqual({ first, second }, { first: [1, 2, 3], second: [1, 2, 3, 4] });
      // A loop left early leaves the next one whole.
      for await (const _ of rows) break;
      const third: number[] = [];
      for await (const row of rows) third.push(Number(row.v));
      assert.deepEqual(third, [1, 2, 3, 4]);
    });

    it("gives a write's RETURNING rows, committed outside a transaction, in one inside", async () => {
      const { sql, admin } = await single();
      await sql.execute`CREATE TABLE returned (v INT NOT NULL)`;
      const inserted: number[] = [];
      for await (
        const row of sql.stream<{ v: number }>`
          INSERT INTO returned (v) VALUES (${1}), (${2}), (${3}) RETURNING v`
      ) {
        inserted.push(Number(row.v));
      }
      assert.deepEqual(inserted.sort(), [1, 2, 3]);
      assert.equal((await admin.query("SELECT v FROM returned")).length, 3, "committed");
      const deleted = await sql.transaction(async () => {
        const rows: number[] = [];
        for await (
          const row of sql.stream<{ v: number }>`DELETE FROM returned WHERE v > ${1} RETURNING v`
        ) {
          rows.push(Number(row.v));
        }
        assert.equal((await admin.query("SELECT v FROM returned")).length, 3, "uncommitted");
        return rows;
      });
      assert.deepEqual(deleted.sort(), [2, 3]);
      assert.deepEqual(await sql.query`SELECT v FROM returned`, [{ v: 1 }]);
      if (kind === "postgres") {
        // A WITH that writes, which a cursor does not take either.
        const moved: unknown[] = [];
        for await (
          const row of sql
            .stream`WITH gone AS (DELETE FROM returned RETURNING v) SELECT v FROM gone`
        ) {
          moved.push(row);
        }
        assert.deepEqual(moved, [{ v: 1 }]);
        assert.equal((await admin.query("SELECT v FROM returned")).length, 0);
      }
    });

    it("frees its connection at a break after 10 rows: a pool of one serves the next call", async () => {
      const { sql } = await single();
      const seen: number[] = [];
      for await (const row of numbers(sql, COUNT)) {
        seen.push(Number(row.n));
        if (seen.length === 10) break;
      }
      assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
      // The iterator's own return() (what a break calls) frees it too.
      const iterator = numbers(sql, COUNT)[Symbol.asyncIterator]();
      assert.equal(Number((await iterator.next()).value?.n), 1);
      await iterator.return?.();
      assert.deepEqual(await sql.query`SELECT 2 AS two`, [{ two: 2 }]);
    });

    it("frees its connection when the loop throws, the loop's error reaching the caller", async () => {
      const { sql } = await single();
      await assert.rejects(
        (async () => {
          for await (const row of numbers(sql, COUNT)) {
            if (row.n === 5) throw new Error("the loop's own failure");
          }
        })(),
        /the loop's own failure/,
      );
      assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
    });

    it("rejects with a DataError at a database error after some rows, freeing the connection", async () => {
      const { sql } = await single();
      const at = COUNT - 10;
      const rows = await failingAt(sql, kind, at);
      let seen = 0;
      const error = await rejection((async () => {
        for await (const _ of rows) seen++;
      })());
      assert.equal(error.reason, "statement");
      assert.equal(error.datasource, `${kind}_main`);
      assert.ok(seen < at, `rows before the failure: ${seen}`);
      // Deno's SQLite reads the rows whole (its iterator hides a failure): none come before it.
      if (kind !== "sqlite" || RUNTIME !== "deno") assert.ok(seen > 0, "rows before the failure");
      assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
    });

    it("runs in the transaction it is called in: its uncommitted rows, its connection", async () => {
      const { sql, admin } = await single();
      await sql.execute`CREATE TABLE items (v INT NOT NULL)`;
      const seen = await sql.transaction(async () => {
        for (let v = 1; v <= 30; v++) await sql.execute`INSERT INTO items (v) VALUES (${v})`;
        const rows: number[] = [];
        // A pool of one: the stream can only be on the transaction's connection.
        for await (const row of sql.stream<{ v: number }>`SELECT v FROM items ORDER BY v`) {
          rows.push(Number(row.v));
        }
        assert.equal((await admin.query("SELECT v FROM items")).length, 0, "uncommitted");
        return rows;
      });
      assert.equal(seen.length, 30);
      assert.equal(seen[29], 30);
    });

    it("refuses the reads after its transaction ended, and the pool serves on", async () => {
      const { sql } = await single();
      const iterator = await sql.transaction(async () => {
        const it = numbers(sql, COUNT)[Symbol.asyncIterator]();
        assert.equal(Number((await it.next()).value?.n), 1);
        return it;
      });
      const error = await rejection(
        (async () => {
          while (!(await iterator.next()).done) { /* the rest of a batch already read */ }
        })(),
      );
      assert.equal(error.reason, "transaction");
      assert.match(error.message, /after its transaction ended/);
      assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
    });

    it("is refused or served beside another stream on one transaction's connection", async () => {
      const { sql } = await single();
      await sql.transaction(async () => {
        const first = numbers(sql, COUNT)[Symbol.asyncIterator]();
        assert.equal(Number((await first.next()).value?.n), 1);
        const second = numbers(sql, 5)[Symbol.asyncIterator]();
        if (kind === "mysql") {
          // MariaDB sends a result whole before the connection takes another statement.
          const error = await rejection(second.next());
          assert.equal(error.reason, "transaction");
          assert.match(error.message, /a stream's rows are still being read/);
          await assert.rejects(sql.query`SELECT 1 AS one`, /a stream's rows are still being read/);
        } else {
          let count = 0;
          for await (const _ of { [Symbol.asyncIterator]: () => second }) count++;
          assert.equal(count, 5);
        }
        await first.return?.();
        assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
      });
    });

    if (kind === "postgres") {
      it("masks the statement's values in a failure of a later batch", async () => {
        const { sql } = await single();
        const secret = "hunter2-secret";
        // The value is cast at row 1,500, in the second FETCH, which carries no parameter itself.
        const rows = sql.stream`
          SELECT n, (CASE WHEN n = 1500 THEN ${secret} ELSE n::text END)::int AS v
          FROM generate_series(1, 2000) AS n`;
        const error = await rejection((async () => {
          for await (const _ of rows) { /* read */ }
        })());
        assert.equal(error.reason, "statement");
        assert.equal(error.code, "22P02");
        assert.ok(!error.message.includes(secret), error.message);
        assert.match(error.message, /: SELECT n, \(CASE WHEN n = 1500/);
      });
    }

    if (kind !== "sqlite") {
      it("bounds each batch's wait by statement-timeout: a timeout, and the pool serves on", async () => {
        const { pool } = await open(kind, {
          maxSize: 1,
          acquireTimeoutMs: 20_000,
          statementTimeoutMs: 500,
        });
        const sql = new SqlClient(pool);
        // Row 1,500 (in the second batch) sleeps a minute: far past the bound.
        const rows = sleepingRows(sql, kind);
        let seen = 0;
        const error = await rejection((async () => {
          for await (const _ of rows) seen++;
        })());
        assert.equal(error.reason, "timeout", error.message);
        assert.match(error.message, /no answer within 500 ms \(pool\.statement-timeout\)/);
        assert.ok(seen < 1500, `rows before the bound: ${seen}`);
        assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
      });
    }

    if (kind !== "sqlite") {
      it("fails at once with reason connection when its connection is killed mid-read", async () => {
        // A bound far past an answer that comes at once: the failure must not wait for it.
        const { pool, admin } = await open(kind, {
          maxSize: 1,
          acquireTimeoutMs: 20_000,
          statementTimeoutMs: 15_000,
        });
        const sql = new SqlClient(pool);
        const session = kind === "postgres"
          ? (await sql.one<{ id: number }>`SELECT pg_backend_pid() AS id`).id
          : (await sql.one<{ id: number }>`SELECT CONNECTION_ID() AS id`).id;
        // Row 1,500 (in the second batch) sleeps a minute: the statement is still running, its
        // rest unsent, when the session is killed.
        const rows = sleepingRows(sql, kind);
        let seen = 0;
        const error = await rejection((async () => {
          for await (const _ of rows) {
            if (++seen > 1) continue;
            await admin.query(
              kind === "postgres"
                ? `SELECT pg_terminate_backend(${Number(session)})`
                : `KILL ${Number(session)}`,
            );
            await until(
              async () =>
                (await admin.query(
                  kind === "postgres"
                    ? `SELECT 1 FROM pg_stat_activity WHERE pid = ${Number(session)}`
                    : `SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ${Number(session)}`,
                )).length === 0,
              "the session ended",
            );
          }
        })());
        assert.equal(error.reason, "connection", error.message);
        assert.match(error.message, /the connection was lost/);
        assert.ok(seen < 1500, `rows before the kill: ${seen}`);
        assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
      });
    }

    // mysql2 tells a statement without a result set as `fields` of nothing, then its OK packet as
    // a `result`: that packet is no row.
    if (kind === "mysql") {
      it("gives the rows of a result set only: none for a write, a CALL's own", async () => {
        const { sql } = await single();
        await sql.execute`CREATE TABLE streamed_write (v INT)`;
        await sql.execute`INSERT INTO streamed_write (v) VALUES (1), (2)`;
        const written: unknown[] = [];
        for await (const row of sql.stream`UPDATE streamed_write SET v = v + 1`) written.push(row);
        assert.deepEqual(written, []);
        await sql.execute`CREATE PROCEDURE streamed_call() SELECT v FROM streamed_write ORDER BY v`;
        const called: unknown[] = [];
        for await (const row of sql.stream`CALL streamed_call()`) called.push(row);
        assert.deepEqual(called, [{ v: 2 }, { v: 3 }]);
      });
    }

    it("refuses more parameters than the database binds in one statement, as query does", async () => {
      const { sql } = await single();
      const limit = DIALECTS[kind].maxParameters;
      const params = Array.from({ length: limit + 1 }, (_, i) => i);
      await assert.rejects(
        async () => {
          for await (const _ of sql.unsafeStream("SELECT 1 AS one", params)) { /* none */ }
        },
        { name: "RangeError", message: new RegExp(`more than .* \\(${limit}\\): split the rows`) },
      );
      // Refused before a connection was taken: the pool of one serves the next call.
      assert.equal((await sql.query`SELECT 1 AS one`).length, 1);
    });

    it("refuses a call with a string, as the other tags do; unsafeStream takes one", async () => {
      const sql = new SqlClient({ name: "main", kind } as never);
      assert.throws(
        () => (sql as unknown as { stream(text: string): unknown }).stream("SELECT 1"),
        (error: unknown) => error instanceof TypeError && /stream\(\) is a tag/.test(error.message),
      );
      assert.throws(
        () => sql.unsafeStream(["SELECT 1"] as unknown as string),
        /unsafeStream\(text, params\) takes a string and an array/,
      );
      const { pool } = await open(kind);
      const placeholder = kind === "postgres" ? "$1" : "?";
      const rows = [];
      for await (const row of new SqlClient(pool).unsafeStream(`SELECT ${placeholder} AS v`, [7])) {
        rows.push(row);
      }
      assert.deepEqual(rows.map((row) => Number(row.v)), [7]);
    });
  });
}

// 2,000 rows of which row 1,500 (in the second batch) sleeps a minute: a statement still running,
// its rest unsent, long after its first rows came.
function sleepingRows(sql: SqlClient, kind: "postgres" | "mysql") {
  return kind === "postgres"
    ? sql.stream`SELECT n, pg_sleep(CASE WHEN n = 1500 THEN 60 ELSE 0 END)::text AS s
        FROM generate_series(1, 2000) AS n`
    : sql.stream`SELECT seq AS n, IF(seq = 1500, SLEEP(60), 0) AS s FROM seq_1_to_2000`;
}
