// integration test: SQLite (the runtime's own), PostgreSQL and MariaDB (tools/databases.sh start)
// SqlLockManager against the real databases: each manager over a pool of its own on one database,
// as in a process of its own, and three real processes of the runtime running the suite on
// PostgreSQL and MariaDB (tests/fixtures/tasks/lock_contender.ts). Every wait is on a state (an
// acquire that resolves, a row that changes), bounded only against one that never comes.
import assert from "node:assert/strict";
import process from "node:process";
import { after, describe, it } from "node:test";
import { SqlClient } from "../../src/data/sql_client.ts";
import { openPool } from "../../src/sql/open_pool.ts";
import type { DataPool } from "../../src/sql/data_pool.ts";
import type { HeldLock, LockRequest } from "../../src/tasks/lock_manager.ts";
import { SqlLockManager } from "../../src/tasks/sql_lock_manager.ts";
import { KINDS, testPools } from "../sql/pools.ts";
import { DB_PASSWORD } from "../migrate/sql/databases.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";
import { assertNoOverlap, contender, startTogether } from "./lock_contenders.ts";
import { assertQueuedRunsFinishAtClose } from "./queued_lock_runs.ts";
import { Bean, Configuration } from "../../mod.ts";
import type { LockManager } from "../../tasks.ts";

const LONG_WAIT = 120_000;

const request = (key: string, waitMs = 0, leaseMs = 60_000): LockRequest => ({
  key,
  waitMs,
  leaseMs,
});

/** Whether `promise` has settled by the time the queued callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true, () => done = true);
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

/** The lock, asserting there was one. */
function held(lock: HeldLock | undefined): HeldLock {
  assert.notEqual(lock, undefined, "expected the lock to be taken");
  return lock!;
}

