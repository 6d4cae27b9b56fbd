// `migrate()` checks its options in its own terms: each message names the option as the caller
// wrote it (`lockTimeoutMs`, `dryRun`), never the command line's flag.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { migrate, type MigrateOptions, MigrationRunError } from "../../migrate.ts";
import { SQLITE } from "../sqlite.ts";
import { suiteTempDirs, tempDir } from "../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

// A datasource without a folder of files: a run that is let through opens nothing.
async function options(): Promise<MigrateOptions> {
  const dir = await suiteDir("thaw-migrate-options-");
  await writeFile(
    join(dir, "application.yml"),
    'datasource:\n  - name: main\n    url: "sqlite::memory:"\n    migrations: { enabled: true }\n',
  );
  return { config: dir, migrations: dir, env: {} };
}

async function refusal(given: MigrateOptions): Promise<string> {
  try {
    await migrate(given);
  } catch (error) {
    if (!(error instanceof MigrationRunError)) throw error;
    assert.equal(error.kind, "usage");
    assert.equal(error.exitCode, 2);
    return error.message;
  }
  assert.fail("migrate() accepted the options");
}

describe("migrate() options", () => {
  for (
    const [name, max] of [["lockTimeoutMs", 86_400_000], ["stopTimeoutMs", 3_600_000]] as const
  ) {
    it(`refuses a ${name} that is not a number of milliseconds, naming it`, async () => {
      const base = await options();
      for (
        const [wait, got] of [
          [-100, "-100"],
          [-0.0001, "-0.0001"],
          [max + 1, String(max + 1)],
          [Number.NaN, "NaN"],
          [Number.POSITIVE_INFINITY, "Infinity"],
          [Number.NEGATIVE_INFINITY, "-Infinity"],
          ["5000", "string"],
          [null, "null"],
          [5000n, "bigint"],
        ] as const
      ) {
        assert.equal(
          await refusal({ ...base, [name]: wait as number }),
          `${name}: expected a number of milliseconds from 0 to ${max}, got ${got}`,
        );
      }
    });
  }

  it("takes any number of milliseconds from 0 to a day, fractions too", async () => {
    const base = await options();
    for (const wait of [0, 0.0001, 1e-7, 1.5, 60_000, 86_400_000]) {
      const report = await migrate({ ...base, command: "status", lockTimeoutMs: wait });
      assert.equal(report.connections[0].state, "no-folder", String(wait));
    }
  });

  it("names the options a command does not take as migrate() spells them", async () => {
    const base = await options();
    assert.equal(
      await refusal({ ...base, command: "status", dryRun: true }),
      "dryRun applies to migrate, undo, baseline, repair, not to status",
    );
    assert.equal(
      await refusal({ ...base, command: "status", force: true }),
      "force applies to baseline, repair and unlock, not to status",
    );
    assert.equal(
      await refusal({ ...base, drift: true }),
      'drift applies to search connections (mode "search"), not to mode "sql"',
    );
    assert.equal(
      await refusal({ ...base, mode: "search", command: "repair", drift: true }),
      "drift applies to status, validate, migrate, not to repair",
    );
    assert.equal(
      await refusal({ ...base, command: "status", target: "1" }),
      "target applies to migrate, undo, baseline, not to status",
    );
    assert.equal(
      await refusal({ ...base, target: "v1" }),
      'target "v1": expected a version, numbers joined by dots or underscores (1, 1.2, 1_2)',
    );
    assert.equal(
      await refusal({ ...base, connection: "" }),
      "connection: expected a name, got an empty string",
    );
    assert.equal(
      await refusal({ ...base, mode: "elastic" as "sql" }),
      'mode "elastic": expected search, opensearch or sql',
    );
  });

  it("names the folders and the connection as migrate() spells them, not as the command line", async () => {
    const base = await options();
    const said = async (given: MigrateOptions): Promise<string> => {
      const error = await migrate(given).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof MigrationRunError, String(error));
      assert.doesNotMatch(error.message, /-c\b|--migrations|--sqlPath|--connection|--lock-timeout/);
      return error.message;
    };
    const gone = join(base.config as string, "gone");
    assert.match(
      await said({ ...base, config: gone }),
      /the config folder .*gone does not exist \(config; it holds application\.yml\)/,
    );
    assert.match(
      await said({ ...base, migrations: gone }),
      /the migrations root .*gone does not exist \(migrations; it holds one folder per connection\)/,
    );
    assert.equal(
      await said({ ...base, connection: "other" }),
      'connection "other": no such datasource (configured: main)',
    );
    await using bare = await tempDir("thaw-migrate-options-");
    await writeFile(join(bare.path, "application.yml"), "server:\n  port: 8080\n");
    assert.match(
      await said({ ...base, config: bare.path }),
      /\(for mode "search", configure "search" instead\)\.$/,
    );
  });

  it("names target, force and strictOrder in a refusal as migrate() spells them", async () => {
    await using dir = await tempDir("thaw-migrate-options-");
    await writeFile(
      join(dir.path, "application.yml"),
      `datasource:\n  - name: main\n    url: "sqlite:${join(dir.path, "app.db")}"\n` +
        "    migrations: { enabled: true }\n",
    );
    const base: MigrateOptions = { config: dir.path, migrations: join(dir.path, "files"), env: {} };
    const said = async (given: MigrateOptions): Promise<string> => {
      const error = await migrate(given).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof MigrationRunError, String(error));
      assert.doesNotMatch(error.message, /--target|--version|--force|strict-order/);
      return error.message;
    };
    await mkdir(join(dir.path, "files", "main", "a"), { recursive: true });
    await mkdir(join(dir.path, "files", "main", "b"), { recursive: true });
    await writeFile(join(dir.path, "files", "main", "a", "V5__x.sql"), "CREATE TABLE x (v INT);\n");
    await writeFile(join(dir.path, "files", "main", "b", "V1__y.sql"), "CREATE TABLE y (v INT);\n");
    assert.match(await said({ ...base, target: "2" }), /run without target, or move the file/);
    // What follows needs a database: on a Node without node:sqlite, the runner refuses SQLite
    // before it reads any record (tests/migrate_test.ts checks that refusal).
    if (SQLITE === undefined) return;
    await rm(join(dir.path, "files", "main", "b"), { recursive: true });
    await migrate({ ...base, command: "baseline" });
    assert.match(
      await said({ ...base, command: "baseline" }),
      /\(force records the current files over them/,
    );
    await writeFile(
      join(dir.path, "files", "main", "V1__late.sql"),
      "CREATE TABLE late (v INT);\n",
    );
    assert.match(
      await said({ ...base, strictOrder: true }),
      /run with strictOrder: false, or set migrations\.strict_order: false/,
    );
  });
});

