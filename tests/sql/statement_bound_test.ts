import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { openPool } from "../../src/sql/open_pool.ts";
import { DataError } from "../../src/sql/data_error.ts";
import {
  QUERY_TIMEOUT_GRACE_MS,
  queryBound,
  statementBound,
  StatementWatch,
} from "../../src/sql/statement_bound.ts";
import { propertyOptions } from "../property.ts";
import type { DataPool } from "../../src/sql/data_pool.ts";
import type { PoolSettings } from "../../src/sql/pool_settings.ts";
import { SqlClient } from "../../src/data/sql_client.ts";
import type { TransactionOptions } from "../../src/data/transaction_options.ts";
import { rejection, testPools } from "./pools.ts";
import { type TcpProxy, tcpProxy } from "./tcp_proxy.ts";

// A give-up for a call that never settles, not a measure: the bounds under test are far below it.
const GIVE_UP_MS = 30_000;

function settledWithin<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const giveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`still waiting after ${GIVE_UP_MS / 1000} s: ${what}`)),
      GIVE_UP_MS,
    );
  });
  return Promise.race([promise, giveUp]).finally(() => clearTimeout(timer));
}

describe("statement_bound", () => {
  it("bounds by the pool's statement-timeout outside a transaction's time, by what is left of it inside", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.option(fc.integer({ min: -1e6, max: 1e9 }), { nil: undefined }),
        (statementTimeoutMs, fromNow) => {
          const before = performance.now();
          const deadline = fromNow === undefined ? undefined : before + fromNow;
          const bound = statementBound(statementTimeoutMs, deadline);
          const after = performance.now();
          if (deadline === undefined) {
            assert.deepEqual(bound, { ms: statementTimeoutMs, transaction: false });
          } else {
            assert.equal(bound.transaction, true);
            // Never below 1 ms (a deadline passed still waits a little: the timer's floor).
            assert.ok(bound.ms >= 1);
            assert.ok(bound.ms <= Math.max(1, deadline - before), String(bound.ms));
            assert.ok(bound.ms >= Math.max(1, deadline - after), String(bound.ms));
          }
        },
      ),
      propertyOptions(),
    );
  });

  it("waits for a statement with a query timeout past that timeout, so that the database stops it first", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        (statementTimeoutMs, queryTimeoutMs) => {
          const bound = queryBound(statementTimeoutMs, undefined, queryTimeoutMs);
          assert.equal(bound.transaction, false);
          assert.ok(bound.ms >= queryTimeoutMs + QUERY_TIMEOUT_GRACE_MS, String(bound.ms));
          assert.equal(
            bound.ms,
            Math.max(statementTimeoutMs, queryTimeoutMs + QUERY_TIMEOUT_GRACE_MS),
          );
          // Inside a transaction's time, what is left of it bounds the wait, as without one.
          assert.equal(
            queryBound(statementTimeoutMs, performance.now() - 1, queryTimeoutMs).transaction,
            true,
          );
        },
      ),
      propertyOptions(),
    );
  });

  // The bound counts from the queue, the database's timeout from the statement's start: one
  // waiting behind its transaction's others is cut only by the transaction's end.
  it("inside a transaction's time, waits at least what is left of it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: -1_000, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        (statementTimeoutMs, leftMs, queryTimeoutMs) => {
          const before = performance.now();
          const bound = queryBound(statementTimeoutMs, before + leftMs, queryTimeoutMs);
          const elapsed = performance.now() - before;
          assert.equal(bound.transaction, true);
          assert.ok(bound.ms >= queryTimeoutMs + QUERY_TIMEOUT_GRACE_MS, String(bound.ms));
          assert.ok(bound.ms >= leftMs - elapsed, `${bound.ms} < ${leftMs} left`);
          assert.ok(
            bound.ms <= Math.max(queryTimeoutMs + QUERY_TIMEOUT_GRACE_MS, leftMs),
            String(bound.ms),
          );
        },
      ),
      propertyOptions(),
    );
  });

  it("gives what comes in time, and a timeout naming the statement and the key once the bound passed", async () => {
    const watch = new StatementWatch("main");
    const bound = { ms: 10, transaction: false };
    assert.equal(await watch.within("SELECT 1", bound, Promise.resolve(1), () => {}), 1);
    let late = 0;
    const error = await rejection(
      watch.within("SELECT 2\nFROM t", bound, new Promise(() => {}), () => late++),
    );
    assert.equal(late, 1);
    assert.equal(error.reason, "timeout");
    assert.equal(
      error.message,
      'datasource "main": SELECT 2: no answer within 10 ms (pool.statement-timeout): the ' +
        "connection is closed, and the next call gets another",
    );
    const inTransaction = await rejection(
      watch.within("SELECT 3", { ms: 5, transaction: true }, new Promise(() => {}), () => {}),
    );
    assert.equal(inTransaction.reason, "transaction");
    assert.match(inTransaction.message, /SELECT 3: no answer before the transaction's timeout/);
    const refused = new DataError({ datasource: "main", reason: "statement", message: "no" });
    assert.equal(
      await rejection(watch.within("SELECT 4", bound, Promise.reject(refused), () => {})),
      refused,
    );
    // Many in flight, one late among them: it alone fails, the others are answered.
    let answer!: (value: number) => void;
    const slow = watch.within(
      "SELECT 5",
      { ms: 60_000, transaction: false },
      new Promise<number>((r) => answer = r),
      () => {},
    );
    const stuck = rejection(watch.within("SELECT 6", bound, new Promise(() => {}), () => {}));
    assert.equal((await stuck).reason, "timeout");
    answer(5);
    assert.equal(await slow, 5);
  });
});

