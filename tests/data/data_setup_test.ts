// bootstrap({ data: data() }) end to end, on each database this runtime has: the datasources as
// beans, the primary by class, migrations before the beans, @Transactional across beans, and
// the pools closed after the beans that use them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type Application,
  Autowired,
  bootstrap,
  ConfigError,
  PostConstruct,
  PreDestroy,
  Service,
} from "../../mod.ts";
import { data, DataError, SqlClient, Transactional } from "../../data.ts";
import { MigrationRunError } from "../../migrate.ts";
import { actuator } from "../../actuator.ts";
import { KINDS, type TestDatabase } from "../migrate/sql/databases.ts";
import { datasourceEntries, rejection } from "../sql/pools.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";

const database = datasourceEntries();

async function started(
  datasource: Record<string, unknown>[],
  components: (new () => unknown)[] = [],
  migrate?: string | URL,
): Promise<Application> {
  return await bootstrap({
    config: { datasource },
    components,
    data: data(migrate === undefined ? {} : { migrate }),
  });
}

for (const kind of KINDS) {
  describe(`bootstrap({ data: data() }) on ${kind}`, () => {
    it("makes each datasource a SqlClient bean by its name, the primary one by class too", async () => {
      const main = await database(kind, "main", { primary: true });
      const reports = await database(kind, "reports");
      @Service()
      class Uses {
        @Autowired(SqlClient)
        sql!: SqlClient;
        @Autowired("reports")
        reports!: SqlClient;
      }
      const app = await started([main.entry, reports.entry], [Uses]);
      try {
        const uses = app.getBean(Uses);
        assert.ok(uses.sql instanceof SqlClient);
        assert.equal(uses.sql.name, "main");
        assert.equal(uses.reports.name, "reports");
        assert.equal(app.getBean(SqlClient), uses.sql);
        assert.equal(app.getBean("reports"), uses.reports);
        assert.deepEqual(await uses.reports.query`SELECT 1 AS one`, [{ one: 1 }]);
      } finally {
        await app.close();
      }
    });

    it("runs @Transactional across beans on one connection; a statement of another datasource stays outside", async () => {
      const main = await database(kind, "main", { primary: true });
      const audit = await database(kind, "audit");
      @Service()
      class Repository {
        @Autowired(SqlClient)
        sql!: SqlClient;
        async add(v: string): Promise<void> {
          await this.sql.execute`INSERT INTO items (v) VALUES (${v})`;
        }
      }
      @Service()
      class Orders {
        @Autowired(Repository)
        repository!: Repository;
        @Autowired("audit")
        audit!: SqlClient;

        @Transactional()
        async place(v: string, fail: boolean): Promise<void> {
          await this.repository.add(v);
          await this.audit.execute`INSERT INTO log (v) VALUES (${v})`;
          if (fail) throw new Error(`refused ${v}`);
        }
      }
      const app = await started([main.entry, audit.entry], [Repository, Orders]);
      try {
        await app.getBean(Repository).sql.execute`CREATE TABLE items (v VARCHAR(20))`;
        await app.getBean(Orders).audit.execute`CREATE TABLE log (v VARCHAR(20))`;
        const orders = app.getBean(Orders);
        await orders.place("kept", false);
        await assert.rejects(orders.place("dropped", true), /refused dropped/);
        const rows = (db: TestDatabase, table: string) =>
          db.query(`SELECT v FROM ${table} ORDER BY v`).then((r) => r.map((x) => String(x.v)));
        assert.deepEqual(await rows(main.admin, "items"), ["kept"]);
        // The audit datasource has no transaction here: its write went through at once.
        assert.deepEqual(await rows(audit.admin, "log"), ["dropped", "kept"]);
      } finally {
        await app.close();
      }
    });

    it("runs the migrations before any bean is made, and a failing file stops bootstrap naming it", async () => {
      const main = await database(kind, "main", { migrations: { enabled: true } });
      const root = join(main.dir, "migrations");
      await mkdir(join(root, "main"), { recursive: true });
      await writeFile(join(root, "main", "V1__items.sql"), "CREATE TABLE items (v VARCHAR(20));\n");
      let seen: unknown;
      @Service()
      class Reader {
        @Autowired(SqlClient)
        sql!: SqlClient;
        @PostConstruct()
        async read(): Promise<void> {
          seen = await this.sql.query`SELECT v FROM items`;
        }
      }
      // The root as a file URL (import.meta.url's way), then as a path; the runner's lines told.
      const lines: string[] = [];
      const app = await bootstrap({
        config: { datasource: [main.entry] },
        components: [Reader],
        data: data({ migrate: pathToFileURL(`${root}/`), onProgress: (line) => lines.push(line) }),
      });
      await app.close();
      assert.deepEqual(seen, []);
      assert.ok(lines.some((l) => /^main .*V1__items\.sql/.test(l)), lines.join("\n"));
      await writeFile(join(root, "main", "V2__broken.sql"), "SELECT 1;\nCREATE TABLE nope (;\n");
      seen = undefined;
      const error = await started([main.entry], [Reader], root).then(
        () => assert.fail("bootstrap resolved"),
        (e: unknown) => e,
      );
      assert.ok(error instanceof MigrationRunError, String(error));
      assert.equal(error.connection, "main");
      assert.equal(error.file, "V2__broken.sql");
      assert.equal(error.line, 2);
      assert.equal(seen, undefined, "a bean was made after the migrations failed");
    });

    it("closes the pools after the beans: a @PreDestroy still writes, a call after close fails", async () => {
      const main = await database(kind, "main");
      @Service()
      class Flusher {
        @Autowired(SqlClient)
        sql!: SqlClient;
        @PreDestroy()
        async flush(): Promise<void> {
          await this.sql.execute`INSERT INTO items (v) VALUES (${"at close"})`;
        }
      }
      const app = await started([main.entry], [Flusher]);
      const sql = app.getBean(SqlClient);
      await sql.execute`CREATE TABLE items (v VARCHAR(20))`;
      await app.close();
      const rows = await main.admin.query("SELECT v FROM items");
      assert.deepEqual(rows.map((r) => r.v), ["at close"]);
      const error = await sql.query`SELECT 1`.then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof DataError && error.reason === "closed", String(error));
    });
  });
}

