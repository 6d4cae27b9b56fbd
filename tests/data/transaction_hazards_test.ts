// Transactions under what an attacker's look found: a caught failure on PostgreSQL, concurrent
// NESTED calls, a joined failure inside NESTED, a context carried past its transaction, a
// statement in flight across the timeout, SQLite's lock and its in-memory database. Each `it`
// failed before its fix. Run on real SQLite, PostgreSQL and MariaDB.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DataError } from "../../src/sql/data_error.ts";
import { SqlClient } from "../../src/data/sql_client.ts";
import { itemsTables, KINDS, testPools } from "../sql/pools.ts";

// A promise and the function that settles it, for ordering steps without sleeping.
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => open = resolve);
  return { wait, open };
}

for (const kind of KINDS) {
  describe(`transaction hazards on ${kind}`, () => {
    const open = testPools();

    const items = itemsTables(open, kind);

    // PostgreSQL aborts a transaction at its first failed statement, and answers a COMMIT of it
    // with ROLLBACK, no error: the call must not resolve as if its writes were kept.
    it("a transaction that resolves after a caught statement failure has committed its writes", async () => {
      const { sql, committed } = await items();
      const outcome = await sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        await sql.execute`INSERT INTO no_such_table (v) VALUES (${"x"})`.catch(() => {});
      }).then(() => "resolved", () => "rejected");
      if (outcome === "resolved") {
        assert.deepEqual(await committed(), ["a"], "resolved, yet its write is not committed");
      }
    });

    // Two NESTED calls side by side in one transaction (Promise.all over a list): the savepoints
    // interleave on the one connection, and the one that fails rolls back to its savepoint, older
    // than the other's, already released: the other resolved, and its write was gone.
    it("concurrent NESTED calls: one failing leaves the write of one that resolved", async () => {
      const { sql, committed } = await items();
      await sql.transaction(async () => {
        const [ra, rb] = await Promise.allSettled([
          sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
            await sql.query`SELECT 1 AS one`;
            throw new Error("a fails");
          }, { propagation: "NESTED" }),
          sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"b"})`;
          }, { propagation: "NESTED" }),
        ]);
        assert.equal(ra.status, "rejected");
        assert.equal(rb.status, "fulfilled");
      });
      assert.deepEqual(await committed(), ["b"], "b resolved, so its write must be committed");
    });

    // NESTED's failure rolls back to its savepoint alone (docs/data.md), also when it came from a
    // REQUIRED call inside it, as a @Transactional service method called there: that call marks
    // the whole transaction for rollback, and the savepoint's rollback does not clear the mark
    // (Spring's rollbackToSavepoint resets it).
    it("NESTED around a failing REQUIRED call rolls back to its savepoint alone", async () => {
      const { sql, committed } = await items();
      await sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"kept"})`;
        await sql.transaction(async () => {
          await sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"undone"})`;
            throw new Error("the service call fails");
          });
        }, { propagation: "NESTED" }).catch(() => {});
      });
      assert.deepEqual(await committed(), ["kept"]);
    });

    // A promise chain (or a timer, or a worker loop) begun inside a transaction carries its async
    // context past the end: a REQUIRED transaction begun there later joins the ended one and
    // every statement of it is refused, instead of beginning a transaction of its own.
    it("a REQUIRED transaction begun after the enclosing one ended begins its own", async () => {
      const { sql, committed } = await items();
      const later = gate();
      let fromChain!: Promise<unknown>;
      await sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"outer"})`;
        fromChain = later.wait.then(() =>
          sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"later"})`;
          })
        );
      });
      later.open();
      await fromChain;
      assert.deepEqual(await committed(), ["later", "outer"]);
    });

    // Work a transaction started and did not wait for (a timer, a background promise) runs
    // after it ended, where the ended one is still bound: SUPPORTS runs it outside any.
    it("SUPPORTS after the enclosing transaction ended runs outside it, not refused", async () => {
      const { sql, committed } = await items();
      const later = gate();
      let fromChain!: Promise<unknown>;
      await sql.transaction(() => {
        fromChain = later.wait.then(() =>
          sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"supports"})`, {
            propagation: "SUPPORTS",
          })
        );
        return Promise.resolve();
      });
      later.open();
      await fromChain;
      assert.deepEqual(await committed(), ["supports"]);
    });

    if (kind !== "sqlite") {
      // "Seconds the transaction may take from its beginning" (TransactionOptions.timeout) holds
      // only for statements begun after the deadline: one in flight across it (Spring bounds it
      // with the statement's query timeout) runs on, and the transaction then commits.
      it("a transaction whose statement runs past its timeout does not commit", async () => {
        const { sql, committed } = await items();
        const sleep = kind === "postgres" ? "SELECT pg_sleep(0.5)" : "SELECT SLEEP(0.5)";
        const outcome = await sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"slow"})`;
          await sql.unsafe(sleep);
        }, { timeout: 0.1 }).then(() => "committed", () => "refused");
        assert.equal(outcome, "refused");
        assert.deepEqual(await committed(), []);
      });
    }

    if (kind === "sqlite") {
      // Writes that do not begin with INSERT/UPDATE/DELETE are taken for reads (READS matches
      // WITH and PRAGMA), skip the pool's write lock, and meet SQLite's own busy wait, which
      // stops the whole thread: the transaction holding the lock cannot go on to commit.
      for (
        const [what, text] of [
          ["WITH ... INSERT", "WITH v(x) AS (VALUES ('w')) INSERT INTO items (v) SELECT x FROM v"],
          ["PRAGMA user_version = 3", "PRAGMA user_version = 3"],
        ]
      ) {
        it(`a write outside a transaction (${what}) waits its turn at the write lock`, async () => {
          const { sql, committed } = await items({ busyTimeoutMs: 300 });
          // Three idle handles: the transaction's, the write's and the read's, each handed out
          // without opening a file, so that the steps below run in the order they are called.
          const { pool } = sql as unknown as { pool: { acquire(): Promise<{ release(): void }> } };
          const warm = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
          for (const c of warm) c.release();
          const inside = gate();
          const done = gate();
          const transaction = sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"t"})`;
            inside.open();
            await done.wait;
          });
          await inside.wait;
          const write = sql.unsafe(text).then(() => "written", (e: Error) => e.message);
          // The same path as the write, called after it: once it answers, the write has reached
          // the lock (or, with the bug, has run).
          await sql.query`SELECT 1 AS one`;
          done.open();
          await transaction;
          assert.equal(await write, "written");
          assert.ok((await committed()).includes("t"));
        });
      }

      // An in-memory database lives in its one handle: closing the handle empties it. A failed
      // COMMIT (a deferred foreign key, refused at the end) marks the connection broken, and the
      // pool closes it: every table of the app is gone.
      it(":memory: keeps its tables after a COMMIT refused by a deferred foreign key", async () => {
        const { pool } = await open(kind, {}, { memory: true });
        const sql = new SqlClient(pool);
        await sql.unsafe("PRAGMA foreign_keys = ON");
        await sql.unsafe("CREATE TABLE p (id INTEGER PRIMARY KEY)");
        await sql.unsafe(
          "CREATE TABLE c (pid INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)",
        );
        await sql.execute`INSERT INTO p (id) VALUES (${1})`;
        const refused = await sql.transaction(async () => {
          await sql.execute`INSERT INTO c (pid) VALUES (${2})`;
        }).then(() => undefined, (e: Error) => e.message);
        assert.match(String(refused), /FOREIGN KEY/);
        assert.deepEqual(await sql.query`SELECT id FROM p`, [{ id: 1 }]);
      });

      // The same through an error of another datasource: a transaction's call that fails with
      // a DataError of reason "connection" (its PostgreSQL connection lost) has this pool's
      // handle closed too, though nothing is wrong with it.
      it(":memory: keeps its tables when a transaction fails with another datasource's lost connection", async () => {
        const { pool } = await open(kind, {}, { memory: true });
        const sql = new SqlClient(pool);
        await sql.execute`CREATE TABLE items (v TEXT)`;
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        const lost = new DataError({
          datasource: "reports",
          reason: "connection",
          message: "the connection was lost",
        });
        await assert.rejects(
          sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"b"})`;
            throw lost;
          }),
          (e) => e === lost,
        );
        assert.deepEqual(await sql.query`SELECT v FROM items`, [{ v: "a" }]);
      });

      // A read-only transaction begins deferred and holds SQLite's shared lock from its first
      // read. In the rollback-journal mode the pool leaves files in, a writer's commit then needs
      // the shared lock gone: SQLite's busy wait stops the thread (so the reader cannot end),
      // and the write fails, against docs/data.md ("without blocking the process").
      it("a write beside a read-only transaction that has read is not refused", async () => {
        const { sql, committed } = await items({ busyTimeoutMs: 300 });
        const inside = gate();
        const done = gate();
        const reader = sql.transaction(async () => {
          await sql.query`SELECT v FROM items`;
          inside.open();
          await done.wait;
        }, { readOnly: true });
        await inside.wait;
        const outcome = await sql.execute`INSERT INTO items (v) VALUES (${"w"})`
          .then(() => "written", (e: Error) => e.message);
        done.open();
        await reader;
        assert.equal(outcome, "written");
        assert.deepEqual(await committed(), ["w"]);
      });
    }
  });
}