for (const kind of ["postgres", "mysql"] as const) {
  describe(`a ${kind} database that stops answering`, () => {
    const open = testPools();
    const proxies: TcpProxy[] = [];
    const pools: DataPool[] = [];
    // Registered after testPools' own, so run before it: these pools go before the databases.
    after(async () => {
      for (const proxy of proxies) proxy.release();
      for (const pool of pools) await pool.close();
      for (const proxy of proxies) await proxy.down();
    });

    // A pool on a fresh database through a proxy that can stop answering.
    async function throughProxy(settings: PoolSettings) {
      const { datasource } = await open(kind);
      const url = new URL(datasource.location);
      const proxy = await tcpProxy(url.hostname, Number(url.port));
      proxies.push(proxy);
      await proxy.up();
      url.port = String(proxy.port);
      const pool = await openPool({ ...datasource, location: url.href }, settings);
      pools.push(pool);
      return { proxy, pool, sql: new SqlClient(pool), name: datasource.name };
    }

    // A transaction whose database stops answering after its first statement, `then` run next.
    // Its BEGIN and first statement must answer within its timeout, which a loaded machine can
    // miss: the timeout doubles (to at most 30 s) until they did.
    async function stopsAnsweringIn(
      sql: SqlClient,
      proxy: TcpProxy,
      then: () => Promise<unknown>,
      options: TransactionOptions = {},
    ): Promise<DataError> {
      let timeout = options.timeout;
      for (;;) {
        let held = false;
        const error = await settledWithin(
          rejection(sql.transaction(async () => {
            await sql.query`SELECT 1 AS one`;
            proxy.hold();
            held = true;
            await then();
          }, timeout === undefined ? options : { ...options, timeout })),
          "a transaction on a database that stops answering",
        );
        // Not held: the transaction's timeout passed before its first statement answered.
        if (held || timeout === undefined || timeout === 30) return error;
        assert.equal(error.reason, "transaction", error.message);
        timeout = Math.min(timeout * 2, 30);
      }
    }

    it("fails each call within the statement bound, and the pool serves again once it answers", async () => {
      const maxSize = 2;
      const { proxy, sql, name } = await throughProxy({
        maxSize,
        statementTimeoutMs: 300,
        // Met by a local connect on a loaded machine (CI saw one pass 300 ms), and still well
        // inside the bound the rounds below are given.
        connectTimeoutMs: 2_000,
        acquireTimeoutMs: 60_000,
      });
      // Every connection the pool may open, open and idle.
      await Promise.all(
        Array.from({ length: maxSize }, () => sql.query`SELECT 1 AS one`),
      );
      proxy.hold();
      // As many calls as the pool has connections: each fails on its own bound, none waits on
      // the others, and each frees its connection.
      for (let round = 0; round < 2; round++) {
        const errors = await settledWithin(
          Promise.all(Array.from({ length: maxSize }, () => rejection(sql.query`SELECT 2 AS two`))),
          "the calls on a database that does not answer",
        );
        for (const error of errors) {
          assert.equal(error.datasource, name);
          // The first round on the connections open, cut by the statement bound; the next one
          // connecting anew. On PostgreSQL a connection idle past 500 ms is checked before it is
          // handed out (a loaded machine may take that long between the two rounds): its check
          // fails within connect-timeout, and the one opened in its place cannot connect.
          const checked = kind === "postgres" && error.reason === "connect";
          if (round === 0 && !checked) {
            assert.equal(error.reason, "timeout", error.message);
            assert.match(
              error.message,
              /SELECT 2 AS two: no answer within 300 ms \(pool\.statement-timeout\)/,
            );
          } else {
            assert.equal(error.reason, "connect", error.message);
            assert.match(error.message, /cannot connect: /);
          }
        }
      }
      proxy.release();
      assert.deepEqual(
        await settledWithin(sql.query`SELECT 3 AS three`, "a call once it answers"),
        [{ three: 3 }],
      );
    });

    // MySQL alone: PostgreSQL checks a connection idle past 500 ms before handing it out, which a
    // loaded machine may reach, and that check has its own bound (acquire-timeout).
    if (kind === "mysql") {
      it("bounds a transaction's BEGIN by its timeout too", async () => {
        const { proxy, sql, name } = await throughProxy({
          maxSize: 1,
          statementTimeoutMs: 600_000,
          acquireTimeoutMs: 60_000,
        });
        await sql.query`SELECT 1 AS one`;
        proxy.hold();
        const error = await settledWithin(
          rejection(sql.transaction(() => sql.query`SELECT 2 AS two`, { timeout: 0.3 })),
          "a transaction begun on a database that stopped answering",
        );
        assert.equal(error.datasource, name);
        assert.equal(error.reason, "transaction", error.message);
        // The transaction's first statement on MySQL: out of autocommit for its whole life.
        assert.match(error.message, /SET autocommit = 0: .*timeout/);
        proxy.release();
      });
    }

    it("bounds a NESTED call's savepoint by the transaction's timeout too", async () => {
      const { proxy, sql, name } = await throughProxy({
        maxSize: 1,
        statementTimeoutMs: 600_000,
        acquireTimeoutMs: 60_000,
      });
      const error = await stopsAnsweringIn(
        sql,
        proxy,
        () => sql.transaction(() => sql.query`SELECT 2 AS two`, { propagation: "NESTED" }),
        { timeout: 0.3 },
      );
      assert.equal(error.datasource, name);
      assert.equal(error.reason, "transaction", error.message);
      assert.match(error.message, /SAVEPOINT thaw_savepoint_1: .*timeout/);
      proxy.release();
      assert.deepEqual(
        await settledWithin(sql.query`SELECT 3 AS three`, "a call once it answers"),
        [{ three: 3 }],
      );
    });

    // Runs `long` in a transaction on `sql` past its statement-timeout, then waits for that
    // session to go from the server (looked for outside any transaction, whose view of sessions
    // stays as it was), with a give-up far past any bound.
    async function cutSession(
      sql: SqlClient,
      long: () => Promise<unknown>,
      cut: RegExp,
    ): Promise<void> {
      let id: unknown;
      const error = await settledWithin(
        rejection(sql.transaction(async () => {
          [{ id }] = kind === "postgres"
            ? await sql.query<{ id: unknown }>`SELECT pg_backend_pid() AS id`
            : await sql.query<{ id: unknown }>`SELECT CONNECTION_ID() AS id`;
          await long();
        })),
        "a statement past its statement-timeout",
      );
      assert.equal(error.reason, "timeout", error.message);
      // The statement meant to run long was cut, not one before it that a loaded machine slowed.
      assert.match(error.message, cut);
      const alive = () =>
        kind === "postgres"
          ? sql.query`SELECT pid FROM pg_stat_activity WHERE pid = ${Number(id)}`
          : sql.query`SELECT ID FROM information_schema.PROCESSLIST WHERE ID = ${Number(id)}`;
      const giveUp = performance.now() + GIVE_UP_MS;
      while ((await alive()).length > 0) {
        assert.ok(performance.now() < giveUp, `session ${String(id)} still runs on the server`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    it("ends a timed-out statement's session on the server", async () => {
      const { pool } = await open(kind, { maxSize: 2, statementTimeoutMs: 2_000 });
      const sql = new SqlClient(pool);
      // Runs far past the bound, as a slow report does.
      await cutSession(
        sql,
        () => kind === "postgres" ? sql.query`SELECT pg_sleep(600)` : sql.query`SELECT SLEEP(600)`,
        /SLEEP\(600\)/i,
      );
    });

    it("ends a session whose statement timed out waiting on a lock, and the locks it held", async () => {
      const { pool, admin } = await open(kind, { maxSize: 2, statementTimeoutMs: 2_000 });
      const sql = new SqlClient(pool);
      // Made beside the pool, with no bound: a DDL statement slowed past the pool's 2 s by a
      // loaded machine's disk is not what this test is about.
      await admin.query("CREATE TABLE t (id INT PRIMARY KEY, n INT)");
      await admin.query("INSERT INTO t VALUES (1, 0), (2, 0)");
      // Row 1 locked beside the pool, for as long as the test runs.
      await admin.query(kind === "postgres" ? "BEGIN" : "START TRANSACTION");
      await admin.query("UPDATE t SET n = 1 WHERE id = 1");
      try {
        await cutSession(sql, async () => {
          await sql.execute`UPDATE t SET n = 2 WHERE id = 2`;
          await sql.execute`UPDATE t SET n = 2 WHERE id = 1`;
        }, /UPDATE t SET n = 2 WHERE id = 1/);
        // Its lock on row 2 went with it.
        assert.equal((await sql.execute`UPDATE t SET n = 3 WHERE id = 2`).rowsAffected, 1);
      } finally {
        await admin.query("ROLLBACK");
      }
    });

    it("says that a COMMIT left unanswered may or may not have committed", async () => {
      const { proxy, sql, name } = await throughProxy({
        maxSize: 1,
        statementTimeoutMs: 1_000,
        acquireTimeoutMs: 60_000,
      });
      const error = await stopsAnsweringIn(sql, proxy, () => Promise.resolve());
      assert.equal(error.datasource, name);
      assert.equal(error.reason, "timeout", error.message);
      assert.match(error.message, /COMMIT: no answer within 1000 ms \(pool\.statement-timeout\)/);
      assert.match(error.message, /whether the transaction committed or not is unknown/);
      proxy.release();
    });

    it("closes the connection a statement timed out on", async () => {
      const { proxy, sql } = await throughProxy({
        maxSize: 1,
        statementTimeoutMs: 300,
        connectTimeoutMs: 2_000,
        acquireTimeoutMs: 60_000,
      });
      await sql.query`SELECT 1 AS one`;
      assert.equal(proxy.carried(), 1);
      proxy.hold();
      assert.equal((await rejection(sql.query`SELECT 2 AS two`)).reason, "timeout");
      // The client's side closed (by each runtime's socket): the server's side goes with it,
      // and with it the session and its locks. Waited on, with a give-up far past any bound.
      const giveUp = performance.now() + GIVE_UP_MS;
      while (proxy.carried() > 0) {
        assert.ok(performance.now() < giveUp, `${proxy.carried()} connections still open`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      proxy.release();
    });

    it("bounds a transaction's statement by the transaction's timeout", async () => {
      const { proxy, sql, name } = await throughProxy({
        maxSize: 1,
        statementTimeoutMs: 600_000,
        acquireTimeoutMs: 60_000,
      });
      const error = await stopsAnsweringIn(sql, proxy, () => sql.query`SELECT 2 AS two`, {
        timeout: 0.3,
      });
      assert.equal(error.datasource, name);
      assert.equal(error.reason, "transaction", error.message);
      assert.match(error.message, /SELECT 2 AS two: .*timeout/);
      proxy.release();
      assert.deepEqual(
        await settledWithin(sql.query`SELECT 3 AS three`, "a call once it answers"),
        [{ three: 3 }],
      );
    });
  });
}