describe("data(): the health component db", () => {
  const kind = KINDS[0];

  it("is UP with each datasource's database, DOWN naming one that does not answer", async () => {
    const main = await database(kind, "main", { primary: true });
    const config = {
      management: {
        endpoint: { health: { "show-details": "always" } },
        // The disk's component, whose free bytes change between two probes, is left out.
        health: { timeout: 20_000, diskspace: { enabled: false } },
      },
    };
    const health = async (datasource: Record<string, unknown>[]) => {
      const app = await bootstrap({
        config: { ...config, datasource },
        data: data(),
        actuator: actuator(),
      });
      try {
        const probe = async () => {
          const response = await app.fetch(new Request("http://app/actuator/health"));
          return { status: response.status, body: await response.json() };
        };
        const first = await probe();
        // A second probe reads the same clients again.
        assert.deepEqual(await probe(), first);
        return first;
      } finally {
        await app.close();
      }
    };
    const up = await health([main.entry]);
    assert.equal(up.status, 200);
    assert.deepEqual(up.body.components.db, {
      status: "UP",
      details: {
        main: {
          database: kind === "sqlite"
            ? "SQLite"
            : kind === "postgres"
            ? "PostgreSQL"
            : "MySQL or MariaDB",
        },
      },
    });
    // A server that refuses connections: nothing listens on port 1.
    const down = await health([main.entry, {
      name: "reports",
      url: "postgres://127.0.0.1:1/reports",
      password: "s3cret-pw",
      pool: { "connect-timeout": "2s" },
    }]);
    assert.equal(down.status, 503);
    assert.equal(down.body.components.db.status, "DOWN");
    const text = JSON.stringify(down.body.components.db);
    assert.match(text, /datasource \\"reports\\": cannot connect/);
    assert.doesNotMatch(text, /s3cret-pw/);
  });

  it("is not there with management.health.db.enabled: false", async () => {
    const main = await database(kind, "main", { primary: true });
    const app = await bootstrap({
      config: {
        datasource: [main.entry],
        management: {
          endpoint: { health: { "show-details": "always" } },
          health: { db: { enabled: false }, diskspace: { enabled: false } },
        },
      },
      data: data(),
      actuator: actuator(),
    });
    try {
      const response = await app.fetch(new Request("http://app/actuator/health"));
      assert.deepEqual(await response.json(), { status: "UP" });
      assert.throws(() => app.getBean("dbHealthIndicator"), /dbHealthIndicator/);
    } finally {
      await app.close();
    }
  });
});

