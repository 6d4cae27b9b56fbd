import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ConfigError } from "../../../src/config/config_error.ts";
import { loadDatasources } from "../../../src/migrate/sql/sql_config.ts";
import { suiteTempDirs } from "../../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

async function load(yaml: string, file = "application.yml", env: Record<string, string> = {}) {
  const dir = await suiteDir("thaw-ds-");
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, file), yaml);
  return { dir, list: () => loadDatasources(dir, "migrations", (n) => env[n], "/work") };
}

async function fails(yaml: string, pattern: RegExp) {
  const { list } = await load(yaml);
  await assert.rejects(list(), (e: Error) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.match(e.message, pattern);
    return true;
  });
}

describe("SQL datasources config", () => {
  it("reads sqlite, postgres and mysql URLs; credentials leave the URL; keys win over it", async () => {
    const { list } = await load(
      `datasource:
  - name: main
    url: sqlite:./data/app.db
    migrations: { enabled: true }
  - name: mem
    url: "sqlite::memory:"
  - name: pg
    url: postgresql://app:url-secret@db.internal:5433/shop?sslmode=require
    password: \${PG_PASSWORD}
    migrations: { enabled: "true", table: schema_history }
  - name: my
    url: mariadb://root@10.0.0.5/shop
`,
      "application.yml",
      { PG_PASSWORD: "key-secret" },
    );
    const [main, mem, pg, my] = await list();
    assert.deepEqual(
      [main.kind, main.location, main.migrationsEnabled, main.table],
      ["sqlite", "/work/data/app.db", true, "framework_migrations"],
    );
    assert.equal(mem.location, ":memory:");
    assert.equal(pg.kind, "postgres");
    assert.equal(pg.location, "postgresql://db.internal:5433/shop?sslmode=require");
    assert.deepEqual([pg.username, pg.password, pg.table], ["app", "key-secret", "schema_history"]);
    assert.deepEqual([my.kind, my.username, my.password], ["mysql", "root", undefined]);
  });

  it("takes ?user= and ?password= as credentials, out of the printed location", async () => {
    const { list } = await load(
      "datasource:\n  - name: pg\n    url: postgres://u:p@db/shop?sslmode=require&user=app&password=p%40ss%26\n" +
        "  - name: my\n    url: mysql://db/shop?password=x\n    password: key-wins\n",
    );
    const [pg, my] = await list();
    assert.deepEqual([pg.location, pg.username, pg.password], [
      "postgres://db/shop?sslmode=require",
      "app",
      "p@ss&",
    ]);
    assert.deepEqual([my.location, my.username, my.password], [
      "mysql://db/shop",
      undefined,
      "key-wins",
    ]);
  });

  it("refuses credentials in the URL that are not valid percent-encoding, without showing them", async () => {
    for (const url of ["postgres://u:p%zzHid7@h/db", "mysql://u%E0Hid7:p@h/db"]) {
      await fails(
        `datasource:\n  - name: main\n    url: '${url}'\n`,
        /^[^\n]*application\.yml:3: datasource\[0\]\.url: the user name or password is not valid percent-encoding(?![\s\S]*Hid7)/,
      );
    }
  });

  it("takes an empty username or password (an unset ${VAR:}) as none", async () => {
    const { list } = await load(
      "datasource:\n  - name: pg\n    url: postgres://u:p@h/db\n    username: ${U:}\n" +
        "    password: ${P:}\n",
    );
    const [pg] = await list();
    assert.deepEqual([pg.username, pg.password], ["u", "p"]);
  });

  it("prefers datasource-config.yml to application.yml", async () => {
    const { dir, list } = await load("datasource:\n  - name: a\n    url: sqlite:a.db\n");
    await writeFile(
      join(dir, "datasource-config.yml"),
      "datasource:\n  - name: b\n    url: sqlite:b.db\n",
    );
    assert.deepEqual((await list()).map((d) => d.name), ["b"]);
  });

  it("explains what to add when no datasource is configured", async () => {
    await fails(
      "search: []\n",
      /No SQL datasource: .* has a "datasource" key[\s\S]*url: sqlite:\.\/data\/app\.db[\s\S]*migrations\/main\//,
    );
  });

  it("names the file, line and key of a wrong setting", async () => {
    await fails(
      "datasource:\n  - name: main\n    url: oracle://x/y\n",
      /application\.yml:3: datasource\[0\]\.url must be sqlite:<file>/,
    );
    await fails("datasource:\n  - name: main\n", /datasource\[0\]\.url is missing/);
    await fails("datasource:\n  - name: main\n    url: mysql://host\n", /must name the database/);
    await fails("datasource:\n  - name: main\n    url: 'sqlite:'\n", /must name a file/);
    await fails(
      "datasource:\n  - name: main\n    url: sqlite:a.db\n    pasword: x\n",
      /:4: datasource\[0\]\.pasword is not a datasource setting/,
    );
    await fails(
      "datasource:\n  - name: main\n    url: sqlite:a.db\n    migrations: { table: 'x; DROP TABLE y' }\n",
      /migrations\.table must be a table name/,
    );
    await fails("datasource: { name: main }\n", /datasource must be a list/);
  });

  it("reads pool.sqlite, and refuses it where it cannot apply, naming the file, line and key", async () => {
    const { list } = await load(
      "datasource:\n  - name: notes\n    url: sqlite:a.db\n    pool:\n      sqlite:\n" +
        "        synchronous: NORMAL\n        journal-mode: WAL\n        foreign-keys: false\n",
    );
    assert.deepEqual((await list())[0].pool, {
      sqlite: { synchronous: "NORMAL", journalMode: "WAL", foreignKeys: false },
    });
    await fails(
      "datasource:\n  - name: main\n    url: postgres://db/shop\n    pool:\n      sqlite: { synchronous: OFF }\n",
      /application\.yml:5: datasource\[0\]\.pool\.sqlite\.synchronous is a SQLite setting, and this datasource is PostgreSQL/,
    );
    await fails(
      "datasource:\n  - name: main\n    url: 'sqlite::memory:'\n    pool: { sqlite: { journal-mode: WAL } }\n",
      /:4: datasource\[0\]\.pool\.sqlite\.journal-mode WAL is not possible on sqlite::memory:/,
    );
    await fails(
      "datasource:\n  - name: main\n    url: sqlite:a.db\n    pool: { sqlite: { synchronous: fast } }\n",
      /:4: datasource\[0\]\.pool\.sqlite\.synchronous must be OFF, NORMAL, FULL or EXTRA, got "fast"/,
    );
  });

  it("names the file, line and key of a variable that is not set", async () => {
    await fails(
      "datasource:\n  - name: main\n    url: sqlite:a.db\n    migrations:\n" +
        "      table: ${RECORDS_TABLE}\n",
      /application\.yml:5: datasource\[0\]\.migrations\.table uses \$\{RECORDS_TABLE\}, which is not set/,
    );
  });

  it("refuses names that are not plain folder names, and ignores __proto__ keys", async () => {
    for (const name of ["../up", "a/b", ".hidden", "", "__proto__/x"]) {
      await fails(
        `datasource:\n  - name: "${name}"\n    url: sqlite:a.db\n`,
        /must be a folder name/,
      );
    }
    // js-yaml drops a __proto__ key: it neither pollutes prototypes nor becomes a setting.
    const { list } = await load(
      "datasource:\n  - name: a\n    url: sqlite:a.db\n    __proto__: { polluted: true }\n",
    );
    const [a] = await list();
    assert.equal((a as unknown as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("refuses two datasources that share one records table on one database", async () => {
    // Each would read the other's records as its own: missing, renamed, or skipped files.
    await fails(
      "datasource:\n  - name: core\n    url: sqlite:./shared.db\n    migrations: { enabled: true }\n" +
        "  - name: seed\n    url: sqlite:shared.db\n    migrations: { enabled: true }\n",
      /application\.yml:6: datasource\[1\]\.url: datasource "seed" keeps its records in framework_migrations of the same database as datasource "core" \(line 3\); give one of them its own migrations\.table/,
    );
    await fails(
      "datasource:\n  - name: a\n    url: postgres://u:p@DB.example:5432/shop\n" +
        "    migrations: { enabled: true, table: hist }\n  - name: b\n" +
        "    url: postgresql://db.example/shop?sslmode=require\n" +
        "    migrations: { enabled: true, table: hist }\n",
      /datasource "b" keeps its records in hist of the same database as datasource "a"/,
    );
    // Another table, another database, two in-memory databases, or a disabled entry are fine.
    const on = "    migrations: { enabled: true }\n";
    const { list } = await load(
      `datasource:\n  - name: a\n    url: sqlite:x.db\n${on}  - name: b\n    url: sqlite:x.db\n` +
        "    migrations: { enabled: true, table: b_history }\n" +
        `  - name: off\n    url: sqlite:x.db\n  - name: c\n    url: mysql://h/one\n${on}` +
        `  - name: d\n    url: mysql://h/two\n${on}  - name: m1\n    url: 'sqlite::memory:'\n${on}` +
        `  - name: m2\n    url: 'sqlite::memory:'\n${on}`,
    );
    assert.equal((await list()).length, 7);
  });

  it("reads migrations.placeholders, with ${VAR:default} in its values", async () => {
    const yaml = "datasource:\n  - name: main\n    url: sqlite:a.db\n    migrations:\n" +
      "      placeholders: { schema: '${SCHEMA:app}', size: 10, on: false }\n" +
      "  - name: other\n    url: sqlite:b.db\n";
    const [main, other] = await (await load(yaml)).list();
    assert.deepEqual([...main.placeholders!], [["schema", "app"], ["size", "10"], ["on", "false"]]);
    assert.equal(other.placeholders, undefined);
    const [fromEnv] = await (await load(yaml, "application.yml", { SCHEMA: "tenant_1" })).list();
    assert.equal(fromEnv.placeholders?.get("schema"), "tenant_1");
  });

  it("names the file, line and key of a wrong placeholders setting", async () => {
    await fails(
      "datasource:\n  - name: main\n    url: sqlite:a.db\n    migrations:\n      placeholders: x\n",
      /application\.yml:5: datasource\[0\]\.migrations\.placeholders must be a mapping of name: value/,
    );
    await fails(
      "datasource:\n  - name: main\n    url: sqlite:a.db\n    migrations:\n      placeholders:\n" +
        "        ${x}: 1\n",
      /application\.yml:6: datasource\[0\]\.migrations\.placeholders\.\$\{x\} is not a placeholder name/,
    );
    await fails(
      "datasource:\n  - name: main\n    url: sqlite:a.db\n    migrations:\n      placeholders:\n" +
        "        a: 1\n        b: { c: 1 }\n",
      /application\.yml:7: datasource\[0\]\.migrations\.placeholders\.b must be a string, a number or true\/false, got a mapping/,
    );
  });

  it("never shows a password, from a key or from the URL", async () => {
    const { list } = await load(
      "datasource:\n  - name: main\n    url: postgres://u:hunter2@/db\n    password: [not, a, string]\n",
    );
    await assert.rejects(list(), (e: Error) => {
      assert.ok(!e.message.includes("hunter2"), e.message);
      return true;
    });
    await fails(
      "datasource:\n  - name: main\n    url: 'ftp://u:hunter2@host/x'\n",
      /"ftp:\/\/\*\*\*@host\/x"/,
    );
  });
});

describe("SQL datasources config: read as an app reads application.yml", () => {
  it("takes the active profile's file, the environment's overrides and secret files", async () => {
    const { dir, list } = await load(
      "datasource:\n  - name: main\n    url: sqlite:./dev.db\n    password: ${file:pw}\n",
      "application.yml",
      {
        THAW_PROFILES_ACTIVE: "prod",
        DATASOURCE_0_URL: "postgres://other.internal/shop",
        // No file holds datasource[0].username: an override reaches only the keys written.
        DATASOURCE_0_USERNAME: "deploy",
      },
    );
    await writeFile(join(dir, "pw"), "from-a-secret\n");
    await writeFile(
      join(dir, "application-prod.yml"),
      "datasource:\n  - name: main\n    url: postgres://db.internal/shop\n    password: ${file:pw}\n",
    );
    const [main] = await list();
    // A list is replaced whole by the profile's.
    assert.deepEqual([main.kind, main.location, main.username, main.password], [
      "postgres",
      "postgres://other.internal/shop",
      undefined,
      "from-a-secret",
    ]);
  });

  it("names the profile's file and line of a wrong setting, and the variable of an override", async () => {
    const { dir, list } = await load(
      "datasource:\n  - name: main\n    url: sqlite:./dev.db\n",
      "application.yml",
      { THAW_PROFILES_ACTIVE: "prod" },
    );
    await writeFile(
      join(dir, "application-prod.yml"),
      "datasource:\n  - name: main\n    urll: x\n",
    );
    await assert.rejects(list(), {
      message: `${
        join(dir, "application-prod.yml")
      }:3: datasource[0].urll is not a datasource setting`,
    });
    const overridden = await load(
      "datasource:\n  - name: main\n    url: sqlite:./dev.db\n    migrations: { enabled: true }\n",
      "application.yml",
      { DATASOURCE_0_MIGRATIONS_ENABLED: "maybe" },
    );
    await assert.rejects(overridden.list(), {
      message: "environment variable DATASOURCE_0_MIGRATIONS_ENABLED: " +
        'datasource[0].migrations.enabled must be true or false, got "maybe"',
    });
  });
});
