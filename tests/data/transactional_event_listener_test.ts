// @TransactionalEventListener on a real database: each phase hears only what its transaction
// ended in, BEFORE_COMMIT runs inside it, and an event published outside any is heard only with
// fallbackExecution.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Application,
  ApplicationEventPublisher,
  Autowired,
  bootstrap,
  Service,
} from "../../mod.ts";
import { SqlClient, Transactional, TransactionalEventListener } from "../../data.ts";
import { KINDS } from "../migrate/sql/databases.ts";
import { datasourceEntries } from "../sql/pools.ts";
import { dataApp } from "./data_app.ts";

class Placed {
  constructor(readonly id: string) {}
}

const database = datasourceEntries();

for (const kind of KINDS) {
  describe(`@TransactionalEventListener on ${kind}`, () => {
    const heard: string[] = [];

    @Service()
    class Listeners {
      @Autowired(SqlClient)
      sql!: SqlClient;

      @TransactionalEventListener(Placed)
      committed(event: Placed): void {
        heard.push(`commit ${event.id}`);
        if (event.id === "loud") throw new Error("the mail server refused");
      }
      @TransactionalEventListener(Placed, { phase: "AFTER_ROLLBACK" })
      rolledBack(event: Placed): void {
        heard.push(`rollback ${event.id}`);
      }
      @TransactionalEventListener(Placed, { phase: "AFTER_COMPLETION" })
      completed(event: Placed): void {
        heard.push(`completion ${event.id}`);
      }
      @TransactionalEventListener(Placed, { phase: "BEFORE_COMMIT" })
      async beforeCommit(event: Placed): Promise<void> {
        heard.push(`before ${event.id}`);
        await this.sql.execute`INSERT INTO audit (id) VALUES (${event.id})`;
        if (event.id === "veto") throw new Error("vetoed before the commit");
      }
    }

    @Service()
    class Orders {
      @Autowired(SqlClient)
      sql!: SqlClient;
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;

      @Transactional()
      async place(id: string, fail = false): Promise<void> {
        await this.sql.execute`INSERT INTO orders (id) VALUES (${id})`;
        await this.events.publishEvent(new Placed(id));
        assert.deepEqual(heard, [], "heard before the transaction ended");
        if (fail) throw new Error(`order ${id} refused`);
      }

      @Transactional({ propagation: "REQUIRES_NEW" })
      async placeAlone(id: string): Promise<void> {
        await this.place(id);
      }
    }

    async function app(): Promise<
      { app: Application; rows: (table: string) => Promise<string[]> }
    > {
      const { entry, admin } = await database(kind, "main");
      const app = await dataApp(entry, [Listeners, Orders]);
      const sql = app.getBean(SqlClient);
      await sql.execute`CREATE TABLE orders (id VARCHAR(20))`;
      await sql.execute`CREATE TABLE audit (id VARCHAR(20))`;
      const rows = async (table: string) =>
        (await admin.query(`SELECT id FROM ${table} ORDER BY id`)).map((r) => String(r.id));
      return { app, rows };
    }

    it("after a commit: AFTER_COMMIT and AFTER_COMPLETION, and BEFORE_COMMIT inside it", async () => {
      const { app: a, rows } = await app();
      heard.length = 0;
      await a.getBean(Orders).place("a");
      assert.deepEqual(heard, ["before a", "commit a", "completion a"]);
      assert.deepEqual(await rows("orders"), ["a"]);
      assert.deepEqual(await rows("audit"), ["a"], "BEFORE_COMMIT's write committed with it");
      await a.close();
    });

    it("after a rollback: AFTER_ROLLBACK and AFTER_COMPLETION only, nothing of it kept", async () => {
      const { app: a, rows } = await app();
      heard.length = 0;
      await assert.rejects(a.getBean(Orders).place("b", true), /order b refused/);
      assert.deepEqual(heard, ["rollback b", "completion b"]);
      assert.deepEqual(await rows("orders"), []);
      await a.close();
    });

    it("a BEFORE_COMMIT listener that throws rolls everything back; an AFTER_COMMIT one that throws leaves it committed", async () => {
      const { app: a, rows } = await app();
      heard.length = 0;
      await assert.rejects(a.getBean(Orders).place("veto"), /vetoed before the commit/);
      assert.deepEqual(heard, ["before veto", "rollback veto", "completion veto"]);
      assert.deepEqual(await rows("orders"), []);
      assert.deepEqual(await rows("audit"), []);
      heard.length = 0;
      await assert.rejects(a.getBean(Orders).place("loud"), /the mail server refused/);
      assert.deepEqual(await rows("orders"), ["loud"]);
      assert.deepEqual(heard, ["before loud", "commit loud"]);
      await a.close();
    });

    it("outside a transaction an event is not heard; published in REQUIRES_NEW, at its own commit", async () => {
      const { app: a } = await app();
      heard.length = 0;
      await a.getBean(ApplicationEventPublisher).publishEvent(new Placed("outside"));
      assert.deepEqual(heard, []);
      await a.getBean(Orders).placeAlone("inner");
      assert.deepEqual(heard, ["before inner", "commit inner", "completion inner"]);
      await a.close();
    });
  });
}