for (const kind of KINDS.filter((k) => k !== "sqlite")) {
  describe(`data() on ${kind} that is down at bootstrap`, () => {
    it("starts, fails each call naming the datasource, and serves once the database is back", async () => {
      const { entry } = await database(kind, "main");
      const url = new URL(String(entry.url));
      const proxy = await tcpProxy(url.hostname, Number(url.port));
      url.port = String(proxy.port);
      const app = await bootstrap({
        config: { datasource: [{ ...entry, url: url.href, pool: { "connect-timeout": "5s" } }] },
        data: data(),
      });
      try {
        const sql = app.getBean(SqlClient);
        // Nothing connects at bootstrap: the app starts, and a call fails in time, saying why.
        const refused = await rejection(sql.query`SELECT 1 AS one`);
        assert.equal(refused.reason, "connect");
        assert.match(refused.message, /^datasource "main": cannot connect/);
        await proxy.up();
        assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]);
        // Gone again, with the pool's connection cut under it, and back: the pool recovers.
        await proxy.down();
        const lost = await rejection(sql.query`SELECT 2 AS two`);
        assert.ok(lost.reason === "connection" || lost.reason === "connect", lost.message);
        await proxy.up();
        assert.deepEqual(await sql.query`SELECT 3 AS three`, [{ three: 3 }]);
      } finally {
        await app.close();
        await proxy.down();
      }
    });
  });
}

describe("@Transactional on a class and its subclass", () => {
  it("runs each class's own options, call after call", async () => {
    const main = await database(KINDS[0], "main");
    @Service()
    class Notes {
      @Autowired(SqlClient)
      sql!: SqlClient;
      @Transactional({ readOnly: true })
      async add(v: string): Promise<void> {
        await this.sql.execute`INSERT INTO items (v) VALUES (${v})`;
      }
    }
    @Service()
    class WritableNotes extends Notes {
      @Transactional()
      override async add(v: string): Promise<void> {
        await super.add(v);
      }
    }
    const app = await started([main.entry], [Notes, WritableNotes]);
    try {
      const sql = app.getBean(SqlClient);
      await sql.execute`CREATE TABLE items (v VARCHAR(20))`;
      // Alternating, so that what the first call of one class worked out is not the other's.
      for (let i = 0; i < 2; i++) {
        await app.getBean(WritableNotes).add(`w${i}`);
        await assert.rejects(app.getBean(Notes).add(`r${i}`), DataError);
      }
      assert.deepEqual(
        (await sql.query<{ v: string }>`SELECT v FROM items ORDER BY v`).map((r) => r.v),
        ["w0", "w1"],
      );
    } finally {
      await app.close();
    }
  });
});

