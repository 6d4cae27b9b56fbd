// The sample users app on each of its storages, for the tests: SQLite (what main.ts runs, on a
// fresh temporary database file) where the runtime has node:sqlite, and memory (what the workers
// run) everywhere, so a Node without SQLite still runs every route.
import { after } from "node:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Application, bootstrap, type Class } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { actuator } from "../../actuator.ts";
import { openApi } from "../../openapi.ts";
import { scanComponents } from "../../scan.ts";
import { migrate, readDatasource } from "../../migrate.ts";
import { UserRepository } from "../../examples/users/src/user_repository.ts";
import { MemoryUserRepository } from "../../examples/users/storage/memory_user_repository.ts";
import { sqliteStorage } from "../../examples/users/storage/sqlite_storage.ts";
import { SQLITE } from "../sqlite.ts";

export type Storage = "memory" | "sqlite";

/** The storages this runtime can run. */
export const STORAGES: readonly Storage[] = SQLITE === undefined
  ? ["memory"]
  : ["memory", "sqlite"];

export const USERS_DIR: URL = new URL("../../examples/users/", import.meta.url);
export const USERS_CONFIG: URL = new URL("application.yml", USERS_DIR);

/**
 * Bootstraps the users app as main.ts does: application.yml read in environment `env`, the
 * directories of its `app.component-scan` (src/) scanned, OpenAPI served as its `app.openapi` keys
 * say; with `components` (a storage) besides.
 */
export async function bootstrapUsers(
  env: Readonly<Record<string, string | undefined>>,
  components: readonly Class[],
): Promise<Application> {
  const config = await loadConfig(USERS_CONFIG, { env });
  return await bootstrap({
    config,
    components: [...await scanComponents(config), ...components],
    openapi: openApi(),
    actuator: actuator(),
  });
}

/**
 * A fresh SQLite file in a new folder of `folders` (removed by the caller), migrated as main.ts
 * migrates it; its path as the app resolves it.
 */
export async function migratedUsersFile(folders: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "thaw-users-"));
  folders.push(dir);
  const env = { USERS_DB: join(dir, "users.db") };
  await migrate({ config: USERS_DIR, migrations: new URL("migrations/", USERS_DIR), env });
  return (await readDatasource({ config: USERS_DIR, name: "users", env })).location;
}

/**
 * Opens the users app on a storage, as its entry points do. SQLite: migrates the database of
 * `$USERS_DB` (`file`, else a new one in a temporary folder) as main.ts does, then bootstraps on
 * it. Every app is closed, and every temporary folder removed, after the suite.
 */
export function usersApps(): (storage: Storage, file?: string) => Promise<UsersApp> {
  const opened: Application[] = [];
  const folders: string[] = [];
  after(async () => {
    for (const app of opened) app.getBean(UserRepository).close();
    for (const dir of folders) await rm(dir, { recursive: true, force: true });
  });
  return async (storage, file) => {
    if (storage === "memory") {
      const app = await bootstrapUsers({}, [MemoryUserRepository]);
      opened.push(app);
      return { app, close: () => app.getBean(UserRepository).close() };
    }
    if (file === undefined) {
      const dir = await mkdtemp(join(tmpdir(), "thaw-users-"));
      folders.push(dir);
      file = join(dir, "users.db");
    }
    const env = { USERS_DB: file };
    await migrate({ config: USERS_DIR, migrations: new URL("migrations/", USERS_DIR), env });
    const users = await readDatasource({ config: USERS_DIR, name: "users", env });
    const app = await bootstrapUsers(env, [sqliteStorage(users.location)]);
    opened.push(app);
    return { app, file, close: () => app.getBean(UserRepository).close() };
  };
}

/** An open users app, its database file (SQLite) and how to let go of it. */
export interface UsersApp {
  readonly app: Application;
  readonly file?: string;
  close(): void;
}
