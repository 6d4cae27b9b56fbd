// The sample users app's settings, health and stop, in process: the health cases of
// users_health.ts on memory and SQLite (PostgreSQL's are users_postgres_test.ts's), the busy
// timeout of the datasource's pool; and the docs page's blocks, held to the files they show.
// main.ts's SIGTERM is users_server_test.ts's.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { load } from "js-yaml";
import { type Application, bootstrap } from "../../mod.ts";
import { data } from "../../data.ts";
import { security } from "../../security.ts";
import { DEV_PUBLIC_KEY } from "../../examples/users/dev/dev_public_key.ts";
import { UserController } from "../../examples/users/src/user_controller.ts";
import { UserService } from "../../examples/users/src/user_service.ts";
import { call } from "../helpers.ts";
import { SQLITE } from "../sqlite.ts";
import { suiteTempDirs } from "../temp_dir.ts";
import { healthCases } from "./users_health.ts";
import {
  adminToken,
  asCaller,
  freshSqlite,
  SQL_STORAGE,
  STORAGES,
  USERS_DIR,
  usersApps,
} from "./users_storage.ts";

const apps: Application[] = [];
after(async () => {
  for (const app of apps) await app.close();
});
// Registered after the apps' closing, so that their databases' folders go once they are closed.
const folder = suiteTempDirs();

for (const storage of STORAGES) {
  describe(`sample users app: health, users in ${storage}`, () => {
    healthCases(storage, usersApps());
  });
}

describe("sample users app on SQLite: settings", () => {
  if (SQLITE === undefined) return;

  /**
   * The app's beans on a config object: the users datasource on `file`, its pool as given, the
   * dev key; called by an admin.
   */
  const onFile = async (file: string, pool: Record<string, unknown>) => {
    const app = await bootstrap({
      controllers: [UserController],
      components: [UserService, ...SQL_STORAGE],
      config: {
        datasource: [{ name: "users", url: `sqlite:${file}`, pool, migrations: { enabled: true } }],
        security: { oauth2: { resourceserver: { jwt: { "public-key": DEV_PUBLIC_KEY } } } },
      },
      data: data({ migrate: new URL("migrations/", USERS_DIR) }),
      security: security(),
    });
    apps.push(app);
    return asCaller(app, await adminToken());
  };

  it("waits the pool's busy-timeout for a file another connection holds, then answers 500", async () => {
    const { USERS_DB: file } = await freshSqlite(folder);
    const app = await onFile(file, { "busy-timeout": "150ms" });
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
        message: 'Failed to create user: datasource "users": INSERT INTO users (name, email) ' +
          "VALUES (?, ?) RETURNING id, name, email: database is locked",
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

  it("refuses a busy-timeout that is not a duration at bootstrap, naming the key", async () => {
    const { USERS_DB: file } = await freshSqlite(folder);
    await assert.rejects(onFile(file, { "busy-timeout": "soon" }), /datasource\[0\]\.pool/);
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
    const shown = load(block(await section(), "**Its settings.**", "yaml"));
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

  it("shows the SQL repository's insert and nightly job as storage/sql_user_repository.ts holds them", async () => {
    const file = await text("examples/users/storage/sql_user_repository.ts");
    for (const after of ["`RETURNING` gives the row", "as a\n`@Scheduled` method"]) {
      // The method as the class holds it, one level of indentation in.
      const shown = block(await section(), after, "ts").replace(/^(?=.)/gm, "  ");
      assert.ok(file.includes(shown), `the block after ${after} is not in the file:\n${shown}`);
    }
  });

  it("shows main.ts's bootstrap call as main.ts makes it", async () => {
    const file = await text("examples/users/main.ts");
    const shown = block(await section(), "`main.ts` is one `bootstrap`", "ts");
    const data =
      "data: data({ migrate: usersMigrations(config), onProgress: (line) => console.log(line) }),";
    for (const line of [data, "components: ["]) {
      assert.ok(shown.includes(line) && file.includes(line), line);
    }
    // main.ts's imports as an app outside the repository writes them: ../../x.ts is @thaw/thaw/x.
    const imports = (code: string) =>
      [...code.matchAll(/^import \{ [^}]+ \} from "[^"]+";$/gm)].map(([line]) =>
        line.replace(/"(?:\.\.\/)+mod\.ts"/, '"@thaw/thaw"')
          .replace(/"(?:\.\.\/)+(\w+)\.ts"/, '"@thaw/thaw/$1"')
      ).sort();
    assert.equal(imports(file).length, 12);
    assert.deepEqual(imports(shown), imports(file));
  });
});
