// `migrate()` of migrate.ts: the runners from code, on a real SQLite file where the runtime has
// node:sqlite (on Node before 22.13, its clear refusal instead).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import {
  ConfigError,
  migrate,
  type MigrateOptions,
  MigrationRunError,
  migrationStatus,
  readDatasource,
  summaryLines,
} from "../migrate.ts";
import { SQLITE } from "./sqlite.ts";
import { suiteTempDirs, tempDir } from "./temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

/** A config folder with datasource `main` on `./data/app.db` (relative to `cwd`), and its files. */
async function workspace() {
  const dir = await suiteDir("thaw-migrate-api-");
  await writeFile(
    join(dir, "application.yml"),
    "datasource:\n  - name: main\n    url: sqlite:${APP_DB:./data/app.db}\n" +
      "    migrations:\n      enabled: true\n",
  );
  const file = async (path: string, text: string) => {
    const full = join(dir, "migrations", "main", path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
  };
  const options: MigrateOptions = { config: dir, migrations: "migrations", cwd: dir, env: {} };
  return { dir, file, options, db: join(dir, "data", "app.db") };
}

/** Runs `migrate`, expecting it to throw a MigrationRunError, and returns that. */
async function failing(options: MigrateOptions): Promise<MigrationRunError> {
  try {
    await migrate(options);
  } catch (error) {
    if (error instanceof MigrationRunError) return error;
    throw error;
  }
  assert.fail("migrate() did not throw");
}

function rows(file: string, sql: string): Record<string, unknown>[] {
  const db = new SQLITE!.DatabaseSync(file);
  try {
    return db.prepare(sql).all().map((r) => ({ ...r }));
  } finally {
    db.close();
  }
}

const tables = (file: string) =>
  rows(file, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map((r) =>
    r.name
  );
const views = (file: string) =>
  rows(file, "SELECT name FROM sqlite_master WHERE type = 'view'").map((r) => r.name);

describe("migrate() from code", () => {
  it("names a missing config folder, and a missing migrations root, as configuration errors", async () => {
    const dir = await suiteDir("thaw-migrate-api-");
    const missing = await failing({ config: join(dir, "nope"), migrations: dir, env: {} });
    assert.equal(missing.kind, "config");
    assert.equal(missing.exitCode, 2);
    assert.equal(
      missing.message,
      `the config folder ${join(dir, "nope")} does not exist (config; it holds application.yml)`,
    );
    assert.deepEqual(missing.report.connections, []);
    assert.equal(missing.report.error?.kind, "config");
    await writeFile(
      join(dir, "application.yml"),
      "datasource:\n  - name: main\n    url: sqlite:x.db\n",
    );
    const noRoot = await failing({ config: dir, migrations: join(dir, "files"), env: {} });
    assert.equal(noRoot.kind, "config");
    assert.match(noRoot.message, /the migrations root .*files does not exist/);
    await rm(dir, { recursive: true });
  });

  it("refuses options the command line would refuse, as a usage error in its own words", async () => {
    const { options } = await workspace();
    const dryStatus = await failing({ ...options, command: "status", dryRun: true });
    assert.equal(dryStatus.kind, "usage");
    assert.equal(dryStatus.exitCode, 2);
    assert.match(dryStatus.message, /^dryRun applies to migrate, undo, baseline, repair/);
    const bogus = await failing({ ...options, command: "--help" as never });
    assert.equal(bogus.kind, "usage");
    assert.match(bogus.message, /unknown command "--help"/);
    const negative = await failing({ ...options, lockTimeoutMs: -1 });
    assert.equal(negative.kind, "usage");
  });

  it("refuses an option it does not take, and a mode it does not know, before reading anything", async () => {
    const { options, dir } = await workspace();
    // From JavaScript a misspelt option would otherwise be dropped: a dry run that migrates.
    const misspelt = await failing({ ...options, dry_run: true } as MigrateOptions);
    assert.equal(misspelt.kind, "usage");
    assert.equal(misspelt.exitCode, 2);
    assert.match(misspelt.message, /^unknown option "dry_run" \(migrate\(\) takes config, /);
    assert.equal(misspelt.report.command, "migrate");
    const two = await failing({ ...options, dryrun: true, Force: true } as MigrateOptions);
    assert.match(two.message, /^unknown options "dryrun", "Force" /);
    const mode = await failing({ ...options, mode: "elastic" as "sql" });
    assert.equal(mode.kind, "usage");
    assert.equal(mode.message, 'mode "elastic": expected search, opensearch or sql');
    const wait = await failing({ ...options, lockTimeoutMs: Number.NaN });
    assert.equal(
      wait.message,
      "lockTimeoutMs: expected a number of milliseconds from 0 to 86400000, got NaN",
    );
    // A value that is truthy without being true must not turn a dry run into a run.
    const truthy = await failing({ ...options, dryRun: 1 as unknown as boolean });
    assert.equal(truthy.message, "dryRun: expected true or false, got number");
    const text = await failing({ ...options, lockTimeoutMs: "5000" as unknown as number });
    assert.equal(
      text.message,
      "lockTimeoutMs: expected a number of milliseconds from 0 to 86400000, got string",
    );
    await assert.rejects(stat(join(dir, "data")), "nothing was opened");
  });

  it("reads each option once, and refuses a value of the wrong type as usage, never as a crash", async () => {
    const { options, dir } = await workspace();
    // A getter that answers false to the check and "no" after it must not turn --drift on.
    let reads = 0;
    const flipping = await failing({
      ...options,
      get drift() {
        return (reads++ === 0 ? false : "no") as boolean;
      },
    } as MigrateOptions);
    // Read once, as false: the run went on, to the missing migrations root.
    assert.equal(flipping.kind, "config");
    assert.equal(reads, 1);
    for (
      const [bad, message] of [
        [{ config: 5 }, "config: expected a path (a string or a file URL), got number"],
        [{ migrations: null }, "migrations: expected a path (a string or a file URL), got null"],
        [{ cwd: 1 }, "cwd: expected a string, got number"],
        [{ env: null }, "env: expected an object of variables, got null"],
        [{ onProgress: "x" }, "onProgress: expected a function, got string"],
        [{ signal: {} }, "signal: expected an AbortSignal"],
      ] as const
    ) {
      const error = await failing({ ...options, ...bad } as unknown as MigrateOptions);
      assert.equal(error.kind, "usage");
      assert.equal(error.message, message);
    }
    await assert.rejects(stat(join(dir, "data")), "nothing was opened");
  });

  it("takes a command, mode and options as typed values, as the command line does", async () => {
    const { options, file, db } = await workspace();
    await file("001-a.sql", "CREATE TABLE a (id INTEGER);\n");
    // No argument string is built: a connection name that looks like a flag is a name.
    const flagLike = await failing({ ...options, connection: "--force" });
    assert.equal(flagLike.kind, "config");
    assert.match(
      flagLike.message,
      /^connection "--force": no such datasource \(configured: main\)/,
    );
    const dry = await migrate({
      ...options,
      mode: "SQL" as "sql",
      dryRun: true,
      lockTimeoutMs: 1500,
    });
    assert.equal(dry.command, "dry-run");
    assert.equal(dry.connections[0].files[0].action, "apply");
    await assert.rejects(stat(db), "a dry run creates no database");
  });

  it("reads a datasource as the runner does, without its credentials", async () => {
    const { dir } = await workspace();
    const main = await readDatasource({ config: dir, name: "main", env: {}, cwd: dir });
    assert.deepEqual(main, {
      name: "main",
      kind: "sqlite",
      location: join(dir, "data", "app.db"),
      migrationsEnabled: true,
    });
    const elsewhere = await readDatasource({
      config: pathToFileURL(`${dir}/`),
      name: "main",
      env: { APP_DB: "/srv/app.db" },
    });
    assert.equal(elsewhere.location, "/srv/app.db");
    await assert.rejects(
      readDatasource({ config: dir, name: "other", env: {} }),
      (error) =>
        error instanceof ConfigError && /has no datasource named "other" \(configured: main\)/
          .test(error.message),
    );
    // A password in a query parameter is masked as in every report.
    await writeFile(
      join(dir, "application.yml"),
      "datasource:\n  - name: pg\n    url: postgres://u:p@db.example/app?sslpassword=TOPSECRET&sslmode=require\n",
    );
    const pg = await readDatasource({ config: dir, name: "pg", env: {}, cwd: dir });
    assert.ok(!pg.location.includes("TOPSECRET"), pg.location);
    assert.ok(!pg.location.includes("u:p"), pg.location);
  });

  if (SQLITE === undefined) {
    it("refuses SQLite on a Node without node:sqlite, with the runner's message", async () => {
      const { file, options, dir } = await workspace();
      await file("001-notes.sql", "CREATE TABLE notes (body TEXT);\n");
      const error = await failing(options);
      assert.equal(error.kind, "failure");
      assert.equal(error.exitCode, 1);
      assert.equal(error.connection, "main");
      assert.match(error.message, /SQLite needs a runtime with node:sqlite/);
      await assert.rejects(stat(join(dir, "data")), "nothing was created");
    });
    return;
  }

  it("applies new files, skips them on the next run, and records user@host", async () => {
    const { file, options, db } = await workspace();
    await file("001-notes.sql", "CREATE TABLE notes (body TEXT);\n");
    await file("release-1/002-tags.sql", "CREATE TABLE tags (name TEXT);\n");
    const progress: string[] = [];
    const first = await migrate({ ...options, onProgress: (line) => progress.push(line) });
    assert.equal(first.command, "migrate");
    assert.equal(first.error, undefined);
    assert.equal(first.connections[0].applied, 2);
    assert.deepEqual(first.connections[0].files.map((f) => [f.path, f.result]), [
      ["001-notes.sql", "applied"],
      ["release-1/002-tags.sql", "applied"],
    ]);
    assert.equal(progress[0], "main: 2 of 2 file(s) to apply");
    assert.match(progress[2], /^main \[2\/2\] apply release-1\/002-tags\.sql \(applied, \d+ ms\)$/);
    assert.deepEqual(tables(db), ["framework_migrations", "notes", "sqlite_sequence", "tags"]);
    const user = process.env.USER ?? process.env.LOGNAME ?? process.env.USERNAME;
    assert.deepEqual(
      rows(db, "SELECT DISTINCT executed_by FROM framework_migrations").map((r) => r.executed_by),
      [`${user || "unknown"}@${hostname()}`],
    );
    const second = await migrate(options);
    assert.equal(second.connections[0].applied, 0);
    assert.equal(second.connections[0].skipped, 2);
    assert.match(summaryLines(second)[0], /^main: 0 applied, 2 unchanged, \d+ request\(s\)/);
    const status = await migrate({ ...options, command: "status" });
    assert.deepEqual(status.connections[0].files.map((f) => f.action), ["skip", "skip"]);
  });

  it("runs repeatable files after the versioned ones, and again whenever they change", async () => {
    const { file, options, db } = await workspace();
    await file("R__note_view.sql", "CREATE VIEW note_view AS SELECT body FROM notes;\n");
    await file("V1__notes.sql", "CREATE TABLE notes (body TEXT);\n");
    const first = await migrate(options);
    assert.equal(first.error, undefined);
    assert.deepEqual(first.connections[0].files.map((f) => [f.path, f.result]), [
      ["V1__notes.sql", "applied"],
      ["R__note_view.sql", "applied"],
    ]);
    await file(
      "R__note_view.sql",
      "DROP VIEW note_view;\nCREATE VIEW note_view AS SELECT upper(body) AS body FROM notes;\n",
    );
    await file("V2__seed.sql", "INSERT INTO notes VALUES ('hi');\n");
    const second = await migrate(options);
    assert.equal(second.error, undefined);
    assert.deepEqual(second.connections[0].files.map((f) => [f.path, f.action, f.result]), [
      ["V1__notes.sql", "skip", undefined],
      ["V2__seed.sql", "apply", "applied"],
      ["R__note_view.sql", "reapply", "applied"],
    ]);
    assert.deepEqual(rows(db, "SELECT body FROM note_view"), [{ body: "HI" }]);
    assert.equal(
      rows(
        db,
        "SELECT count(*) AS n FROM framework_migrations WHERE migration_path = 'R__note_view.sql'",
      )[0].n,
      1,
    );
    const third = await migrate({ ...options, command: "validate" });
    assert.equal(third.error, undefined);
  });

  it("runs a file whatever the case of its suffix, and lists the files it ignores", async () => {
    const { file, options, db } = await workspace();
    await file("V1__notes.SQL", "CREATE TABLE notes (body TEXT);\n");
    await file("V2__tags.sql.bak", "CREATE TABLE tags (name TEXT);\n");
    await file("README.md", "# notes\n");
    const status = await migrate({ ...options, command: "status" });
    assert.deepEqual(status.connections[0].files.map((f) => [f.path, f.action]), [
      ["V1__notes.SQL", "apply"],
    ]);
    assert.deepEqual(status.connections[0].ignored, ["README.md", "V2__tags.sql.bak"]);
    const lines = summaryLines(status);
    assert.ok(lines.includes("  ignored      README.md"), lines.join("\n"));
    assert.match(lines.find((l) => l.startsWith("main: "))!, /, 2 other file\(s\) ignored,/);
    await migrate(options);
    assert.ok(tables(db).includes("notes"));
  });

  it("stops at a target version, and baselines up to a version, leaving later files pending", async () => {
    const { file, options, db } = await workspace();
    await file("V1__notes.sql", "CREATE TABLE notes (body TEXT);\n");
    await file("V1.1__tags.sql", "CREATE TABLE tags (name TEXT);\n");
    await file("V2__links.sql", "CREATE TABLE links (url TEXT);\n");
    const first = await migrate({ ...options, target: "1.1.0" });
    assert.deepEqual(first.connections[0].files.map((f) => [f.path, f.action]), [
      ["V1__notes.sql", "apply"],
      ["V1.1__tags.sql", "apply"],
      ["V2__links.sql", "above-target"],
    ]);
    assert.ok(!tables(db).includes("links"), "nothing above the target ran");
    assert.match(
      summaryLines(first)[0],
      /^main: 2 applied, 0 unchanged, 1 above the target version/,
    );
    const rest = await migrate(options);
    assert.equal(rest.connections[0].applied, 1);
    assert.ok(tables(db).includes("links"));

    const fresh = await workspace();
    for (const name of ["V1__notes.sql", "V1.1__tags.sql", "V2__links.sql"]) {
      await fresh.file(name, `CREATE TABLE t_${name.replace(/\W/g, "_")} (id INT);\n`);
    }
    const adopted = await migrate({ ...fresh.options, command: "baseline", target: "1.1" });
    assert.deepEqual(adopted.connections[0].files.map((f) => [f.path, f.action, f.result]), [
      ["V1__notes.sql", "record", "recorded"],
      ["V1.1__tags.sql", "record", "recorded"],
      ["V2__links.sql", "above-target", undefined],
    ]);
    const then = await migrate(fresh.options);
    assert.deepEqual(then.connections[0].files.map((f) => [f.path, f.action]), [
      ["V1__notes.sql", "skip"],
      ["V1.1__tags.sql", "skip"],
      ["V2__links.sql", "apply"],
    ]);
    assert.deepEqual(tables(fresh.db).filter((t) => String(t).startsWith("t_")), [
      "t_V2__links_sql",
    ]);
    await assert.rejects(
      migrate({ ...options, command: "status", target: "1" }),
      /: target applies to migrate, undo, baseline, not to status$/,
    );
  });

  it("baseline leaves a repeatable view to the next migrate, which creates it, as Flyway does", async () => {
    const { file, options, db } = await workspace();
    await file("V1__notes.sql", "CREATE TABLE notes (body TEXT);\n");
    await file("R__note_view.sql", "CREATE VIEW note_view AS SELECT body FROM notes;\n");
    // A database built by hand has the table, not yet the view.
    await mkdir(dirname(db), { recursive: true });
    rows(db, "CREATE TABLE notes (body TEXT)");
    const adopted = await migrate({ ...options, command: "baseline" });
    assert.deepEqual(adopted.connections[0].files.map((f) => [f.path, f.action, f.result]), [
      ["V1__notes.sql", "record", "recorded"],
      ["R__note_view.sql", "apply", undefined],
    ]);
    const then = await migrate(options);
    assert.deepEqual(then.connections[0].files.map((f) => [f.path, f.action]), [
      ["V1__notes.sql", "skip"],
      ["R__note_view.sql", "apply"],
    ]);
    assert.ok(views(db).includes("note_view"));
  });

  it("reports a changed file: migrate warns and goes on, validate throws naming it", async () => {
    const { file, options } = await workspace();
    await file("001-notes.sql", "CREATE TABLE notes (body TEXT);\n");
    await migrate(options);
    await file("001-notes.sql", "CREATE TABLE notes (body TEXT, at TEXT);\n");
    const again = await migrate(options);
    assert.deepEqual(again.connections[0].files.map((f) => [f.path, f.action]), [
      ["001-notes.sql", "changed"],
    ]);
    const invalid = await failing({ ...options, command: "validate" });
    assert.equal(invalid.kind, "invalid");
    assert.equal(invalid.exitCode, 1);
    assert.equal(invalid.file, "001-notes.sql");
    assert.match(
      invalid.message,
      /run-once files were changed after they ran \(main: 001-notes\.sql\)/,
    );
  });

  it("throws on a failing file, naming it and the reason, and records nothing of it", async () => {
    const { file, options, db } = await workspace();
    await file("001-notes.sql", "CREATE TABLE notes (body TEXT);\n");
    await file("002-bad.sql", "CREATE TABLE half (x INT);\nINSERT INTO nope VALUES (1);\n");
    await file("003-later.sql", "CREATE TABLE later (x INT);\n");
    const error = await failing(options);
    assert.equal(error.name, "MigrationRunError");
    assert.equal(error.kind, "failure");
    assert.equal(error.exitCode, 1);
    assert.equal(error.connection, "main");
    assert.equal(error.file, "002-bad.sql");
    assert.equal(error.line, 2);
    assert.match(error.reason ?? "", /no such table: nope/);
    assert.match(error.message, /^connection "main", file 002-bad\.sql:2: .*no such table: nope/);
    assert.deepEqual(error.report.connections[0].files.map((f) => [f.path, f.result]), [
      ["001-notes.sql", "applied"],
      ["002-bad.sql", "failed"],
      ["003-later.sql", undefined],
    ]);
    // The file before it stays applied; of the failed one, neither its table nor a record.
    assert.deepEqual(tables(db), ["framework_migrations", "notes", "sqlite_sequence"]);
    assert.deepEqual(
      rows(db, "SELECT migration_path FROM framework_migrations").map((r) => r.migration_path),
      ["001-notes.sql"],
    );
  });

  it("throws a lock error (exit code 3) when another writer holds the database too long", async () => {
    const { file, options, db } = await workspace();
    await file("001-notes.sql", "CREATE TABLE notes (body TEXT);\n");
    await mkdir(dirname(db), { recursive: true });
    const holder = new SQLITE!.DatabaseSync(db);
    try {
      holder.exec("BEGIN IMMEDIATE");
      const error = await failing({ ...options, lockTimeoutMs: 200 });
      assert.equal(error.kind, "lock");
      assert.equal(error.exitCode, 3);
      holder.exec("ROLLBACK");
    } finally {
      holder.close();
    }
    assert.equal((await migrate(options)).connections[0].applied, 1);
  });

  it("takes file URLs, and a datasource's URL from env", async () => {
    const { file, dir } = await workspace();
    await file("001-notes.sql", "CREATE TABLE notes (body TEXT);\n");
    const target = join(dir, "elsewhere", "x.db");
    const report = await migrate({
      config: pathToFileURL(`${dir}/`),
      migrations: pathToFileURL(join(dir, "migrations")),
      env: { APP_DB: target },
    });
    assert.equal(report.connections[0].applied, 1);
    assert.deepEqual(tables(target), ["framework_migrations", "notes", "sqlite_sequence"]);
  });
});

describe("migrationStatus", () => {
  it("gives calls made while one is under way its answer, and reads again after", async () => {
    await using dir = await tempDir("thaw-status-");
    await writeFile(
      join(dir.path, "application.yml"),
      'datasource:\n  - name: main\n    url: "sqlite::memory:"\n    migrations: { enabled: true }\n',
    );
    await mkdir(join(dir.path, "files", "main"), { recursive: true });
    await writeFile(join(dir.path, "files", "main", "V1__a.sql"), "SELECT 1;\n");
    const status = migrationStatus({ config: dir.path, migrations: join(dir.path, "files") });
    const first = status();
    const second = status();
    assert.equal(second, first);
    const body = await first;
    assert.deepEqual(body.connections.map((c) => c.files.map((f) => f.path)), [["V1__a.sql"]]);
    await writeFile(join(dir.path, "files", "main", "V2__b.sql"), "SELECT 2;\n");
    const again = status();
    assert.notEqual(again, first);
    assert.deepEqual((await again).connections[0].files.map((f) => f.path), [
      "V1__a.sql",
      "V2__b.sql",
    ]);
  });

  it("answers for a configuration of search connections alone, one that cannot be reached included", async () => {
    // The SQL run finds no datasource section: that kind is left out, not an error of the whole.
    await using dir = await tempDir("thaw-status-");
    await writeFile(
      join(dir.path, "application.yml"),
      'search:\n  - name: down\n    hosts: ["http://127.0.0.1:1"]\n    migrations: { enabled: true }\n',
    );
    await mkdir(join(dir.path, "files", "down"), { recursive: true });
    const body = await migrationStatus({ config: dir.path, migrations: join(dir.path, "files") })();
    assert.deepEqual(
      body.connections.map((c) => [c.kind, c.name, c.state]),
      [["search", "down", "error"]],
    );
  });
});