describe("migrate() undo", () => {
  it("undoes above a target from code", async () => {
    if (SQLITE === undefined) return;
    const dir = await suiteDir("thaw-migrate-undo-");
    await writeFile(
      join(dir, "application.yml"),
      "datasource:\n  - name: main\n    url: sqlite:./app.db\n    migrations: { enabled: true }\n",
    );
    const folder = join(dir, "migrations", "main");
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, "V1__a.sql"), "CREATE TABLE a (v TEXT);\n");
    await writeFile(join(folder, "V2__b.sql"), "CREATE TABLE b (v TEXT);\n");
    await writeFile(join(folder, "U2__b.sql"), "DROP TABLE b;\n");
    const base: MigrateOptions = { config: dir, migrations: "migrations", cwd: dir, env: {} };
    await migrate(base);
    const undone = await migrate({ ...base, command: "undo", target: "1" });
    assert.deepEqual(
      undone.connections[0].files.map((f) => `${f.path}:${f.action}:${f.result ?? ""}`),
      ["V1__a.sql:skip:", "V2__b.sql:undo:undone"],
    );
    const status = await migrate({ ...base, command: "status" });
    assert.deepEqual(status.connections[0].files.map((f) => f.action), ["skip", "undone"]);
  });
});

describe("migrate() modules", () => {
  // A SQLite datasource with a folder: V1 makes a table, V2 is a code file on disk.
  async function withCode(): Promise<MigrateOptions> {
    const dir = await suiteDir("thaw-migrate-modules-");
    await writeFile(
      join(dir, "application.yml"),
      "datasource:\n  - name: main\n    url: sqlite:./app.db\n    migrations: { enabled: true }\n",
    );
    await mkdir(join(dir, "migrations", "main"), { recursive: true });
    await writeFile(join(dir, "migrations", "main", "V1__t.sql"), "CREATE TABLE t (v TEXT);\n");
    // Imported, this would fail the run: a given module must run in its place.
    await writeFile(
      join(dir, "migrations", "main", "V2__fill.js"),
      'export default () => { throw new Error("the file on disk ran"); };\n',
    );
    return { config: dir, migrations: "migrations", cwd: dir, env: {} };
  }

  it("refuses a key that is no code migration's path, or a module without a function", async () => {
    const base = await withCode();
    const run = { default: () => {} };
    for (const key of ["V2__fill.js", "main/V2__fill.sql", "main/lib/helper.ts", "main/x.d.ts"]) {
      assert.match(
        await refusal({ ...base, modules: { [key]: run } }),
        /^modules: .* is not the path of a migration or callback in code under the migrations root/,
        key,
      );
    }
    for (const module of [{}, { default: 3 }, null]) {
      assert.match(
        await refusal({
          ...base,
          modules: { "main/V2__fill.js": module as never },
        }),
        /modules: "main\/V2__fill\.js" has no default export that is a function/,
      );
    }
    assert.match(await refusal({ ...base, modules: "x" as never }), /modules: expected an object/);
  });

  it("runs the module given in place of the file, checksummed on the file's text", async () => {
    // A database is needed: a Node without node:sqlite refuses SQLite (tested elsewhere).
    if (SQLITE === undefined) return;
    const base = await withCode();
    const seen: string[] = [];
    const report = await migrate({
      ...base,
      modules: {
        "main/V2__fill.js": {
          default: async (ctx: { path: string; query(text: string): Promise<unknown[]> }) => {
            seen.push(ctx.path);
            await ctx.query("INSERT INTO t (v) VALUES ('from the module')");
          },
        },
      },
    });
    assert.deepEqual(seen, ["V2__fill.js"]);
    assert.equal(report.connections[0].applied, 2);
    // Recorded: the next run without modules skips it (the file would throw if imported).
    const again = await migrate(base);
    assert.equal(again.connections[0].skipped, 2);
  });

  it("runs a callback in code given as a module in place of its file", async () => {
    if (SQLITE === undefined) return;
    const base = await withCode();
    await writeFile(
      join(String(base.config), "migrations", "main", "afterMigrate.js"),
      'export default () => { throw new Error("the file on disk ran"); };\n',
    );
    const events: string[] = [];
    const run = (ctx: { path: string }) => {
      events.push(ctx.path);
    };
    await migrate({
      ...base,
      modules: { "main/V2__fill.js": { default: run }, "main/afterMigrate.js": { default: run } },
    });
    assert.deepEqual(events, ["V2__fill.js", "afterMigrate.js"]);
  });

  it("refuses a module for a file or datasource there is not, before anything is sent", async () => {
    const base = await withCode();
    for (
      const [key, said] of [
        ["main/V3__typo.js", /V3__typo\.js: is given as a module .* no such migration/],
        ["mian/V2__fill.js", /mian\/V2__fill\.js: .* names no configured datasource/],
      ] as const
    ) {
      await assert.rejects(
        migrate({ ...base, modules: { [key]: { default: () => {} } } }),
        (error: unknown) => {
          assert.ok(error instanceof MigrationRunError);
          assert.equal(error.kind, "plan");
          assert.match(error.message, said);
          assert.match(error.message, /nothing was sent/);
          return true;
        },
      );
    }
  });
});
