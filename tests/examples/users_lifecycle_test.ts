// The sample users app's settings, health and stop, in process: the db health indicator on each
// storage, the SQLite repository (a @Bean method's result) closed by app.close() through its
// @PreDestroy, and the busy timeout read by @Value; and the README's blocks about them, held to the
// files they show. main.ts's SIGTERM is users_server_test.ts's.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import { load } from "js-yaml";
import { type Application, bootstrap } from "../../mod.ts";
import { UserController } from "../../examples/users/src/user_controller.ts";
import { UserRepository } from "../../examples/users/src/user_repository.ts";
import { UserService } from "../../examples/users/src/user_service.ts";
import { MemoryUserRepository } from "../../examples/users/storage/memory_user_repository.ts";
import { sqliteStorage } from "../../examples/users/storage/sqlite_storage.ts";
import { call } from "../helpers.ts";
import { SQLITE } from "../sqlite.ts";
import { bootstrapUsers, migratedUsersFile, type Storage, STORAGES } from "./users_storage.ts";

const apps: Application[] = [];
const folders: string[] = [];
after(async () => {
  for (const app of apps) await app.close();
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

const migratedFile = () => migratedUsersFile(folders);

/** The users app on application.yml, as its entry points bootstrap it, in environment `env`. */
async function usersApp(storage: Storage, env: Record<string, string> = {}): Promise<Application> {
  const app = await bootstrapUsers(env, [
    storage === "memory" ? MemoryUserRepository : sqliteStorage(await migratedFile()),
  ]);
  apps.push(app);
  return app;
}

async function health(app: Application, path = "/actuator/health") {
  const res = await call(app, "GET", path);
  return { status: res.status, cache: res.headers.get("cache-control"), body: await res.json() };
}

for (const storage of STORAGES) {
  describe(`sample users app: health, users in ${storage}`, () => {
    it("serves the three health paths from application.yml, the status alone by default", async () => {
      const app = await usersApp(storage);
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

    it("lists the db component with HEALTH_DETAILS=always", async () => {
      const app = await usersApp(storage, { HEALTH_DETAILS: "always" });
      assert.deepEqual((await health(app)).body, {
        status: "UP",
        components: { db: { status: "UP" } },
      });
    });
  });
}

describe("sample users app on SQLite: close and settings", () => {
  if (SQLITE === undefined) return;

  it("app.close() closes the database through @PreDestroy, and the db check turns DOWN", async () => {
    const app = await usersApp("sqlite", { HEALTH_DETAILS: "always" });
    const repository = app.getBean(UserRepository);
    await repository.ping();
    await app.close();
    // SQLite's own reason: the handle itself is closed, not a flag of the repository's.
    await assert.rejects(repository.ping(), /database is not open/);
    assert.deepEqual(await health(app), {
      status: 503,
      cache: "no-store",
      body: {
        status: "DOWN",
        components: { db: { status: "DOWN", details: { error: "database is not open" } } },
      },
    });
    const quiet = await usersApp("sqlite");
    await quiet.close();
    assert.deepEqual(await health(quiet), {
      status: 503,
      cache: "no-store",
      body: { status: "DOWN" },
    });
  });

  it("waits app.users.busy-timeout-ms (@Value, text from ${VAR} too) for a locked file, then answers 500", async () => {
    const file = await migratedFile();
    const app = await bootstrap({
      controllers: [UserController],
      components: [UserService, sqliteStorage(file)],
      config: { app: { users: { "busy-timeout-ms": "150" } } },
    });
    apps.push(app);
    // Another connection holds the write lock, as a migration run from the command line would.
    const other = new SQLITE!.DatabaseSync(file);
    other.exec("BEGIN IMMEDIATE");
    try {
      const started = performance.now();
      const res = await call(app, "POST", "/users", {
        json: { name: "Ada", email: "ada@example.com" },
      });
      const waited = performance.now() - started;
      assert.equal(res.status, 500);
      assert.deepEqual(await res.json(), {
        success: false,
        message: "Failed to create user: database is locked",
      });
      // SQLite sleeps the whole timeout before it gives up; the default would be 5000 ms.
      assert.ok(waited >= 150 && waited < 4000, `waited ${waited} ms`);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    const created = await call(app, "POST", "/users", {
      json: { name: "Ada", email: "ada@example.com" },
    });
    assert.equal(created.status, 201);
    await created.body?.cancel();
  });

  it("refuses a busy timeout that is not a whole number of milliseconds at bootstrap", async () => {
    const file = await migratedFile();
    const start = (value: unknown) =>
      bootstrap({
        components: [sqliteStorage(file)],
        config: { app: { users: { "busy-timeout-ms": value } } },
      });
    await assert.rejects(
      start("soon"),
      /'busyTimeoutMs' of class SqliteStorage: config: app\.users\.busy-timeout-ms holds a string that is not a number/,
    );
    await assert.rejects(
      start(2.5),
      /app\.users\.busy-timeout-ms must be a whole number of milliseconds, 0 or more, got 2\.5/,
    );
  });
});

describe("the sample users app's page (docs/sample-app.md)", () => {
  const text = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), "utf8");
  const section = () => text("docs/sample-app.md");
  const block = (section: string, after: string, lang: string) => {
    const at = section.indexOf(after);
    assert.ok(at >= 0, `no ${JSON.stringify(after)} in the section`);
    // A quoted file's block is fenced `ts fragment`: it is checked here, word for word.
    const fence = new RegExp(`\`\`\`${lang}(?: fragment)?\n([\\s\\S]*?)\`\`\``);
    const found = fence.exec(section.slice(at))?.[1];
    assert.ok(found !== undefined, `no ${lang} block after ${after}`);
    return found;
  };

  it("shows the command of npm start", async () => {
    const pkg = JSON.parse(await text("package.json"));
    const shown = block(await section(), "`npm start` runs", "sh").replace(/\\\n\s*/g, "");
    assert.equal(shown.trim(), pkg.scripts.start);
  });

  it("shows keys and values that application.yml holds", async () => {
    const shown = load(block(await section(), "A setting read with `@Value`", "yaml"));
    const file = load(await text("examples/users/application.yml"));
    const within = (part: unknown, whole: unknown, key: string): void => {
      if (part === null || typeof part !== "object") return assert.equal(part, whole, key);
      assert.ok(whole !== null && typeof whole === "object", `${key} is not a map in the file`);
      for (const [k, v] of Object.entries(part)) {
        within(v, (whole as Record<string, unknown>)[k], key ? `${key}.${k}` : k);
      }
    };
    within(shown, file, "");
  });

  it("shows src/database_health.ts word for word, importing @thaw/thaw", async () => {
    const file = await text("examples/users/src/database_health.ts");
    assert.equal(
      block(await section(), "is their `db` component", "ts"),
      file.replace('"../../../mod.ts"', '"@thaw/thaw"'),
    );
  });
});
