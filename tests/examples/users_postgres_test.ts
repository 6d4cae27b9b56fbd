// The sample users app on PostgreSQL, what its tests run on SQLite once more: its `postgres`
// profile (application-postgres.yml, migrations-postgres/) on a fresh database of the test server
// per test, on every runtime (Node 20 too, which has no SQLite). The route cases, the health
// cases, and the nightly job's lock; the other suites do not depend on the database, and stay on
// memory and SQLite to keep the run short.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SqlClient } from "../../data.ts";
import { call } from "../helpers.ts";
import { healthCases } from "./users_health.ts";
import { freshPostgres } from "./users_postgres.ts";
import { routeCases } from "./users_routes.ts";
import { usersApps } from "./users_storage.ts";

describe("sample users app (seed 4.2), users in postgres", () => {
  routeCases("postgres", usersApps(freshPostgres));
});

describe("sample users app: health, users in postgres", () => {
  healthCases("postgres", usersApps(freshPostgres));
});

describe("sample users app on PostgreSQL: the nightly upkeep", () => {
  const open = usersApps(freshPostgres);

  it("takes its lock through the datasource's pool, and leaves the analyzing to autovacuum", async () => {
    const { app } = await open("postgres");
    for (let i = 0; i < 3; i++) {
      const res = await call(app, "POST", "/users", {
        json: { name: `user ${i}`, email: `u${i}@example.com` },
      });
      assert.equal(res.status, 201);
    }
    await app.scheduled({ cron: "0 3 * * *" });
    const sql = app.getBean(SqlClient);
    const [lock] = await sql.query<{ name: string; held: string }>`
      SELECT name, EXTRACT(EPOCH FROM lock_until - locked_at) * 1000 AS held FROM shedlock`;
    assert.equal(lock.name, "users.upkeep");
    // lockAtLeastFor: one minute from when it was taken, by PostgreSQL's clock.
    assert.equal(Number(lock.held), 60_000);
    // The job itself ran nothing (no ANALYZE): PostgreSQL's autovacuum keeps the statistics.
    const stats = await sql.one<{ last_analyze: unknown }>`
      SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'users'`;
    assert.equal(stats.last_analyze, null);
  });
});

describe("sample users app on PostgreSQL: ids the column cannot hold", () => {
  const open = usersApps(freshPostgres);

  it("answers 404 for an id past PostgreSQL's INTEGER, as it does on SQLite, not a 500", async () => {
    const { app } = await open("postgres");
    for (const method of ["GET", "PUT", "DELETE"] as const) {
      const res = await call(app, method, "/users/99999999999", {
        ...(method === "PUT" ? { json: { name: "n", email: "n@example.com" } } : {}),
      });
      assert.equal(res.status, 404, `${method} /users/99999999999`);
    }
  });
});
