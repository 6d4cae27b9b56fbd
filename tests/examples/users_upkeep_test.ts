// The sample users app's scheduled job: the SQL storage's nightly `PRAGMA optimize` on SQLite,
// behind the `users.upkeep` lock of the shedlock table its migrations make (through the
// datasource's own pool), so that a second instance of the app on the same file skips the tick the
// first one ran (PostgreSQL's run is users_postgres_test.ts's). Run under Deno by the test
// runner's permissions; users_server_test.ts starts main.ts with those of `npm start`.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Application } from "../../mod.ts";
import { call } from "../helpers.ts";
import { SQLITE } from "../sqlite.ts";
import { suiteTempDirs } from "../temp_dir.ts";
import { adminToken, asCaller, bootstrapUsers, freshSqlite, SQL_STORAGE } from "./users_storage.ts";

const apps: Application[] = [];
after(async () => {
  for (const app of apps) await app.close();
});
// Registered after the apps' closing, so that their databases' folders go once they are closed.
const folder = suiteTempDirs();

/** A fresh SQLite file's path: the first app on it migrates it. */
async function migratedFile(): Promise<string> {
  const { USERS_DB } = await freshSqlite(folder);
  return USERS_DB;
}

async function usersApp(file: string, env: Record<string, string> = {}): Promise<Application> {
  const app = await bootstrapUsers({ ...env, USERS_DB: file }, SQL_STORAGE, { sql: true });
  apps.push(app);
  return asCaller(app, await adminToken());
}

async function addUsers(app: Application, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const res = await call(app, "POST", "/users", {
      json: { name: `user ${i}`, email: `u${i}@example.com` },
    });
    assert.equal(res.status, 201);
  }
}

/** Reads the database beside the app: a statement's rows, or `[]` when its table is missing. */
function rows(file: string, sql: string): Record<string, unknown>[] {
  const db = new SQLITE!.DatabaseSync(file);
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } catch (error) {
    if (/no such table/.test(String(error))) return [];
    throw error;
  } finally {
    db.close();
  }
}

/** The planner's statistics of the users' email index: its row count, as ANALYZE last saw it. */
const analyzedRows = (file: string) =>
  rows(file, "SELECT stat FROM sqlite_stat1 WHERE idx = 'users_email'")
    .map((row) => Number(String(row.stat).split(" ")[0]));

if (SQLITE !== undefined) {
  describe("sample users app: the nightly upkeep, locked", () => {
    it("runs on its cron trigger, refreshes the planner's statistics, and holds its lock a minute", async () => {
      const file = await migratedFile();
      const first = await usersApp(file);
      await addUsers(first, 0, 50);
      assert.deepEqual(analyzedRows(file), [], "never analyzed yet");
      await first.scheduled({ cron: "0 3 * * *" });
      assert.deepEqual(analyzedRows(file), [50]);
      const [lock] = rows(file, "SELECT name, lock_until, locked_at FROM shedlock");
      assert.equal(lock.name, "users.upkeep");
      // lockAtLeastFor: one minute from when it was taken, by SQLite's clock.
      const held = Date.parse(`${lock.lock_until}Z`) - Date.parse(`${lock.locked_at}Z`);
      assert.ok(held >= 59_000 && held <= 60_000, `held ${held} ms`);

      // A second instance on the same file, in the same minute: the tick was the first's.
      const second = await usersApp(file);
      await addUsers(second, 1000, 50);
      await second.scheduled({ cron: "0 3 * * *" });
      assert.deepEqual(analyzedRows(file), [50], "the second instance skipped the run");
    });

    it('takes its cron from app.users.upkeep-cron; "-" turns it off', async () => {
      const file = await migratedFile();
      const app = await usersApp(file, { USERS_UPKEEP_CRON: "-" });
      await addUsers(app, 0, 5);
      await app.scheduled({ cron: "0 3 * * *" });
      assert.deepEqual(analyzedRows(file), []);
      assert.deepEqual(rows(file, "SELECT name FROM shedlock"), []);
    });
  });
}
