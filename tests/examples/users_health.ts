// The health of the sample users app for one storage, declared in the suite that calls them:
// data()'s `db` component on a SQL storage (none in memory, where there is no database), DOWN once
// app.close() has closed the datasource's pool. users_lifecycle_test.ts runs them on memory and
// SQLite, users_postgres_test.ts on PostgreSQL.
import { it } from "node:test";
import assert from "node:assert/strict";
import type { Application } from "../../mod.ts";
import { UserRepository } from "../../examples/users/src/user_repository.ts";
import { call } from "../helpers.ts";
import type { Storage, UsersApps } from "./users_storage.ts";

async function health(app: Application, path = "/actuator/health") {
  const res = await call(app, "GET", path);
  return { status: res.status, cache: res.headers.get("cache-control"), body: await res.json() };
}

const DATABASE = { sqlite: "SQLite", postgres: "PostgreSQL" } as const;

/** Declares the health cases on apps of `storage` that `open` makes. */
export function healthCases(storage: Storage, open: UsersApps): void {
  const usersApp = async (env: Record<string, string> = {}) => (await open(storage, env)).app;
  it("serves the three health paths from application.yml, the status alone by default", async () => {
    const app = await usersApp();
    assert.deepEqual(await health(app), {
      status: 200,
      cache: "no-store",
      body: { status: "UP" },
    });
    for (const probe of ["liveness", "readiness"]) {
      const answer = await health(app, `/actuator/health/${probe}`);
      assert.deepEqual([answer.status, answer.body], [200, { status: "UP" }], probe);
    }
  });

  it("lists the db component of data() with HEALTH_DETAILS=always (none in memory)", async () => {
    const app = await usersApp({ HEALTH_DETAILS: "always" });
    const { body } = await health(app);
    assert.equal(body.status, "UP");
    // Thaw's own disk component, whatever the storage; its free bytes change from run to run.
    assert.equal(body.components.diskSpace.status, "UP");
    // The lock manager takes its locks on the users datasource: its one part.
    const database = storage === "memory" ? undefined : { database: DATABASE[storage] };
    assert.deepEqual(
      body.components.db,
      database && { status: "UP", details: { users: database } },
    );
  });

  if (storage === "memory") return;

  it("app.close() closes the datasource's pool, and the db check turns DOWN", async () => {
    const app = await usersApp({ HEALTH_DETAILS: "always" });
    await app.getBean(UserRepository).findAll();
    await app.close();
    // The pool's own reason, naming the datasource: it is closed, not a flag of the repository.
    await assert.rejects(app.getBean(UserRepository).findAll(), /"users": the pool is closed/);
    const closed = await health(app);
    assert.deepEqual([closed.status, closed.cache, closed.body.status], [503, "no-store", "DOWN"]);
    const error = 'datasource "users": the pool is closed';
    assert.deepEqual(closed.body.components.db, {
      status: "DOWN",
      details: { error },
    });
    const quiet = await usersApp();
    await quiet.close();
    assert.deepEqual(await health(quiet), {
      status: 503,
      cache: "no-store",
      body: { status: "DOWN" },
    });
  });
}
