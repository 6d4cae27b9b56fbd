// Transactions on real SQLite, PostgreSQL and MariaDB: every propagation, the rollback rules,
// read-only transactions, timeouts, concurrency and a connection killed mid-transaction. What a
// transaction did is judged from beside it: a connection of the test's own sees only what was
// committed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SqlClient } from "../../src/data/sql_client.ts";
import { Isolation } from "../../src/data/transaction_options.ts";
import { itemsTables, type Kind, KINDS, rejection, testPools } from "../sql/pools.ts";
import { until } from "../runtime/raw_client.ts";
import { DataError } from "../../src/sql/data_error.ts";
import { openPool } from "../../src/sql/open_pool.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";

class ConflictError extends Error {}
class SoftConflict extends ConflictError {}

// Whether a transaction at the database's own level sees a row committed beside it after its
// first read: PostgreSQL's READ COMMITTED does, InnoDB's REPEATABLE READ does not.
const DEFAULT_SEES: Record<Kind, boolean> = { postgres: true, mysql: false, sqlite: false };

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

      if (kind === "mysql") {
        // MariaDB's session is out of autocommit for a transaction's life: one that could not be
        // put back must not serve the next call, whose writes would then never commit.
        it("a session whose reset fails as the transaction ends is closed, not handed on", async () => {
          const { datasource, admin } = await open(kind);
          const url = new URL(datasource.location);
          const proxy = await tcpProxy(url.hostname, Number(url.port));
          await proxy.up();
          url.port = String(proxy.port);
          const pool = await openPool({ ...datasource, location: url.href }, { maxSize: 1 });
          try {
            const sql = new SqlClient(pool);
            const committed = async () =>
              (await admin.query("SELECT v FROM items ORDER BY v")).map((r) => String(r.v));
            await sql.execute`CREATE TABLE items (v VARCHAR(40) NOT NULL)`;
            // The server refuses the reset, the connection up: a reset failing as any may.
            const refused = proxy.rewrite("SET autocommit = 1", "SET autocommit = 9");
            const first = await sql.transaction(async () => {
              await sql.execute`INSERT INTO items (v) VALUES (${"kept"})`;
              return await session(sql);
            });
            assert.equal(refused(), true, "the reset was refused");
            assert.deepEqual(await committed(), ["kept"]);
            // Another session serves the next call, and its write commits on its own.
            await sql.execute`INSERT INTO items (v) VALUES (${"next"})`;
            assert.deepEqual(await committed(), ["kept", "next"]);
            assert.notEqual(await session(sql), first);
          } finally {
            await proxy.down();
            await pool.close();
          }
        });
      }

      if (kind === "mysql") {
        // As docs/data.md says: a DDL statement commits the transaction on MariaDB, and what
        // follows runs in another, which the server begins at the session's level.
        it("a DDL statement commits what the transaction wrote before it; the rest runs apart", async () => {
          const { sql, admin, committed } = await items();
          const error = await sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"before"})`;
            await sql.execute`CREATE TABLE other (id INT)`;
            await sql.execute`INSERT INTO items (v) VALUES (${"after"})`;
            throw new Error("undone");
          }).catch((e: unknown) => e);
          assert.match(String(error), /undone/);
          // Committed at the CREATE TABLE: the rollback undid only what came after it.
          assert.deepEqual(await committed(), ["before"]);
          // At READ COMMITTED a read sees a row committed beside it since the last read; after a
          // DDL statement the transaction is the server's REPEATABLE READ, and does not.
          const seesBeside = (ddl: string | undefined, value: string) =>
            sql.transaction(async () => {
              if (ddl !== undefined) await sql.unsafe(ddl);
              await sql.query`SELECT v FROM items`;
              await admin.query(`INSERT INTO items (v) VALUES ('${value}')`);
              return (await sql.query`SELECT v FROM items WHERE v = ${value}`).length === 1;
            }, { isolation: Isolation.READ_COMMITTED });
          assert.equal(await seesBeside(undefined, "beside-1"), true);
          assert.equal(await seesBeside("CREATE TABLE another (id INT)", "beside-2"), false);
        });
      }

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
      // BEGIN and the first INSERT must answer within the timeout, which a loaded machine can
      // miss: the timeout doubles (to at most 30 s) until they did.
      for (let seconds = 0.05;; seconds = Math.min(seconds * 2, 30)) {
        let inserted = false;
        const error = await rejection(sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"late"})`;
          inserted = true;
          const deadline = performance.now() + seconds * 1000 + 10;
          await until(() => Promise.resolve(performance.now() > deadline), "the timeout passed");
          await sql.execute`INSERT INTO items (v) VALUES (${"later"})`;
        }, { timeout: seconds }));
        assert.deepEqual(await committed(), []);
        if (inserted || seconds === 30) {
          assert.equal(error.reason, "transaction");
          assert.match(error.message, /ran past its timeout/);
          break;
        }
      }
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
        /unknown option "readonly"; the options are propagation, readOnly/,
      );
    });

    if (kind === "sqlite") {
      it("isolation: SERIALIZABLE is what SQLite has; another level is refused, naming it", async () => {
        const { sql, committed } = await items();
        await sql.transaction(
          () => sql.execute`INSERT INTO items (v) VALUES (${"s"})`,
          { isolation: Isolation.SERIALIZABLE },
        );
        assert.deepEqual(await committed(), ["s"]);
        for (
          const isolation of ["READ_UNCOMMITTED", "READ_COMMITTED", "REPEATABLE_READ"] as const
        ) {
          await assert.rejects(sql.transaction(() => Promise.resolve(), { isolation }), {
            name: "TypeError",
            message: new RegExp(
              `^datasource "sqlite_main": transaction\\(\\): isolation ${isolation} is not one ` +
                `datasource "sqlite_main" \\(SQLite\\) has`,
            ),
          });
        }
      });
    } else {
      it("isolation applies to the transaction it begins; the next one is at the default again", async () => {
        // One connection: every transaction below runs on the same session.
        const { pool, admin } = await open(kind, { maxSize: 1 });
        const sql = new SqlClient(pool);
        await sql.execute`CREATE TABLE counter (n INT NOT NULL)`;
        await sql.execute`INSERT INTO counter (n) VALUES (1)`;
        // Whether it sees the row a connection beside it committed after its first read.
        const sees = (options: { isolation?: Isolation; readOnly?: boolean }) =>
          sql.transaction(async () => {
            const before = Number((await sql.one<{ n: number }>`SELECT n FROM counter`).n);
            await admin.query("UPDATE counter SET n = n + 1");
            return Number((await sql.one<{ n: number }>`SELECT n FROM counter`).n) !== before;
          }, options);
        const other = DEFAULT_SEES[kind] ? Isolation.REPEATABLE_READ : Isolation.READ_COMMITTED;
        assert.equal(await sees({}), DEFAULT_SEES[kind], "at the default");
        assert.equal(await sees({ isolation: other }), !DEFAULT_SEES[kind], `at ${other}`);
        assert.equal(await sees({}), DEFAULT_SEES[kind], "after it, at the default again");
        assert.equal(await sees({ isolation: other, readOnly: true }), !DEFAULT_SEES[kind]);
        // A transaction at another level that ran no statement leaves nothing for the next.
        await sql.transaction(() => Promise.resolve(), { isolation: other });
        assert.equal(await sees({ isolation: Isolation.DEFAULT }), DEFAULT_SEES[kind]);
        if (kind === "postgres") {
          const level = await sql.transaction(
            () => sql.one<{ transaction_isolation: string }>`SHOW transaction_isolation`,
            { isolation: Isolation.SERIALIZABLE },
          );
          assert.equal(level.transaction_isolation, "serializable");
          const after = await sql.transaction(
            () => sql.one<{ transaction_isolation: string }>`SHOW transaction_isolation`,
          );
          assert.equal(after.transaction_isolation, "read committed");
        }
      });
    }

    if (kind === "postgres") {
      it("two SERIALIZABLE transactions that conflict: one fails as a conflict, and a retry commits", async () => {
        const { sql, committed } = await items({ maxSize: 2 });
        await sql.execute`INSERT INTO items (v) VALUES (${"seed"})`;
        // Write skew: each reads what the other writes, then writes; run one after the other, the
        // second would have read the first's row.
        const gates = [0, 1].map(() => {
          let resolve!: () => void;
          return { promise: new Promise<void>((r) => resolve = r), resolve: () => resolve() };
        });
        const write = (me: 0 | 1) =>
          sql.transaction(async () => {
            const count = (await sql.query`SELECT v FROM items`).length;
            gates[me].resolve();
            await gates[1 - me].promise;
            await sql.execute`INSERT INTO items (v) VALUES (${`t${me}-saw-${count}`})`;
          }, { isolation: Isolation.SERIALIZABLE });
        const outcomes = await Promise.allSettled([write(0), write(1)]);
        const failed = outcomes.filter((o) => o.status === "rejected");
        assert.equal(failed.length, 1, JSON.stringify(outcomes));
        const error = (failed[0] as PromiseRejectedResult).reason;
        assert.ok(error instanceof DataError, String(error));
        assert.equal(error.reason, "conflict");
        assert.equal(error.code, "40001");
        assert.match(error.message, /could not serialize access/);
        const kept = await committed();
        assert.equal(kept.length, 2);
        // Run again, alone, it sees the other's row: the retry the docs advise.
        const loser = outcomes[0].status === "rejected" ? 0 : 1;
        await sql.transaction(async () => {
          const count = (await sql.query`SELECT v FROM items`).length;
          await sql.execute`INSERT INTO items (v) VALUES (${`t${loser}-saw-${count}`})`;
        }, { isolation: Isolation.SERIALIZABLE });
        assert.deepEqual(await committed(), [...kept, `t${loser}-saw-2`].sort());
      });
    }

    it("a read-write call joining a read-only transaction is refused, naming both calls", async () => {
      const { sql, committed } = await items();
      let ran = false;
      const refused = await rejection(sql.transaction(async () => {
        await sql.transaction(() => {
          ran = true;
          return sql.execute`INSERT INTO items (v) VALUES (${"w"})`;
        });
      }, { readOnly: true }));
      assert.equal(ran, false, "the joining call ran");
      assert.equal(refused.reason, "transaction");
      assert.match(
        refused.message,
        /^datasource "\w+": transaction\(\) is read-write \(readOnly: false\) and cannot join the read-only transaction of transaction\(\)/,
      );
      assert.deepEqual(await committed(), []);
      // Read-only joining read-only, and read-only joining read-write, are fine (SUPPORTS too).
      await sql.transaction(
        () => sql.transaction(() => sql.query`SELECT v FROM items`, { readOnly: true }),
        { readOnly: true },
      );
      await sql.transaction(async () => {
        await sql.transaction(() => sql.query`SELECT v FROM items`, { readOnly: true });
        await sql.execute`INSERT INTO items (v) VALUES (${"w"})`;
      });
      assert.deepEqual(await committed(), ["w"]);
      const supports = await rejection(sql.transaction(
        () => sql.transaction(() => Promise.resolve(), { propagation: "SUPPORTS" }),
        { readOnly: true },
      ));
      assert.match(supports.message, /is read-write \(readOnly: false\) and cannot join/);
    });

    it("a joining call asking another isolation than the transaction's is refused", async () => {
      const { sql } = await items();
      const asked = kind === "sqlite" ? Isolation.SERIALIZABLE : Isolation.READ_COMMITTED;
      // Begun at the database's own level: a call asking a level of its own cannot join it.
      const refused = await rejection(
        sql.transaction(() => sql.transaction(() => Promise.resolve(), { isolation: asked })),
      );
      assert.equal(refused.reason, "transaction");
      assert.match(
        refused.message,
        new RegExp(
          `transaction\\(\\) asks isolation ${asked} and cannot join the transaction of ` +
            `transaction\\(\\), begun at DEFAULT`,
        ),
      );
      // The same level, or DEFAULT (no level of its own), joins.
      await sql.transaction(async () => {
        await sql.transaction(() => Promise.resolve(), { isolation: asked });
        await sql.transaction(() => Promise.resolve(), { isolation: Isolation.DEFAULT });
        await sql.transaction(() => Promise.resolve());
      }, { isolation: asked });
    });
  });
}
