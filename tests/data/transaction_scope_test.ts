// Where the work begun inside a transaction runs once the call that began it has returned: an
// async event listener, a timer, an interval, a promise left running run outside any transaction
// (as Spring's other threads do); a transactional call left running past its transaction's end
// is refused. Run on real SQLite, PostgreSQL and MariaDB.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ApplicationEventPublisher, Autowired, EventListener, Service } from "../../mod.ts";
import { SqlClient, Transactional } from "../../data.ts";
import { DataError } from "../../src/sql/data_error.ts";
import { KINDS } from "../migrate/sql/databases.ts";
import { datasourceEntries, itemsTables, testPools } from "../sql/pools.ts";
import { deferred } from "../deferred.ts";
import { dataApp } from "./data_app.ts";

class Placed {
  constructor(readonly id: string) {}
}

const database = datasourceEntries();

for (const kind of KINDS) {
  describe(`work begun in a transaction, run after its call, on ${kind}`, () => {
    const open = testPools();
    const items = itemsTables(open, kind);

    // Spring runs an async listener on another thread, outside the publisher's transaction.
    // Here it started inside it: once the transaction ended, each statement failed ("a statement
    // came after its transaction ended"), for ever.
    it("an async @EventListener heard from a @Transactional method runs outside it", async () => {
      const heard = deferred();
      const late = deferred();
      const outcome: unknown[] = [];

      @Service()
      class Mailer {
        @Autowired(SqlClient)
        sql!: SqlClient;

        @EventListener(Placed, { async: true })
        async sent(event: Placed): Promise<void> {
          heard.resolve();
          await late.promise;
          outcome.push(
            await this.sql.execute`INSERT INTO mails (id) VALUES (${event.id})`
              .then(() => "written", (error: unknown) => error),
          );
        }
      }

      @Service()
      class Orders {
        @Autowired(SqlClient)
        sql!: SqlClient;
        @Autowired(ApplicationEventPublisher)
        events!: ApplicationEventPublisher;

        @Transactional()
        async place(id: string): Promise<void> {
          await this.sql.execute`INSERT INTO orders (id) VALUES (${id})`;
          await this.events.publishEvent(new Placed(id));
        }
      }

      const { entry, admin } = await database(kind, "main");
      const app = await dataApp(entry, [Mailer, Orders]);
      try {
        const sql = app.getBean(SqlClient);
        await sql.execute`CREATE TABLE orders (id VARCHAR(20))`;
        await sql.execute`CREATE TABLE mails (id VARCHAR(20))`;
        await app.getBean(Orders).place("a");
        await heard.promise;
        late.resolve();
        // The close waits for the async listener's run to end.
        await app.close();
        assert.deepEqual(outcome, ["written"]);
        const rows = await admin.query("SELECT id FROM mails");
        assert.deepEqual(rows.map((r) => String(r.id)), ["a"]);
      } finally {
        await app.close();
      }
    });

    if (kind !== "sqlite") {
      // While the transaction still runs, the async listener's statements ran on its connection,
      // in it: rolled back with it, though the listener is no part of the call.
      it("an async @EventListener that runs while the transaction goes on is no part of it", async () => {
        const written = deferred();

        @Service()
        class Audit {
          @Autowired(SqlClient)
          sql!: SqlClient;

          @EventListener(Placed, { async: true })
          async record(event: Placed): Promise<void> {
            await this.sql.execute`INSERT INTO audit (id) VALUES (${event.id})`;
            written.resolve();
          }
        }

        @Service()
        class Orders {
          @Autowired(SqlClient)
          sql!: SqlClient;
          @Autowired(ApplicationEventPublisher)
          events!: ApplicationEventPublisher;

          @Transactional()
          async place(id: string): Promise<void> {
            await this.sql.execute`INSERT INTO orders (id) VALUES (${id})`;
            await this.events.publishEvent(new Placed(id));
            await written.promise;
            throw new Error("the order is refused");
          }
        }

        const { entry, admin } = await database(kind, "main");
        const app = await dataApp(entry, [Audit, Orders]);
        try {
          const sql = app.getBean(SqlClient);
          await sql.execute`CREATE TABLE orders (id VARCHAR(20))`;
          await sql.execute`CREATE TABLE audit (id VARCHAR(20))`;
          await assert.rejects(app.getBean(Orders).place("b"), /the order is refused/);
          const ids = async (table: string) =>
            (await admin.query(`SELECT id FROM ${table}`)).map((r) => String(r.id));
          assert.deepEqual(await ids("orders"), []);
          assert.deepEqual(await ids("audit"), ["b"], "the listener's write is its own");
        } finally {
          await app.close();
        }
      });
    }

    // A poller a bean starts lazily, the first time it is called inside a transaction: each
    // tick after the call returned failed, for ever.
    it("an interval started in a transaction writes outside it on every tick", async () => {
      const { sql, committed } = await items();
      const ticks: unknown[] = [];
      const three = deferred();
      let interval: ReturnType<typeof setInterval> | undefined;
      await sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"call"})`;
        interval = setInterval(() => {
          if (ticks.length >= 3) return;
          const n = ticks.push("running");
          sql.execute`INSERT INTO items (v) VALUES (${`tick ${n}`})`.then(
            () => ticks[n - 1] = "written",
            (error: unknown) => ticks[n - 1] = error,
          ).finally(() => {
            if (ticks.length >= 3 && ticks.every((t) => t !== "running")) three.resolve();
          });
        }, 1);
      });
      await three.promise;
      clearInterval(interval);
      assert.deepEqual(ticks, ["written", "written", "written"]);
      assert.deepEqual(await committed(), ["call", "tick 1", "tick 2", "tick 3"]);
    });

    // A timer, and a promise the call left running: they outlive the call on their own.
    it("a timer or a promise the call left running, once it returned, runs outside it", async () => {
      const { sql, committed } = await items();
      const returned = deferred();
      let fromTimer!: Promise<unknown>;
      let fromPromise!: Promise<unknown>;
      await sql.transaction(() => {
        fromTimer = new Promise((resolve) => {
          setTimeout(() => {
            resolve(
              returned.promise.then(() => sql.execute`INSERT INTO items (v) VALUES (${"timer"})`),
            );
          }, 0);
        });
        fromPromise = returned.promise.then(() =>
          sql.execute`INSERT INTO items (v) VALUES (${"promise"})`
        );
        return Promise.resolve();
      });
      returned.resolve();
      await fromTimer;
      await fromPromise;
      assert.deepEqual(await committed(), ["promise", "timer"]);
    });

    // Promise.all rejects at its first failure while its other branches go on: what they run
    // next is the failed call's own work, rolled back with it. Run outside the transaction, it
    // committed alone: half of a transaction that rolled back.
    it("what a failed call left running (Promise.all's other branch) is refused", async () => {
      const { sql, committed } = await items();
      const failed = deferred();
      let other!: Promise<unknown>;
      await assert.rejects(
        sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"first"})`;
          const branch = (async () => {
            await failed.promise;
            await sql.execute`INSERT INTO items (v) VALUES (${"second"})`;
            await sql.transaction(() => sql.execute`INSERT INTO items (v) VALUES (${"third"})`);
          })();
          other = branch.then(() => "ran", (error: unknown) => error);
          await Promise.all([branch, Promise.reject(new Error("one branch fails"))]);
        }),
        /one branch fails/,
      );
      failed.resolve();
      const refused = await other;
      assert.ok(refused instanceof DataError, `the late statement ran: ${String(refused)}`);
      assert.equal(refused.reason, "transaction");
      assert.match(refused.message, /call that failed/);
      assert.deepEqual(await committed(), []);
    });

    if (kind !== "sqlite") {
      // A NESTED call the transaction's code did not await, whose statement is refused after the
      // end: its ROLLBACK TO SAVEPOINT went to the connection, which the pool had handed to the
      // next transaction by then, and took back that transaction's own NESTED work.
      it("a NESTED call left running past its transaction's end sends nothing more", async () => {
        const { sql, committed } = await items({ maxSize: 1 });
        const ended = deferred();
        let orphan!: Promise<unknown>;
        await sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${"first"})`;
          orphan = sql.transaction(async () => {
            await ended.promise;
            await sql.execute`INSERT INTO items (v) VALUES (${"orphan"})`;
          }, { propagation: "NESTED" }).then(() => "ran", (error: unknown) => error);
        });
        // The next transaction, on the one connection, in a NESTED call of its own.
        await sql.transaction(async () => {
          await sql.transaction(async () => {
            await sql.execute`INSERT INTO items (v) VALUES (${"next"})`;
            ended.resolve();
            const refused = await orphan;
            assert.ok(refused instanceof DataError, `the orphan ran: ${String(refused)}`);
            assert.match(refused.message, /after its transaction ended/);
            await sql.execute`INSERT INTO items (v) VALUES (${"next 2"})`;
          }, { propagation: "NESTED" });
        });
        assert.deepEqual(await committed(), ["first", "next", "next 2"]);
      });
    }

    // A transactional call the transaction's code did not await, still running when the
    // transaction ended: its statements are refused, as they would run on a connection another
    // caller holds by then, in no transaction the code meant.
    it("a transactional call left running past its transaction's end is refused", async () => {
      const { sql, committed } = await items();
      const ended = deferred();
      let inner!: Promise<unknown>;
      await sql.transaction(async () => {
        await sql.execute`INSERT INTO items (v) VALUES (${"outer"})`;
        inner = sql.transaction(async () => {
          await ended.promise;
          await sql.execute`INSERT INTO items (v) VALUES (${"inner"})`;
        }).then(() => "ran", (error: unknown) => error);
      });
      ended.resolve();
      const refused = await inner;
      assert.ok(refused instanceof DataError, `the late statement ran: ${String(refused)}`);
      assert.equal(refused.reason, "transaction");
      assert.match(refused.message, /after its transaction ended/);
      assert.deepEqual(await committed(), ["outer"]);
    });
  });
}