describe("@TransactionalEventListener: its datasource after the end", () => {
  for (const kind of KINDS) {
    it(`an AFTER_COMMIT listener on ${kind} reads the datasource whose one connection the transaction held`, async () => {
      const seen: unknown[] = [];
      @Service()
      class Counter {
        @Autowired(SqlClient)
        sql!: SqlClient;
        @TransactionalEventListener(Placed)
        async count(): Promise<void> {
          seen.push((await this.sql.one<{ n: unknown }>`SELECT count(*) AS n FROM orders`).n);
        }
      }
      @Service()
      class Placing {
        @Autowired(SqlClient)
        sql!: SqlClient;
        @Autowired(ApplicationEventPublisher)
        events!: ApplicationEventPublisher;
        @Transactional()
        async place(): Promise<void> {
          await this.sql.execute`INSERT INTO orders (id) VALUES (${"x"})`;
          await this.events.publishEvent(new Placed("x"));
        }
      }
      const { entry } = await database(kind, "main", {
        pool: { "max-size": 1, "acquire-timeout": "30s" },
      });
      const app = await dataApp(entry, [Counter, Placing]);
      try {
        await app.getBean(SqlClient).execute`CREATE TABLE orders (id VARCHAR(20))`;
        await app.getBean(Placing).place();
        assert.deepEqual(seen.map(Number), [1]);
      } finally {
        await app.close();
      }
    });
  }

  it("PostgreSQL's COMMIT answered ROLLBACK: AFTER_ROLLBACK heard, the connection kept", async () => {
    if (!KINDS.includes("postgres")) return;
    const heard: string[] = [];
    @Service()
    class Heard {
      @TransactionalEventListener(Placed, { phase: "AFTER_ROLLBACK" })
      rolledBack(): void {
        heard.push("rollback");
      }
      @TransactionalEventListener(Placed, { phase: "AFTER_COMPLETION" })
      completed(): void {
        heard.push("completion");
      }
    }
    const { entry } = await database("postgres", "main", { pool: { "max-size": 1 } });
    @Service()
    class Caught {
      @Autowired(SqlClient)
      sql!: SqlClient;
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @Transactional()
      async run(): Promise<void> {
        await this.events.publishEvent(new Placed("caught"));
        await this.sql.query`SELECT 1 / 0`.catch(() => {});
      }
    }
    const app = await dataApp(entry, [Heard, Caught]);
    try {
      const sql = app.getBean(SqlClient);
      const pid = async () => (await sql.one<{ p: number }>`SELECT pg_backend_pid() AS p`).p;
      const before = await pid();
      await assert.rejects(app.getBean(Caught).run(), /rolled back, not committed/);
      assert.deepEqual(heard, ["rollback", "completion"]);
      assert.equal(await pid(), before, "a healthy connection was thrown away");
    } finally {
      await app.close();
    }
  });
});

describe("@TransactionalEventListener: fallbackExecution and misuse", () => {
  it("fallbackExecution hears an event published outside any transaction at once", async () => {
    const heard: string[] = [];
    @Service()
    class Fallback {
      @TransactionalEventListener(Placed, { fallbackExecution: true })
      heard(event: Placed): void {
        heard.push(event.id);
      }
    }
    @Service()
    class Publisher {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
    }
    const app = await bootstrap({ components: [Fallback, Publisher] });
    await app.getBean(Publisher).events.publishEvent(new Placed("now"));
    assert.deepEqual(heard, ["now"]);
    await app.close();
  });

  it("refuses a wrong phase or option, naming them", () => {
    assert.throws(
      () => TransactionalEventListener(Placed, { phase: "AFTER_SAVE" as "AFTER_COMMIT" }),
      /@TransactionalEventListener\(Placed\): phase "AFTER_SAVE" is none of BEFORE_COMMIT, AFTER_COMMIT/,
    );
    assert.throws(
      () => TransactionalEventListener(Placed, { fallback: true } as never),
      /unknown option "fallback"; the options are phase, fallbackExecution/,
    );
  });
});
