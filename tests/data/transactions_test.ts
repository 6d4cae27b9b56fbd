// Transactions on real SQLite, PostgreSQL and MariaDB: every propagation, the rollback rules,
// read-only transactions, timeouts, concurrency and a connection killed mid-transaction. What a
// transaction did is judged from beside it: a connection of the test's own sees only what was
// committed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SqlClient } from "../../src/data/sql_client.ts";
import { itemsTables, type Kind, KINDS, rejection, testPools } from "./pools.ts";
import { until } from "../runtime/raw_client.ts";

class ConflictError extends Error {}
class SoftConflict extends ConflictError {}

// Which connection runs a statement, where the database says.
const SESSION: Record<Kind, string | undefined> = {
  postgres: "SELECT pg_backend_pid() AS id",
  mysql: "SELECT CONNECTION_ID() AS id",
  sqlite: undefined,
};

for (const kind of KINDS) {
  describe(`transactions on ${kind}`, () => {
    const open = testPools();

    const items = itemsTables(open, kind);

    const session = async (sql: SqlClient) => {
      const text = SESSION[kind];
      return text === undefined ? undefined : String((await sql.unsafe(text)).rows[0].id);
    };

    it("REQUIRED commits what the call wrote when it resolves, and not before", async () => {
      const { sql, committed } = await items();
      const result = await sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        assert.deepEqual(await committed(), [], "visible before the commit");
        return 7;
      });
      assert.equal(result, 7);
      assert.deepEqual(await committed(), ["a"]);
    });

    it("REQUIRED rolls back when the call rejects, and the caller gets its error", async () => {
      const { sql, committed } = await items();
      const failure = new Error("after the write");
      await assert.rejects(
        sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
          throw failure;
        }),
        (error) => error === failure,
      );
      assert.deepEqual(await committed(), []);
    });

    it("an inner REQUIRED joins: one connection, and its failure dooms the outer commit", async () => {
      const { sql, committed } = await items();
      await sql.transaction(async () => {
        const outer = await session(sql);
        await sql.transaction(async () => {
          assert.equal(await session(sql), outer);
          await sql.execute`INSERT INTO items (v) VALUES (${"inner"})`;
        });
      });
      assert.deepEqual(await committed(), ["inner"]);
      const doomed = await rejection(sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"outer"})`;
        await sql.transaction(() => Promise.reject(new Error("inner failed"))).catch(() => {});
      }));
      assert.equal(doomed.reason, "transaction");
      assert.match(doomed.message, /rolled back: a call inside it failed/);
      assert.deepEqual(await committed(), ["inner"]);
    });

    it("MANDATORY fails outside a transaction and joins inside one; NEVER the other way", async () => {
      const { sql, committed } = await items();
      const none = await rejection(sql.transaction(() => Promise.resolve(), {
        propagation: "MANDATORY",
      }));
      assert.equal(none.reason, "transaction");
      assert.match(none.message, /MANDATORY needs a transaction to join/);
      const some = await rejection(
        sql.transaction(() => sql.transaction(() => Promise.resolve(), { propagation: "NEVER" })),
      );
      assert.match(some.message, /NEVER runs outside any transaction, and the call runs in one/);
      await sql.transaction(async () => {
        await sql.transaction(
          () => sql.execute`INSERT INTO items (v) VALUES (${"joined"})`,
          { propagation: "MANDATORY" },
        );
        assert.deepEqual(await committed(), []);
      });
      await sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"alone"})`, {
        propagation: "NEVER",
      });
      assert.deepEqual(await committed(), ["alone", "joined"]);
    });

    it("SUPPORTS runs outside when there is none: a failure after a write keeps it", async () => {
      const { sql, committed } = await items();
      await assert.rejects(
        sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"kept"})`;
          throw new Error("after");
        }, { propagation: "SUPPORTS" }),
        /after/,
      );
      assert.deepEqual(await committed(), ["kept"]);
    });

    it("NESTED rolls back to its savepoint alone; the outer transaction commits the rest", async () => {
      const { sql, committed } = await items();
      await sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        await assert.rejects(
          sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"b"})`;
            throw new Error("nested failed");
          }, { propagation: "NESTED" }),
          /nested failed/,
        );
        await sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"c"})`, {
          propagation: "NESTED",
        });
      });
      assert.deepEqual(await committed(), ["a", "c"]);
    });

    if (kind === "sqlite") {
      it("REQUIRES_NEW in a writing transaction waits for SQLite's one writer, then fails in time", async () => {
        const { sql, committed } = await items({ busyTimeoutMs: 200 });
        const error = await rejection(sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"outer"})`;
          await sql.transaction(() => Promise.resolve(), { propagation: "REQUIRES_NEW" });
        }));
        assert.match(error.message, /BEGIN IMMEDIATE: database is locked/i);
        assert.match(error.message, /a REQUIRES_NEW or NOT_SUPPORTED write inside a writing/);
        assert.deepEqual(await committed(), []);
      });

      it("NOT_SUPPORTED reads outside the transaction: what it wrote is not seen", async () => {
        const { sql } = await items();
        await sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"uncommitted"})`;
          const outside = await sql.transaction(
            () => sql.query`SELECT v FROM items`,
            { propagation: "NOT_SUPPORTED" },
          );
          assert.deepEqual(outside, []);
        }, { readOnly: false });
      });
    } else {
      it("REQUIRES_NEW commits on a connection of its own, whatever the outer one does", async () => {
        const { sql, committed } = await items();
        await assert.rejects(
          sql.transaction(async () => {
            const outer = await session(sql);
            await sql.execute`INSERT INTO items (v) VALUES (${"outer"})`;
            await sql.transaction(async () => {
              assert.notEqual(await session(sql), outer);
              await sql.execute`INSERT INTO items (v) VALUES (${"new"})`;
            }, { propagation: "REQUIRES_NEW" });
            throw new Error("outer fails");
          }),
          /outer fails/,
        );
        assert.deepEqual(await committed(), ["new"]);
      });

      it("a connection killed mid-transaction fails the call saying so; nothing is half-written; the next works", async () => {
        const { sql, admin, committed } = await items({ maxSize: 1 });
        const error = await rejection(sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"half"})`;
          const id = await session(sql);
          await admin.query(
            kind === "postgres" ? `SELECT pg_terminate_backend(${id})` : `KILL ${id}`,
          );
          await until(
            async () =>
              (await admin.query(
                kind === "postgres"
                  ? `SELECT 1 FROM pg_stat_activity WHERE pid = ${id}`
                  : `SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ${id}`,
              )).length === 0,
            "the session ended",
          );
          await sql.execute`INSERT INTO items (v) VALUES (${"after"})`;
        }));
        assert.equal(error.reason, "connection");
        assert.deepEqual(await committed(), []);
        await sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"next"})`);
        assert.deepEqual(await committed(), ["next"]);
      });

      it("a COMMIT the database refuses fails the call with its reason; nothing is written; the pool goes on", async () => {
        const { sql, committed } = await items({ maxSize: 1 });
        // Checked at COMMIT: PostgreSQL's deferred foreign key; MariaDB checks a key at once, so
        // there the statement itself is refused.
        await sql.unsafe("CREATE TABLE parents (id INT PRIMARY KEY)");
        await sql.unsafe(
          kind === "postgres"
            ? "CREATE TABLE kids (parent INT REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)"
            : "CREATE TABLE kids (parent INT, FOREIGN KEY (parent) REFERENCES parents (id)) ENGINE=InnoDB",
        );
        const error = await rejection(sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"x"})`;
          await sql.execute`INSERT INTO kids (parent) VALUES (${7})`;
        }));
        assert.equal(error.reason, "statement");
        assert.match(
          error.message,
          kind === "postgres" ? /COMMIT: .*foreign key/ : /INSERT INTO kids/,
        );
        assert.deepEqual(await committed(), []);
        await sql.execute`INSERT INTO items (v) VALUES (${"after"})`;
        assert.deepEqual(await committed(), ["after"]);
      });

      it("NOT_SUPPORTED writes outside: kept when the outer transaction rolls back", async () => {
        const { sql, committed } = await items();
        await assert.rejects(
          sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"outer"})`;
            await sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"outside"})`, {
              propagation: "NOT_SUPPORTED",
            });
            assert.deepEqual(await committed(), ["outside"]);
            throw new Error("outer fails");
          }),
          /outer fails/,
        );
        assert.deepEqual(await committed(), ["outside"]);
      });
    }

    it("readOnly refuses a write in the database; the connection writes again afterwards", async () => {
      const { sql, committed } = await items({ maxSize: 1 });
      const error = await rejection(
        sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"no"})`, {
          readOnly: true,
        }),
      );
      assert.equal(error.reason, "statement");
      assert.deepEqual(
        await sql.transaction(() => sql.query`SELECT v FROM items`, { readOnly: true }),
        [],
      );
      await sql.execute`INSERT INTO items (v) VALUES (${"yes"})`;
      assert.deepEqual(await committed(), ["yes"]);
    });

    it("noRollbackFor commits the work before the error, which still reaches the caller", async () => {
      const { sql, committed } = await items();
      const rules = { noRollbackFor: [ConflictError], rollbackFor: [SoftConflict] };
      await assert.rejects(
        sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"kept"})`;
          throw new ConflictError("conflict");
        }, rules),
        ConflictError,
      );
      // The nearer rule wins: SoftConflict is a ConflictError, and rolls back.
      await assert.rejects(
        sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"gone"})`;
          throw new SoftConflict("soft");
        }, rules),
        SoftConflict,
      );
      assert.deepEqual(await committed(), ["kept"]);
    });

    it("a statement past the timeout fails, and the transaction rolls back", async () => {
      const { sql, committed } = await items();
      const error = await rejection(sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"late"})`;
        const deadline = performance.now() + 60;
        await until(() => Promise.resolve(performance.now() > deadline), "the timeout passed");
        await sql.execute`INSERT INTO items (v) VALUES (${"later"})`;
      }, { timeout: 0.05 }));
      assert.equal(error.reason, "transaction");
      assert.match(error.message, /ran past its timeout/);
      assert.deepEqual(await committed(), []);
    });

    it("a statement of a transactional call that outlives its transaction is not run", async () => {
      const { sql, committed } = await items();
      let leaked!: Promise<unknown>;
      let release!: () => void;
      const later = new Promise<void>((resolve) => release = resolve);
      await sql.transaction(() => {
        // A joined call the transaction's code did not await (work merely left running once
        // the call returned runs outside any transaction: transaction_scope_test.ts).
        leaked = sql.transaction(() =>
          later.then(() => sql.execute`INSERT INTO items (v) VALUES (${"leaked"})`)
        );
        return Promise.resolve();
      });
      release();
      const error = await rejection(leaked);
      assert.match(error.message, /a statement came after its transaction ended/);
      assert.deepEqual(await committed(), []);
    });

    it("50 concurrent transactions, half failing after their writes: the other half's rows remain", async () => {
      const { sql, committed } = await items({ maxSize: 5 });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          sql.transaction(async () => {
            const v = `r${String(i).padStart(2, "0")}`;
            await sql.execute`INSERT INTO items (v) VALUES (${v})`;
            await sql.execute`INSERT INTO items (v) VALUES (${`${v}b`})`;
            if (i % 2 === 1) throw new Error(`fail ${i}`);
          })),
      );
      assert.equal(outcomes.filter((o) => o.status === "rejected").length, 25);
      const expected = Array.from({ length: 25 }, (_, j) => `r${String(j * 2).padStart(2, "0")}`)
        .flatMap((v) => [v, `${v}b`]).sort();
      assert.deepEqual(await committed(), expected);
    });

    it("refuses what is not a function or text, and options it does not know, naming them", async () => {
      const { sql } = await items();
      await assert.rejects(
        sql.transaction(42 as unknown as () => Promise<void>),
        /transaction\(\) takes a function, got 42/,
      );
      await assert.rejects(
        sql.transaction(() => Promise.resolve(), { propagation: "required" as "REQUIRED" }),
        /propagation "required" is none of REQUIRED, /,
      );
      await assert.rejects(
        sql.unsafe(42 as unknown as string),
        /unsafe\(text, params\) takes a string and an array/,
      );
      await assert.rejects(
        sql.transaction(() => Promise.resolve(), { readonly: true } as never),
        /no option "readonly"; the options are propagation, readOnly/,
      );
    });
  });
}
