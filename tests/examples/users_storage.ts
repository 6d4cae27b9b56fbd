// The sample users app on each of its storages, for the tests: SQLite (what main.ts runs by
// default, on a fresh temporary database file) where the runtime has node:sqlite, memory (what the
// workers run) everywhere, so a Node without SQLite still runs every route, and PostgreSQL (its
// `postgres` profile) with the fresh databases of users_postgres.ts, which needs the test server:
// kept apart, so that the files that do not import it stay unit tests.
import { after } from "node:test";
import { join } from "node:path";
import { type Application, bootstrap, type Class } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { actuator } from "../../actuator.ts";
import { data } from "../../data.ts";
import { openApi } from "../../openapi.ts";
import { scanComponents } from "../../scan.ts";
import { security } from "../../security.ts";
import { devToken } from "../../examples/users/dev/dev_token.ts";
import { MemoryUserRepository } from "../../examples/users/storage/memory_user_repository.ts";
import { SqlLocks } from "../../examples/users/storage/sql_locks.ts";
import { SqlUserRepository } from "../../examples/users/storage/sql_user_repository.ts";
import { usersMigrations } from "../../examples/users/storage/users_migrations.ts";
import { SQLITE } from "../sqlite.ts";
import { suiteTempDirs } from "../temp_dir.ts";

export type Storage = "memory" | "sqlite" | "postgres";

/** The storages this runtime runs without a database server: memory, and SQLite where it has it. */
export const STORAGES: readonly Storage[] = SQLITE === undefined
  ? ["memory"]
  : ["memory", "sqlite"];

/** What the SQL storage registers beside the scanned beans, as main.ts does. */
export const SQL_STORAGE: readonly Class[] = [SqlUserRepository, SqlLocks];

export const USERS_DIR: URL = new URL("../../examples/users/", import.meta.url);
export const USERS_CONFIG: URL = new URL("application.yml", USERS_DIR);

/**
 * Bootstraps the users app as main.ts does: application.yml read in environment `env` (its `dev`
 * profile, the dev key, unless `THAW_PROFILES_ACTIVE` says otherwise), the directories of its
 * `app.component-scan` (src/) scanned, OpenAPI served as its `app.openapi` keys say, every route
 * secured; with `components` (a storage) besides, and with `sql` the `users` datasource as data()
 * gives it, migrated first.
 */
export async function bootstrapUsers(
  env: Readonly<Record<string, string | undefined>>,
  components: readonly Class[],
  options: { sql?: boolean } = {},
): Promise<Application> {
  const config = await loadConfig(USERS_CONFIG, { env });
  return await bootstrap({
    config,
    components: [...await scanComponents(config), ...components],
    openapi: openApi(),
    actuator: actuator(),
    security: security(),
    ...options.sql ? { data: data({ migrate: usersMigrations(config) }) } : {},
  });
}

/** DEV ONLY: a dev token of a caller who may do everything: read, write and delete users. */
export function adminToken(): Promise<string> {
  return devToken({ subject: "admin", scopes: ["users:read", "users:write"], roles: ["ADMIN"] });
}

/**
 * `app` as an admin calls it: its `fetch` sends `token` with each request that carries no
 * `Authorization` of its own (through `listen(app)` too), so that the route cases test the routes;
 * the refusals are tested on the app itself (users_security_test.ts).
 */
export function asCaller(app: Application, token: string): Application {
  const fetch: Application["fetch"] = (request, ...rest) => {
    if (request.headers.has("authorization")) return app.fetch(request, ...rest);
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${token}`);
    return app.fetch(new Request(request, { headers }), ...rest);
  };
  return new Proxy(app, {
    get: (target, key) => {
      if (key === "fetch") return fetch;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The environment that puts the users datasource on a fresh database; `folder` makes the folders
 * it needs (a maker of `suiteTempDirs()`, which removes them after the suite).
 */
export type FreshDatabase = (
  folder: (prefix?: string) => Promise<string>,
) => Promise<Record<string, string>>;

/** A SQLite file in a new folder that `folder` makes. */
export const freshSqlite: FreshDatabase = async (folder) => ({
  USERS_DB: join(await folder("thaw-users-"), "users.db"),
});

/**
 * Opens the users app on a storage in environment `env`: on the database it names (`USERS_DB`,
 * `USERS_DB_URL`), else on a fresh one.
 */
export type UsersApps = (storage: Storage, env?: Record<string, string>) => Promise<UsersApp>;

/**
 * Opens the users app on a storage, as its entry points do. SQL: bootstraps with data() on the
 * database `env` names (else a fresh one, of `postgres` for PostgreSQL), which the bootstrap
 * migrates as main.ts's does. Every app is closed, and every temporary folder removed, after the
 * suite.
 */
export function usersApps(postgres?: FreshDatabase): UsersApps {
  const opened: Application[] = [];
  after(async () => {
    for (const app of opened) await app.close();
  });
  // Registered after the apps' closing, so that their databases' folders go once they are closed.
  const folder = suiteTempDirs();
  return async (storage, env = {}) => {
    const token = await adminToken();
    if (storage === "memory") {
      const app = await bootstrapUsers(env, [MemoryUserRepository]);
      opened.push(app);
      return { app: asCaller(app, token), unauthenticated: app, env, close: () => app.close() };
    }
    const fresh = storage === "sqlite" ? freshSqlite : postgres;
    if (fresh === undefined) {
      throw new Error("usersApps(): PostgreSQL needs usersApps(freshPostgres) (users_postgres.ts)");
    }
    if (!("USERS_DB" in env || "USERS_DB_URL" in env)) env = { ...env, ...await fresh(folder) };
    const app = await bootstrapUsers(env, SQL_STORAGE, { sql: true });
    opened.push(app);
    return { app: asCaller(app, token), unauthenticated: app, env, close: () => app.close() };
  };
}

/**
 * An open users app, as an admin calls it (`asCaller`) and as anyone does, the environment that
 * names its database, and how to close it.
 */
export interface UsersApp {
  readonly app: Application;
  readonly unauthenticated: Application;
  readonly env: Record<string, string>;
  close(): Promise<void>;
}