describe("data(): what stops bootstrap", () => {
  const kind = KINDS[0];

  it("several datasources and none primary, or two, naming them", async () => {
    const [a, b] = [await database(kind, "a"), await database(kind, "b")];
    await assert.rejects(started([a.entry, b.entry]), {
      name: "ConfigError",
      message:
        /datasource: "a", "b": none is primary: true, so @Autowired\(SqlClient\) would not know which to inject; mark one/,
    });
    await assert.rejects(
      started([{ ...a.entry, primary: true }, { ...b.entry, primary: true }]),
      { name: "ConfigError", message: /"a", "b" are all primary: true; mark one/ },
    );
  });

  it("a configuration without datasources, and a misspelt pool key, naming the key", async () => {
    await assert.rejects(
      bootstrap({ config: {}, data: data() }),
      (e: unknown) =>
        e instanceof ConfigError && /has none: add a datasource: list/.test(e.message),
    );
    const main = await database(kind, "main", { pool: { "max-pool-size": 4 } });
    await assert.rejects(started([main.entry]), {
      name: "ConfigError",
      message: /datasource\[0\]\.pool\.max-pool-size is not a pool setting \(max-size, /,
    });
  });

  it("@Transactional naming a datasource that is not configured, or without data()", async () => {
    const main = await database(kind, "main");
    @Service()
    class Reports {
      @Transactional({ datasource: "reports" })
      async run(): Promise<void> {}
    }
    await assert.rejects(started([main.entry], [Reports]), {
      name: "DefinitionError",
      message: 'Reports.run(): @Transactional({ datasource: "reports" }) names no datasource ' +
        'of the configuration ("main")',
    });
    @Service()
    class Plain {
      @Transactional()
      async run(): Promise<void> {}
    }
    await assert.rejects(bootstrap({ components: [Plain] }), {
      message:
        /@Transactional runs methods in transactions of the datasources, which need data access: import \{ data \} from "@thaw\/thaw\/data"/,
    });
  });

  // SQLite is the database that lacks levels: on a runtime without it, there is nothing to refuse.
  if (KINDS.includes("sqlite")) {
    it("@Transactional asking an isolation level SQLite lacks, naming the method and datasource", async () => {
      const sqlite = await database("sqlite", "main");
      const other = await database("sqlite", "other");
      @Service()
      class Ledger {
        @Transactional({ isolation: "SERIALIZABLE" })
        async balance(): Promise<void> {}
        @Transactional({ datasource: "other", isolation: "READ_COMMITTED" })
        async post(): Promise<void> {}
      }
      await assert.rejects(
        started([{ ...sqlite.entry, primary: true }, other.entry], [Ledger]),
        {
          name: "DefinitionError",
          message:
            /^Ledger\.post\(\): @Transactional: isolation READ_COMMITTED is not one datasource "other" \(SQLite\) has: its transactions are SERIALIZABLE/,
        },
      );
    });
  }

  it("a SqlClient injected without data(), naming the data() option as @Transactional does", async () => {
    @Service()
    class Repo {
      @Autowired(SqlClient)
      sql!: SqlClient;
    }
    await assert.rejects(bootstrap({ components: [Repo] }), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.equal(error.name, "NoSuchBeanError");
      assert.match(
        error.message,
        /^No bean of class SqlClient for @Autowired\(SqlClient\) on field 'sql' of class Repo: the datasources' SqlClient beans are made by data access: import \{ data \} from "@thaw\/thaw\/data" and pass bootstrap\(\{ data: data\(\) \}\)/,
      );
      assert.doesNotMatch(error.message, /@Service\(\)/);
      return true;
    });
    const app = await bootstrap({});
    try {
      assert.throws(() => app.getBean(SqlClient), {
        name: "NoSuchBeanError",
        message:
          /^No bean of class SqlClient: the datasources' SqlClient beans are made by data access: import \{ data \}/,
      });
    } finally {
      await app.close();
    }
  });

  it("@Transactional on a method that is not async, or on a class that has one, where it is written", () => {
    assert.throws(
      () => {
        class Sync {
          @Transactional()
          run(): void {}
        }
        return Sync;
      },
      {
        name: "TypeError",
        message: /^@Transactional on run: it is not async; @Transactional runs it/,
      },
    );
    assert.throws(
      () => {
        @Transactional()
        class Mixed {
          async save(): Promise<void> {}
          label(): string {
            return "x";
          }
        }
        return Mixed;
      },
      {
        name: "TypeError",
        message: /^@Transactional on class Mixed: Mixed\.label\(\) is not async/,
      },
    );
    assert.throws(() => Transactional({ timeout: -1 }), /@Transactional: timeout is in seconds/);
  });

  it("migrations asked for on an in-memory SQLite database, which the app would never see", async () => {
    await assert.rejects(
      bootstrap({
        config: {
          datasource: [{ name: "main", url: "sqlite::memory:", migrations: { enabled: true } }],
        },
        data: data({ migrate: "./migrations" }),
      }),
      {
        name: "ConfigError",
        message:
          /datasource\[0\]\.url: data\(\{ migrate \}\) would migrate an in-memory database of its own, not the one datasource "main" gives the app/,
      },
    );
  });

  it("data() refuses options it does not know", () => {
    assert.throws(
      () => data({ migrations: "x" } as never),
      /data\(options\): unknown option "migrations"; the options are migrate, onProgress/,
    );
    assert.throws(
      () => data({ migrate: 3 } as never),
      /data\(\{ migrate \}\): give the migrations root/,
    );
    assert.throws(
      () => data({ onProgress: "console" } as never),
      /data\(\{ onProgress \}\): give a function/,
    );
  });
});