for (const kind of KINDS) {
  describe(`SqlLockManager on ${kind}`, () => {
    const open = testPools();
    const pools: DataPool[] = [];
    after(async () => {
      for (const pool of pools) await pool.close();
    });

    /** A database with the locks' table; `replica()` is a manager over a pool of its own. */
    async function database() {
      const { pool, datasource, admin } = await open(kind);
      const sql = new SqlClient(pool);
      await sql.unsafe(SqlLockManager.createTable(kind));
      const replica = async (name: string) => {
        const own = await openPool(datasource, {});
        pools.push(own);
        const client = new SqlClient(own);
        return { sql: client, locks: new SqlLockManager(client, { lockedBy: name }) };
      };
      const holder = async (name: string) =>
        (await admin.query(`SELECT locked_by FROM shedlock WHERE name = '${name}'`))[0]
          ?.locked_by as string | undefined;
      return { sql, datasource, admin, replica, holder };
    }

    it("one key: a second try gets nothing, a waiting one gets it once released", async () => {
      const db = await database();
      const a = (await db.replica("host-a")).locks;
      const b = (await db.replica("host-b")).locks;
      const first = held(await a.acquire(request("order-42")));
      assert.equal(await b.acquire(request("order-42")), undefined);
      // Another key is another lock.
      const other = held(await b.acquire(request("order-43")));
      const waiting = b.acquire(request("order-42", LONG_WAIT));
      assert.equal(await settled(waiting), false);
      assert.match((await db.holder("order-42"))!, /^host-a /);
      await first.release();
      const second = held(await waiting);
      assert.match((await db.holder("order-42"))!, /^host-b /);
      await second.release();
      await other.release();
    });

    it("release twice is once, and a late release never frees another's lock", async () => {
      const db = await database();
      const a = (await db.replica("host-a")).locks;
      const b = (await db.replica("host-b")).locks;
      const c = (await db.replica("host-c")).locks;
      const first = held(await a.acquire(request("k")));
      await first.release();
      await first.release();
      const second = held(await b.acquire(request("k")));
      await first.release(); // again: b's lock stays
      assert.equal(await c.acquire(request("k")), undefined);
      await second.release();

      // A holds it for 1 ms, never released in time: B takes it once the lease ended.
      const late = held(await a.acquire(request("late", 0, 1)));
      const taken = held(await b.acquire(request("late", LONG_WAIT)));
      await late.release(); // late: the lock is B's now
      assert.equal(await c.acquire(request("late")), undefined);
      assert.match((await db.holder("late"))!, /^host-b /);
      await taken.release();
      held(await c.acquire(request("late")));
    });

    it("gives each new holder a greater fencing token, and renews only while it holds", async () => {
      const db = await database();
      const a = (await db.replica("host-a")).locks;
      const b = (await db.replica("host-b")).locks;
      const fenced = (leaseMs: number, waitMs = LONG_WAIT): LockRequest => ({
        key: "fenced",
        waitMs,
        leaseMs,
        minHoldMs: 1,
      });
      const tokens: number[] = [];
      // Taken by turns, each released at once (kept a millisecond), then one left to lapse.
      for (let i = 0; i < 6; i++) {
        const lock = held(await (i % 2 === 0 ? a : b).acquire(fenced(60_000)));
        tokens.push(lock.token!);
        assert.equal(await lock.renew!(60_000), true);
        await lock.release();
        assert.equal(await lock.renew!(60_000), false, "given back: no renewal");
      }
      const lapsed = held(await a.acquire(fenced(1)));
      const next = held(await b.acquire(fenced(60_000)));
      tokens.push(lapsed.token!, next.token!);
      for (const [i, token] of tokens.entries()) {
        assert.ok(Number.isSafeInteger(token), `token ${token}`);
        if (i > 0) assert.ok(token > tokens[i - 1], `tokens ${tokens}`);
      }
      // The database's clock, in ms since the epoch.
      assert.ok(Math.abs(tokens[0] - Date.now()) < 3_600_000, `token ${tokens[0]}`);
      // The lapsed holder's lease ended and another holds the lock: lost.
      assert.equal(await lapsed.renew!(60_000), false);
      assert.match((await db.holder("fenced"))!, /^host-b /);
      assert.equal(await next.renew!(60_000), true);
      assert.equal(await a.acquire(fenced(60_000, 0)), undefined);
      await assert.rejects(next.renew!(0), {
        name: "TypeError",
        message: /renew\(leaseMs\) of the lock "fenced": 0 is no whole number/,
      });
      await next.release();
    });

    it("a released lock leaves no row: keys from arguments do not grow the table", async () => {
      const db = await database();
      const a = (await db.replica("host-a")).locks;
      const b = (await db.replica("host-b")).locks;
      const keys = [
        ...Array.from({ length: 40 }, (_, i) => `order-${i}`),
        "x".repeat(500), // stored as its hash
        "sha256:abc",
      ];
      const locks = await Promise.all(keys.map(async (key) => held(await a.acquire(request(key)))));
      const rows = async () =>
        Number((await db.admin.query("SELECT COUNT(*) AS n FROM shedlock"))[0]!.n);
      assert.equal(await rows(), keys.length);
      // A waiter still gets a key handed over by a release that deletes its row.
      const waiting = b.acquire(request("order-0", LONG_WAIT));
      for (const lock of locks) await lock.release();
      await held(await waiting).release();
      assert.equal(await rows(), 0);
    });

    it("every character and very long keys are locks of their own", async () => {
      const db = await database();
      const a = (await db.replica("host-a")).locks;
      const b = (await db.replica("host-b")).locks;
      const keys = [
        ...Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)),
        "\uD800",
        "\uDC00",
        "\uFFFD",
        "😀",
        "Tick",
        "tick",
        "tick ",
        "x".repeat(64),
        "x".repeat(65),
        "x".repeat(100_000),
        "sha256:abc",
        "'; DROP TABLE shedlock; --",
      ];
      const locks: HeldLock[] = [];
      for (const key of keys) {
        locks.push(held(await a.acquire(request(key))));
        assert.equal(await b.acquire(request(key)), undefined, `key ${JSON.stringify(key)}`);
      }
      const rows = await db.admin.query("SELECT name FROM shedlock");
      assert.equal(rows.length, keys.length);
      const names = new Set(rows.map((r) => String(r.name)));
      assert.ok(names.has("x".repeat(64)), "a key the column holds is stored as it is");
      assert.ok(names.has("Tick") && names.has("tick"));
      assert.ok(!names.has("x".repeat(65)), "a longer key is stored as its hash");
      for (const lock of locks) await lock.release();
      for (const key of keys) held(await b.acquire(request(key)));
    });

    it("refuses a request that is not one, naming what is wrong", async () => {
      const db = await database();
      const locks = new SqlLockManager(db.sql);
      await assert.rejects(locks.acquire(request("k", 0, 0)), /leaseMs of the lock "k" is 0/);
      await assert.rejects(locks.acquire(request("", 0)), /non-empty text/);
      await assert.rejects(locks.acquire(request("k", -1)), /waitMs of the lock "k" is -1/);
      assert.throws(() => new SqlLockManager(db.sql, { table: "a b" }), /plain table name/);
    });

    it("a signal aborted ends the wait with nothing", async () => {
      const db = await database();
      const a = (await db.replica("host-a")).locks;
      const b = (await db.replica("host-b")).locks;
      const first = held(await a.acquire(request("k")));
      const abort = new AbortController();
      const waiting = b.acquire({ ...request("k", LONG_WAIT), signal: abort.signal });
      assert.equal(await settled(waiting), false);
      abort.abort();
      assert.equal(await waiting, undefined);
      await first.release();
    });

    if (kind === "sqlite") {
      it("inside a write transaction, takes the lock in it: no one else can meanwhile", async () => {
        const db = await database();
        const locks = new SqlLockManager(db.sql, { lockedBy: "host-a" });
        const other = (await db.replica("host-b")).locks;
        await assert.rejects(
          db.sql.transaction(async () => {
            held(await locks.acquire(request("k")));
            throw new Error("rolled back");
          }),
          /rolled back/,
        );
        // Rolled back with the transaction that held SQLite's one writer.
        held(await other.acquire(request("k")));
        // A read-only transaction holds no writer: the lock is taken beside it, and stays.
        const taken = await db.sql.transaction(
          async () => held(await locks.acquire(request("r"))),
          { readOnly: true },
        );
        assert.equal(await other.acquire(request("r")), undefined);
        await taken.release();
        held(await other.acquire(request("r")));
      });
    } else {
      it("a lock taken in a transaction that rolls back is still held, then released", async () => {
        const db = await database();
        const locks = new SqlLockManager(db.sql, { lockedBy: "host-a" });
        const other = (await db.replica("host-b")).locks;
        let lock: HeldLock | undefined;
        await assert.rejects(
          db.sql.transaction(async () => {
            lock = held(await locks.acquire(request("k")));
            // Committed on its own: seen beside the open transaction, which it does not block.
            assert.equal(await other.acquire(request("k")), undefined);
            throw new Error("rolled back");
          }),
          /rolled back/,
        );
        assert.equal(await other.acquire(request("k")), undefined);
        // Released in a transaction that rolls back: released all the same.
        await assert.rejects(
          db.sql.transaction(async () => {
            await lock!.release();
            throw new Error("rolled back");
          }),
          /rolled back/,
        );
        held(await other.acquire(request("k")));
      });

      it("the database down or silent: acquire rejects, naming it, without credentials", async () => {
        const db = await database();
        const url = new URL(db.datasource.location);
        const proxy = await tcpProxy(url.hostname, Number(url.port));
        url.port = String(proxy.port);
        const pool = await openPool({ ...db.datasource, location: url.href }, {
          connectTimeoutMs: 500,
          acquireTimeoutMs: 1000,
        });
        pools.push(pool);
        const locks = new SqlLockManager(new SqlClient(pool));
        try {
          // Nothing listens on the port.
          const down = await locks.acquire(request("k", 60_000)).then(
            () => assert.fail("expected a rejection"),
            (error: Error) => error,
          );
          assert.match(down.message, new RegExp(`datasource "${kind}_main" \\(table shedlock\\)`));
          assert.ok(!down.message.includes(DB_PASSWORD), down.message);
          // Listening, and forwarding nothing.
          await proxy.up();
          proxy.hold();
          const silent = await locks.acquire(request("k")).then(
            () => assert.fail("expected a rejection"),
            (error: Error) => error,
          );
          assert.match(silent.message, /could not take the lock "k" on datasource/);
          assert.ok(!silent.message.includes(DB_PASSWORD), silent.message);
        } finally {
          proxy.release();
          await proxy.down();
        }
      });
    }

    if (kind !== "sqlite") {
      it("three processes taking five keys never hold one key together", async () => {
        const db = await database();
        await db.sql.unsafe(
          `CREATE TABLE lock_events (id ${
            kind === "postgres" ? "SERIAL" : "INT AUTO_INCREMENT"
          } PRIMARY KEY, k TEXT NOT NULL, who TEXT NOT NULL, event TEXT NOT NULL)`,
        );
        const keys = ["a", "b", "c", "d", "e"];
        const rounds = 8;
        const children = ["p1", "p2", "p3"].map((name) =>
          contender(name, {
            LOCK_STORE: "sql",
            LOCK_DATASOURCE: JSON.stringify(db.datasource),
            LOCK_MODE: "contend",
            LOCK_KEYS: keys.join(","),
            LOCK_ROUNDS: String(rounds),
          })
        );
        await startTogether(children);
        const events = await db.sql.query<{ k: string; who: string; event: string }>`
          SELECT k, who, event FROM lock_events ORDER BY id`;
        assertNoOverlap(events, keys, 3 * rounds);
      });

      it("a holder killed with kill -9 frees its key once its lease has passed", async () => {
        const db = await database();
        const child = contender("holder", {
          LOCK_STORE: "sql",
          LOCK_DATASOURCE: JSON.stringify(db.datasource),
          LOCK_MODE: "hold",
          LOCK_KEYS: "k",
          LOCK_LEASE_MS: "2000",
        });
        await child.printed("held");
        process.kill(child.child.pid!, "SIGKILL");
        await child.exited;
        const locks = (await db.replica("next")).locks;
        held(await locks.acquire(request("k", LONG_WAIT)));
      });
    }
  });
}

for (const kind of KINDS) {
  describe(`@Lockable on a SqlLockManager at close, on ${kind}`, () => {
    const open = testPools();

    it("a queued @Async run still tries its free key once the app is closing", async () => {
      const { pool } = await open(kind);
      const sql = new SqlClient(pool);
      await sql.unsafe(SqlLockManager.createTable(kind));
      const locks = new SqlLockManager(sql, { lockedBy: "app" });
      @Configuration()
      class Locks {
        @Bean("sqlLocks")
        sqlLocks(): LockManager {
          return locks;
        }
      }
      await assertQueuedRunsFinishAtClose(
        { key: () => "report", lockManager: "sqlLocks" },
        1,
        [Locks],
      );
    });
  });
}
