import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { migrate, type MigrationConnectionStatus, migrationStatus } from "../../migrate.ts";
import {
  createDatabase,
  DB_PASSWORD,
  DB_USER,
  type TestDatabase,
} from "../migrate/sql/databases.ts";
import { OPENSEARCH_URL } from "../migrate/search/cluster.ts";
import { type TempDir, tempDir } from "../temp_dir.ts";

const exposing = { management: { endpoints: { web: { exposure: { include: "migrations" } } } } };

describe("/actuator/migrations against PostgreSQL, SQLite and the search node", () => {
  const id = `m${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
  let made: TempDir | undefined;
  let dir: string;
  let pg: TestDatabase;
  const env = { THAW_TEST_DB_PASSWORD: DB_PASSWORD };
  const files = (name: string) => join(dir, "files", name);

  before(async () => {
    made = await tempDir("thaw-actuator-migrations-");
    dir = made.path;
    pg = await createDatabase("postgres", dir, id);
    await writeFile(
      join(dir, "application.yml"),
      [
        "datasource:",
        "  - name: main",
        `    url: ${pg.url}`,
        `    username: ${DB_USER}`,
        "    password: ${THAW_TEST_DB_PASSWORD}",
        "    migrations: { enabled: true }",
        "  - name: gone",
        // Nothing listens on port 1: the connection is refused at once.
        "    url: postgres://127.0.0.1:1/thaw",
        `    username: ${DB_USER}`,
        "    password: ${THAW_TEST_DB_PASSWORD}",
        "    migrations: { enabled: true }",
        "  - name: local",
        `    url: sqlite:${join(dir, "local.db")}`,
        "    migrations: { enabled: true }",
        "search:",
        `  - name: ${id}`,
        `    hosts: ["${OPENSEARCH_URL}"]`,
        `    migrations: { enabled: true, index: fm_${id} }`,
        "  - name: down",
        '    hosts: ["http://127.0.0.1:1"]',
        "    migrations: { enabled: true }",
        "",
      ].join("\n"),
    );
    for (const name of ["main", "gone", "local", id, "down"]) {
      await mkdir(files(name), { recursive: true });
    }
    await writeFile(join(files("main"), "V1__users.sql"), "CREATE TABLE users (id INT);\n");
    await writeFile(join(files("main"), "V2__orders.sql"), "CREATE TABLE orders (id INT);\n");
    await writeFile(join(files("gone"), "V1__x.sql"), "SELECT 1;\n");
    await writeFile(join(files("local"), "V1__notes.sql"), "CREATE TABLE notes (id INT);\n");
    const index = (n: number) =>
      JSON.stringify({
        method: "PUT",
        path: `/${id}-${n}`,
        body: { settings: { number_of_replicas: 0 } },
      });
    await writeFile(join(files(id), "V1__first.json"), index(1));
    await writeFile(join(files("down"), "V1__x.json"), index(9));
    // Applied: main's two files, and the search connection's first.
    await migrate({ config: dir, migrations: join(dir, "files"), connection: "main", env });
    await migrate({
      config: dir,
      migrations: join(dir, "files"),
      connection: id,
      mode: "search",
      env,
    });
    // Then: one changed, one gone from the checkout, one new on each.
    await writeFile(join(files("main"), "V2__orders.sql"), "CREATE TABLE orders (id BIGINT);\n");
    await rm(join(files("main"), "V1__users.sql"));
    await writeFile(join(files("main"), "V3__items.sql"), "CREATE TABLE items (id INT);\n");
    await writeFile(join(files(id), "V2__second.json"), index(2));
  });

  after(async () => {
    await pg?.close();
    await made?.[Symbol.asyncDispose]();
  });

  it("answers each file's state per connection, and each one that fails beside the others", async () => {
    const app = await bootstrap({
      config: exposing,
      actuator: actuator({
        migrations: migrationStatus({ config: dir, migrations: join(dir, "files"), env }),
      }),
    });
    const res = await app.fetch(new Request("http://localhost/actuator/migrations"));
    assert.equal(res.status, 200);
    const { connections } = await res.json() as { connections: MigrationConnectionStatus[] };
    const byName = new Map(connections.map((c) => [c.name, c]));
    assert.deepEqual(connections.map((c) => [c.name, c.kind]), [
      ["main", "sql"],
      ["gone", "sql"],
      ["local", "sql"],
      [id, "search"],
      ["down", "search"],
    ]);

    const main = byName.get("main")!;
    assert.equal(main.state, "ok");
    const states = Object.fromEntries(main.files.map((f) => [f.path, f.state]));
    assert.deepEqual(states, {
      "V1__users.sql": "missing",
      "V2__orders.sql": "changed",
      "V3__items.sql": "pending",
    });
    const v2 = main.files.find((f) => f.path === "V2__orders.sql")!;
    assert.equal(v2.version, "2");
    assert.equal(v2.description, "orders");
    assert.match(v2.checksum!, /^[0-9a-f]{64}$/);
    assert.ok(!Number.isNaN(Date.parse(v2.appliedOn!)));
    assert.match(v2.appliedBy!, /@/);

    const gone = byName.get("gone")!;
    assert.equal(gone.state, "error");
    assert.match(gone.error!, /127\.0\.0\.1:1/);
    assert.doesNotMatch(JSON.stringify(gone), new RegExp(DB_PASSWORD));

    // No database file yet: nothing to read, on every runtime (with node:sqlite or without).
    assert.deepEqual(byName.get("local")!.files.map((f) => [f.path, f.state]), [
      ["V1__notes.sql", "pending"],
    ]);

    const search = byName.get(id)!;
    assert.equal(search.state, "ok");
    assert.deepEqual(search.files.map((f) => [f.path, f.state]), [
      ["V1__first.json", "applied"],
      ["V2__second.json", "pending"],
    ]);
    assert.equal(byName.get("down")!.state, "error");
  });

  it("is a 503 naming why when the configuration cannot be read, never a 500", async () => {
    const app = await bootstrap({
      config: exposing,
      actuator: actuator({
        migrations: migrationStatus({ config: join(dir, "nope"), migrations: dir }),
      }),
      logger: { error: () => {} },
    });
    const res = await app.fetch(new Request("http://localhost/actuator/migrations"));
    assert.equal(res.status, 503);
    assert.match((await res.json()).error, /nope/);
  });

  it("is refused at bootstrap when exposed without a source, and 404 when not exposed", async () => {
    await assert.rejects(
      bootstrap({ config: exposing, actuator: actuator() }),
      /migrations endpoint reads the records of a config folder: pass actuator\(\{ migrations: migrationStatus/,
    );
    let asked = 0;
    const app = await bootstrap({
      actuator: actuator({
        migrations: () => {
          asked++;
          return Promise.resolve({});
        },
      }),
    });
    const res = await app.fetch(new Request("http://localhost/actuator/migrations"));
    assert.equal(res.status, 404);
    assert.equal(asked, 0);
  });
});
