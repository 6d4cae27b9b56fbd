// The status of a transactional call (Spring's TransactionStatus) on real SQLite, PostgreSQL and
// MariaDB: given to sql.transaction's callback, returned by currentTransactionStatus() inside a
// @Transactional method; setRollbackOnly() rolls back its own transaction silently, and dooms a
// transaction it joined, whose commit then fails with UnexpectedRollbackError (Spring's
// AbstractPlatformTransactionManager.processCommit).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Autowired, Service } from "../../mod.ts";
import {
  currentTransactionStatus,
  DataError,
  Isolation,
  SqlClient,
  Transactional,
  type TransactionStatus,
  UnexpectedRollbackError,
} from "../../data.ts";
import { datasourceEntries, itemsTables, KINDS, testPools } from "../sql/pools.ts";
import { innermostTransaction } from "../../src/data/transaction_scope.ts";
import { dataApp } from "./data_app.ts";

const database = datasourceEntries();

for (const kind of KINDS) {
  describe(`transaction status on ${kind}`, () => {
    const open = testPools();
    const items = itemsTables(open, kind);

    it("the callback gets its status: new where it begins one, not where it joins", async () => {
      const { sql } = await items();
      const seen: Record<string, unknown>[] = [];
      const look = (status: TransactionStatus) =>
        seen.push({
          name: status.name,
          datasource: status.datasource,
          hasTransaction: status.hasTransaction(),
          isNewTransaction: status.isNewTransaction(),
          isNested: status.isNested(),
          readOnly: status.readOnly,
          isolation: status.isolation,
          isRollbackOnly: status.isRollbackOnly(),
        });
      await sql.transaction(async (outer) => {
        look(outer);
        await sql.transaction((joined) => look(joined));
        await sql.transaction((nested) => look(nested), { propagation: "NESTED" });
        await sql.transaction((own) => look(own), {
          propagation: "REQUIRES_NEW",
          readOnly: true,
        });
        await sql.transaction((none) => look(none), { propagation: "NOT_SUPPORTED" });
      }, { isolation: Isolation.SERIALIZABLE });
      const name = "transaction()";
      const base = { name, datasource: `${kind}_main`, isRollbackOnly: false };
      const tx = { ...base, hasTransaction: true, readOnly: false, isolation: "SERIALIZABLE" };
      assert.deepEqual(seen, [
        { ...tx, isNewTransaction: true, isNested: false },
        { ...tx, isNewTransaction: false, isNested: false },
        { ...tx, isNewTransaction: false, isNested: true },
        { ...tx, isNewTransaction: true, isNested: false, readOnly: true, isolation: "DEFAULT" },
        {
          ...base,
          hasTransaction: false,
          isNewTransaction: false,
          isNested: false,
          readOnly: false,
          isolation: "DEFAULT",
        },
      ]);
    });

    it("setRollbackOnly() rolls its transaction back at the end, silently: the value comes back", async () => {
      const { sql, committed } = await items();
      const value = await sql.transaction(async (status) => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        status.setRollbackOnly();
        assert.equal(status.isRollbackOnly(), true);
        await sql.execute`INSERT INTO items (v) VALUES (${"b"})`;
        return 7;
      });
      assert.equal(value, 7);
      assert.deepEqual(await committed(), []);
      // The connection is fine, and the next transaction commits.
      await sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"c"})`);
      assert.deepEqual(await committed(), ["c"]);
    });

    it("a joined call's setRollbackOnly() dooms the outer: its commit fails, naming both", async () => {
      const { sql, committed } = await items();
      const error = await sql.transaction(async (outer) => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        await sql.transaction((inner) => inner.setRollbackOnly());
        // Spring's global rollback-only: the outer sees it, though it set nothing itself.
        assert.equal(outer.isRollbackOnly(), true);
      }).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof UnexpectedRollbackError, `got ${String(error)}`);
      assert.ok(error instanceof DataError);
      assert.equal(error.reason, "transaction");
      assert.equal(error.name, "UnexpectedRollbackError");
      assert.match(
        error.message,
        new RegExp(
          `^datasource "${kind}_main": transaction\\(\\) rolled back: a call inside it ` +
            `\\(transaction\\(\\), joined to it\\) marked it rollback-only`,
        ),
      );
      assert.deepEqual(await committed(), []);
    });

    it("a mark set while its call's end is on its way: rolled back and heard so, or refused", async () => {
      const { sql, committed } = await items();
      // A statement the callback did not await marks the transaction as it settles: before the
      // end's statement is chosen (then it rolls back, and AFTER_ROLLBACK is what is heard) or
      // after (then the outcome is settled and the mark is refused, the commit standing).
      let marked: Promise<"accepted" | "refused"> | undefined;
      const heard: string[] = [];
      const value = await sql.transaction(async (status) => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        const transaction = innermostTransaction();
        assert.ok(transaction !== undefined);
        for (const phase of ["AFTER_COMMIT", "AFTER_ROLLBACK"] as const) {
          transaction.register({
            phase,
            run: () => {
              heard.push(phase);
              return Promise.resolve();
            },
          });
        }
        marked = sql.query`SELECT 1 AS x`.then(() => {
          try {
            status.setRollbackOnly();
            return "accepted";
          } catch (error) {
            assert.match(String(error), /which has ended: its transaction's outcome is settled/);
            return "refused";
          }
        });
        return 7;
      });
      assert.equal(value, 7);
      const outcome = await marked;
      assert.deepEqual(
        { heard, committed: await committed() },
        outcome === "accepted"
          ? { heard: ["AFTER_ROLLBACK"], committed: [] }
          : { heard: ["AFTER_COMMIT"], committed: ["a"] },
        `the mark was ${outcome}`,
      );
    });

    it("the outer's own setRollbackOnly() wins over a joined call's mark: no error", async () => {
      const { sql, committed } = await items();
      const value = await sql.transaction(async (outer) => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        await sql.transaction(() => Promise.reject(new Error("inner"))).catch(() => {});
        outer.setRollbackOnly();
        return "kept";
      });
      assert.equal(value, "kept");
      assert.deepEqual(await committed(), []);
    });

    it("a NESTED call's setRollbackOnly() rolls back to its savepoint alone", async () => {
      const { sql, committed } = await items();
      const value = await sql.transaction(async (outer) => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        const inner = await sql.transaction(async (nested) => {
          await sql.execute`INSERT INTO items (v) VALUES (${"b"})`;
          nested.setRollbackOnly();
          return "inner";
        }, { propagation: "NESTED" });
        assert.equal(inner, "inner");
        assert.equal(outer.isRollbackOnly(), false);
        return "outer";
      });
      assert.equal(value, "outer");
      assert.deepEqual(await committed(), ["a"]);
    });

    // Spring's processCommit on a savepoint's status: a global mark set inside it rolls back to
    // the savepoint (which clears the mark), and the NESTED call fails with
    // UnexpectedRollbackException; the outer transaction may go on and commit.
    it("a mark set inside a NESTED call rolls back its savepoint alone; the call fails", async () => {
      const { sql, committed } = await items();
      const failures: unknown[] = [];
      await sql.transaction(async (outer) => {
        await sql.execute`INSERT INTO items (v) VALUES (${"a"})`;
        for (const how of ["set", "caught"]) {
          await sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${how})`;
            await sql.transaction((inner) => {
              if (how === "set") inner.setRollbackOnly();
              else throw new Error("inner failed");
            }).catch(() => {});
            return "nested";
          }, { propagation: "NESTED" }).catch((error: unknown) => failures.push(error));
          assert.equal(outer.isRollbackOnly(), false, `after ${how}`);
        }
        await sql.execute`INSERT INTO items (v) VALUES (${"b"})`;
      });
      assert.deepEqual(await committed(), ["a", "b"]);
      assert.equal(failures.length, 2);
      for (const failure of failures) {
        assert.ok(failure instanceof UnexpectedRollbackError, String(failure));
        assert.match(
          failure.message,
          /transaction\(\) rolled back to its savepoint: a call inside it/,
        );
      }
    });

    it("currentTransactionStatus() is the @Transactional call's; outside any it throws", async () => {
      const { entry, admin } = await database(kind, "main");
      @Service()
      class Audit {
        @Autowired(SqlClient)
        sql!: SqlClient;

        @Transactional()
        async record(fail: boolean): Promise<void> {
          await this.sql.execute`INSERT INTO items (v) VALUES (${"audit"})`;
          if (fail) throw new Error("audit refused");
        }
      }
      @Service()
      class Orders {
        @Autowired(SqlClient)
        sql!: SqlClient;
        @Autowired(Audit)
        audit!: Audit;

        @Transactional()
        async place(how: "rollback-only" | "caught" | "commit"): Promise<string> {
          const status = currentTransactionStatus();
          assert.equal(status.isNewTransaction(), true);
          assert.equal(status.name, "Orders.place()");
          await this.sql.execute`INSERT INTO items (v) VALUES (${how})`;
          if (how === "rollback-only") status.setRollbackOnly();
          if (how === "caught") await this.audit.record(true).catch(() => {});
          else await this.audit.record(false);
          // Back in this call: its own status again, not the inner call's.
          assert.equal(currentTransactionStatus(), status);
          return how;
        }

        @Transactional({ readOnly: true })
        async report(): Promise<void> {
          await this.audit.record(false);
        }
      }
      const app = await dataApp(entry, [Audit, Orders]);
      try {
        const sql = app.getBean(SqlClient);
        await sql.execute`CREATE TABLE items (v VARCHAR(40) NOT NULL)`;
        const committed = async () =>
          (await admin.query("SELECT v FROM items ORDER BY v")).map((r) => String(r.v));
        const orders = app.getBean(Orders);
        assert.equal(await orders.place("rollback-only"), "rollback-only");
        assert.deepEqual(await committed(), []);
        const doomed = await orders.place("caught").then(() => undefined, (e: unknown) => e);
        assert.ok(doomed instanceof UnexpectedRollbackError, `got ${String(doomed)}`);
        assert.match(
          doomed.message,
          /^datasource "main": Orders\.place\(\) rolled back: a call inside it failed \(Audit\.record\(\), joined to it\), which marked it for rollback/,
        );
        assert.deepEqual(await committed(), []);
        assert.equal(await orders.place("commit"), "commit");
        assert.deepEqual(await committed(), ["audit", "commit"]);
        // A read-write method joining a read-only transaction: refused before it runs.
        const refused = await orders.report().then(() => undefined, (e: unknown) => e);
        assert.ok(refused instanceof DataError, String(refused));
        assert.equal(refused.reason, "transaction");
        assert.match(
          refused.message,
          /^datasource "main": Audit\.record\(\) is read-write \(readOnly: false\) and cannot join the read-only transaction of Orders\.report\(\)/,
        );
        assert.deepEqual(await committed(), ["audit", "commit"]);
        assert.throws(() => currentTransactionStatus(), {
          message: /^currentTransactionStatus\(\) is called outside any transactional call/,
        });
      } finally {
        await app.close();
      }
    });
  });
}
