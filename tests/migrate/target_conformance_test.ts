// One conformance suite for every MigrationTarget the engine drives: what the engine relies on of
// a target (records, the lock, applying, recording, dropping, failing, unlocking), run against the
// target in memory, SQLite, PostgreSQL, MariaDB and the real OpenSearch node. The real targets are
// opened through their driver (configuration read from an application.yml, files planned by the
// driver), as a run opens them; a server that is not running fails the suite.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import type {
  DriverConnection,
  DriverContext,
  FileRecord,
  MigrationDriver,
  MigrationTarget,
} from "../../src/migrate/driver.ts";
import { rawContentHash } from "../../src/migrate/files/content_hash.ts";
import { isMigrationError, MigrationFailure } from "../../src/migrate/migration_error.ts";
import type { PlannedFile } from "../../src/migrate/plan/planned_file.ts";
import { type FileReport, silentProgress } from "../../src/migrate/run_report.ts";
import { type RunnerOptions, runTargets } from "../../src/migrate/run/run_targets.ts";
import { RequestTally } from "../../src/migrate/request_counter.ts";
import { COMMAND_LINE_NAMES } from "../../src/migrate/option_names.ts";
import { searchDriver } from "../../src/migrate/search/search_driver.ts";
import { sqlDriver } from "../../src/migrate/sql/sql_driver.ts";
import { VERSION } from "../../src/version.ts";
import { MemoryTarget } from "./memory_target.ts";
import { EARLIER_RECORDS_MAPPINGS, OPENSEARCH_URL, os } from "./search/cluster.ts";
import { createDatabase, DB_PASSWORD, DB_USER, type Kind, KINDS } from "./sql/databases.ts";
import { suiteTempDirs } from "../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

/** Two files that apply, one that fails, and how to see whether a file ran. */
interface Files {
  readonly first: PlannedFile;
  readonly second: PlannedFile;
  readonly failing: PlannedFile;
  /** Whether what `file` creates exists: it ran, as opposed to only being recorded. */
  ran(file: PlannedFile): Promise<boolean>;
}

/** One kind of target: `open` gives a runner's view of one fresh store; each call, another runner. */
interface Subject {
  readonly name: string;
  /**
   * The lock is held for the run (PostgreSQL, MariaDB, search); SQLite's is each file's own write
   * transaction, and the target in memory is one runner.
   */
  readonly runLock: boolean;
  /**
   * A file another runner recorded first is seen under the file's own lock, and not run (SQLite);
   * under a run lock, the engine reads the records again once it holds it.
   */
  readonly fileLock: boolean;
  open(): Promise<MigrationTarget<PlannedFile>>;
  readonly files: Files;
  /** Who the target's records name as their writer. */
  readonly by: string;
  /**
   * Writes the record of `file` as the version before runner versions (SQL) and writers (search)
   * were recorded wrote it, into a store of that version's shape; nothing was opened before.
   */
  writeEarlierRecord(file: PlannedFile, at: Date): Promise<void>;
  /** What status shows of such a record: what it holds, nothing more. */
  earlierShows(at: Date): RecordedRun | undefined;
}

async function configFolder(yaml: string): Promise<string> {
  const dir = await suiteDir("thaw-conformance-");
  await writeFile(join(dir, "application.yml"), yaml);
  return dir;
}

function context(dir: string, env: Record<string, string> = {}): DriverContext {
  return {
    configDir: dir,
    migrations: join(dir, "migrations"),
    env: (name) => env[name],
    cwd: dir,
    identity: { host: "conformance", pid: process.pid, user: "tester" },
    lockTimeoutMs: 0,
    progress: silentProgress,
    requests: tally,
    optionNames: COMMAND_LINE_NAMES,
  };
}

// Every target of these tests counts its requests here, by connection.
const tally = new RequestTally();

/** Plans `text` as file `path` of the driver's only connection. */
async function plan<C extends DriverConnection>(
  driver: MigrationDriver<C, PlannedFile>,
  connection: C,
  path: string,
  text: string,
): Promise<PlannedFile> {
  const bytes = new TextEncoder().encode(text);
  return await driver.plan({ path, bytes, hash: await rawContentHash(bytes) }, connection);
}

/** A driver's subject: its one connection read from `yaml`, opened anew for every runner. */
async function driven<C extends DriverConnection>(
  name: string,
  locks: { runLock: boolean; fileLock: boolean },
  driver: MigrationDriver<C, PlannedFile>,
  yaml: string,
  texts: { first: [string, string]; second: [string, string]; failing: [string, string] },
  ran: (file: PlannedFile) => Promise<boolean>,
  earlier: Pick<Subject, "writeEarlierRecord" | "earlierShows">,
  env?: Record<string, string>,
): Promise<Subject> {
  const where = context(await configFolder(yaml), env);
  const [connection] = await driver.connections(where);
  return {
    name,
    ...locks,
    by: "tester@conformance",
    ...earlier,
    open: async () => (await driver.open([connection], where))[0],
    files: {
      first: await plan(driver, connection, ...texts.first),
      second: await plan(driver, connection, ...texts.second),
      failing: await plan(driver, connection, ...texts.failing),
      ran,
    },
  };
}

async function sqlSubject(kind: Kind): Promise<Subject> {
  const id = `conf_${crypto.randomUUID().slice(0, 8)}`;
  const dir = await suiteDir("thaw-conformance-db-");
  const db = await createDatabase(kind, dir, id);
  after(() => db.close());
  const credentials = kind === "sqlite"
    ? ""
    : `    username: ${DB_USER}\n    password: \${DB_PASSWORD}\n`;
  const tables = async () =>
    (await db.query(
      kind === "sqlite"
        ? "SELECT name FROM sqlite_master WHERE type = 'table'"
        : kind === "postgres"
        ? "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'"
        : "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()",
    )).map((r) => String(r.name ?? r.NAME).toLowerCase());
  return driven(
    kind,
    // SQLite's run lock is its write lock, held from lock to release; its files also decide
    // again under their own savepoint.
    { runLock: true, fileLock: kind === "sqlite" },
    sqlDriver,
    `datasource:\n  - name: main\n    url: "${db.url}"\n${credentials}` +
      `    migrations:\n      enabled: true\n`,
    {
      first: ["001-first.sql", "CREATE TABLE conf_first (id INTEGER);\n"],
      second: ["002-second.sql", "CREATE TABLE conf_second (id INTEGER);\n"],
      failing: ["003-failing.sql", "INSERT INTO conf_nowhere VALUES (1);\n"],
    },
    async (file) =>
      (await tables()).includes(file.path === "001-first.sql" ? "conf_first" : "conf_second"),
    {
      // The table as the runner made it before it had a runner_version column.
      async writeEarlierRecord(file, at) {
        const [quoted, id, time] = kind === "mysql"
          ? ["`framework_migrations`", "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY", "DATETIME(3)"]
          : kind === "postgres"
          ? [
            `"framework_migrations"`,
            "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
            "TIMESTAMPTZ",
          ]
          : [`"framework_migrations"`, "INTEGER PRIMARY KEY AUTOINCREMENT", "TEXT"];
        await db.query(`CREATE TABLE ${quoted} (
          id ${id},
          migration_path VARCHAR(768) NOT NULL UNIQUE,
          content_hash CHAR(64) NOT NULL,
          executed_at ${time} NOT NULL,
          executed_by VARCHAR(255) NOT NULL,
          execution_ms INTEGER NOT NULL
        )`);
        // SQLite's column holds toISOString() text; MariaDB's DATETIME takes no zone suffix.
        const value = kind === "mysql"
          ? at.toISOString().replace("T", " ").replace("Z", "")
          : at.toISOString();
        await db.query(
          `INSERT INTO ${quoted} (migration_path, content_hash, executed_at, executed_by, ` +
            `execution_ms) VALUES ('${file.path}', '${file.hash}', '${value}', 'old@host', 3)`,
        );
      },
      earlierShows: (at) => ({ at: at.toISOString(), by: "old@host" }),
    },
    { DB_PASSWORD },
  );
}

function searchSubject(): Promise<Subject> {
  const id = `conf${crypto.randomUUID().slice(0, 8)}`;
  after(() => os("DELETE", `/${id}-*,fm_${id}`));
  const template = (name: string) =>
    JSON.stringify({ index_patterns: [`${id}-${name}-*`], template: { settings: {} } });
  return driven(
    "search",
    { runLock: true, fileLock: false },
    searchDriver(),
    `search:\n  - name: ${id}\n    hosts: ["${OPENSEARCH_URL}"]\n` +
      `    migrations:\n      enabled: true\n      index: fm_${id}\n`,
    {
      first: [`${id}-first.json`, template("first")],
      second: [`${id}-second.json`, template("second")],
      // The node refuses a template whose settings it does not know.
      failing: [
        `${id}-failing.json`,
        JSON.stringify({ index_patterns: [`${id}-x-*`], template: { settings: { nope: 1 } } }),
      ],
    },
    async (file) =>
      (await os("GET", `/_index_template/${file.path.replace(/\.json$/, "")}`)).status === 200,
    {
      // The records index as the runner made it before records named their writer.
      async writeEarlierRecord(file, at) {
        const created = await os("PUT", `/fm_${id}`, {
          settings: { number_of_shards: 1, auto_expand_replicas: "0-1" },
          mappings: EARLIER_RECORDS_MAPPINGS,
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const put = await os("PUT", `/fm_${id}/_doc/earlier?refresh=true`, {
          migration_path: file.path,
          connection: id,
          content_hash: file.hash,
          executed_at: at.toISOString(),
          execution_ms: 3,
          request: { method: "PUT", path: `/_index_template/${file.path.replace(/\.json$/, "")}` },
          runner_version: "0.0.1",
        });
        assert.equal(put.status, 201, JSON.stringify(put.body));
      },
      earlierShows: (at) => ({ at: at.toISOString(), runnerVersion: "0.0.1" }),
    },
  );
}

function memorySubject(): Subject {
  const shared = new MemoryTarget("memory", tally);
  const file = (path: string): PlannedFile => ({ path, hash: `h-${path}`, runOnce: true });
  const failing = file("003-failing");
  shared.failOn = {
    path: failing.path,
    error: new MigrationFailure({ connection: "memory", file: failing.path, reason: "refused" }),
  };
  return {
    name: "memory",
    runLock: false,
    fileLock: true,
    by: shared.executedBy,
    // A record that says nothing of its run: only its checksum.
    writeEarlierRecord: (file) => Promise.resolve(void shared.records.set(file.path, file.hash)),
    earlierShows: () => undefined,
    open: () => Promise.resolve(shared),
    files: {
      first: file("001-first"),
      second: file("002-second"),
      failing,
      ran: (f) => Promise.resolve(shared.calls.includes(`apply ${f.path}`)),
    },
  };
}

/** What status shows of a record's run. */
type RecordedRun = NonNullable<FileReport["applied"]>;

/** `status` through the engine, as the command line runs it. */
const STATUS: RunnerOptions = {
  command: "status",
  dryRun: false,
  lockTimeoutMs: 1000,
  progress: silentProgress,
};

/** What a target's records say, in path order. */
async function fileRecords(
  target: MigrationTarget<PlannedFile>,
): Promise<[string, FileRecord][]> {
  return [...await target.readRecords()].sort(([a], [b]) => a < b ? -1 : 1);
}

/** A target's records as path and checksum, in the order it read them. */
async function hashes(target: MigrationTarget<PlannedFile>): Promise<[string, string][]> {
  return [...await target.readRecords()].map(([path, record]) => [path, record.hash]);
}

/** What a record written now, at `at`, by `by`, holds beside its checksum. */
function written(at: Date, by: string): Omit<FileRecord, "hash"> {
  return { executedAt: at.toISOString(), executedBy: by, runnerVersion: VERSION };
}

/** What status shows of it. */
function shown(at: Date, by: string): RecordedRun {
  return { at: at.toISOString(), by, runnerVersion: VERSION };
}

const subjects: [string, () => Promise<Subject>][] = [
  ["memory", () => Promise.resolve(memorySubject())],
  ...KINDS.map((kind): [string, () => Promise<Subject>] => [kind, () => sqlSubject(kind)]),
  ["search", searchSubject],
];

for (const [name, make] of subjects) {
  describe(`MigrationTarget conformance: ${name}`, () => {
    it("reads no records before the first, creates its store as it locks, twice over, and releases", async () => {
      const subject = await make();
      const target = await subject.open();
      try {
        assert.equal((await target.readRecords()).size, 0);
        await target.lock(1000, () => assert.fail("nobody else holds it"));
        await target.release();
        const before = tally.of(target.name);
        await target.lock(1000, () => assert.fail("nobody else holds it"));
        await target.release();
        assert.ok(tally.of(target.name) >= before, "requests only count up");
        assert.deepEqual(await target.unlock(false).then((o) => o.unlocked), "nothing");
      } finally {
        await target.close();
      }
    });

    it("applies a file and records its checksum; records one without running it; drops a record", async () => {
      const subject = await make();
      const { first, second } = subject.files;
      const target = await subject.open();
      try {
        await target.lock(1000, () => {});
        const applied = await target.apply(first, new Date());
        assert.ok(!applied.alreadyRecorded);
        assert.ok(applied.ms >= 0);
        await target.record(second, new Date());
        // Seen once the lock is released: SQLite's run commits then.
        await target.release();
        assert.ok(await subject.files.ran(first), "the first file ran");
        assert.equal(await subject.files.ran(second), false, "recording runs nothing");
        assert.deepEqual(
          (await hashes(target)).sort(),
          [[first.path, first.hash], [second.path, second.hash]],
        );
        await target.lock(1000, () => {});
        await target.dropRecord(second.path);
        await target.dropRecord("999-never-recorded");
        await target.release();
        assert.deepEqual(await hashes(target), [[first.path, first.hash]]);
      } finally {
        await target.close();
      }
    });

    it("runs a file meant to run again over a record of another checksum, and replaces that record", async () => {
      // What a repeatable file, or a declarative one, that changed is: applied again.
      const subject = await make();
      const first = { ...subject.files.first, runOnce: false };
      const target = await subject.open();
      try {
        await target.lock(1000, () => {});
        await target.record({ ...first, hash: "0".repeat(64) }, new Date());
        const applied = await target.apply(first, new Date());
        assert.ok(!applied.alreadyRecorded, "another checksum's record is no reason to skip it");
        await target.release();
        assert.ok(await subject.files.ran(first), "the file ran");
        assert.deepEqual(await hashes(target), [[first.path, first.hash]]);
      } finally {
        await target.close();
      }
    });

    it("fails a file with a MigrationFailure naming connection and file, and records nothing", async () => {
      const subject = await make();
      const { failing } = subject.files;
      const target = await subject.open();
      try {
        await target.lock(1000, () => {});
        const error = await target.apply(failing, new Date()).then(
          () => assert.fail("the failing file applied"),
          (e: unknown) => e,
        );
        await target.release();
        assert.ok(error instanceof MigrationFailure, String(error));
        assert.equal(error.kind, "failure");
        assert.equal(error.detail.connection, target.name);
        assert.equal(error.detail.file, failing.path);
        assert.equal((await target.readRecords()).has(failing.path), false);
      } finally {
        await target.close();
      }
    });

    it("keeps a second runner out while the first holds the lock, then lets it in", async () => {
      const subject = await make();
      const first = await subject.open();
      const second = await subject.open();
      try {
        await first.lock(1000, () => {});
        if (subject.runLock) {
          await assert.rejects(second.lock(0, () => {}), (e) => isMigrationError(e, "lock"));
        } else {
          // The in-memory target: taking the lock holds nothing.
          await second.lock(0, () => {});
          await second.release();
        }
        await first.release();
        await second.lock(1000, () => {});
        await second.release();
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });

    it("sees a file another runner recorded first, before running it again", async () => {
      const subject = await make();
      const { first: file } = subject.files;
      const mine = await subject.open();
      const theirs = await subject.open();
      try {
        await theirs.lock(1000, () => {});
        await theirs.apply(file, new Date());
        await theirs.release();
        await mine.lock(1000, () => {});
        if (subject.fileLock) {
          // This text, or another checkout's text of this file that runs once: theirs ran it.
          for (const hash of [file.hash, "f".repeat(64)]) {
            const again = await mine.apply({ ...file, hash }, new Date());
            assert.equal(again.alreadyRecorded, true, hash);
          }
        } else {
          // What the engine reads once it holds the lock, and so does not apply the file again.
          assert.equal((await mine.readRecords()).get(file.path)?.hash, file.hash);
        }
        await mine.release();
        assert.deepEqual(await hashes(mine), [[file.path, file.hash]]);
      } finally {
        await Promise.all([mine.close(), theirs.close()]);
      }
    });
    it("shows in status when, by whom and with which runner version each file was recorded", async () => {
      const subject = await make();
      const { first, second, failing } = subject.files;
      const appliedAt = new Date("2026-11-25T06:16:07.123Z");
      const recordedAt = new Date("2026-11-26T07:08:09.456Z");
      const target = await subject.open();
      try {
        await target.lock(1000, () => {});
        await target.apply(first, appliedAt);
        await target.record(second, recordedAt);
        await target.release();
        assert.deepEqual(await fileRecords(target), [
          [first.path, { hash: first.hash, ...written(appliedAt, subject.by) }],
          [second.path, { hash: second.hash, ...written(recordedAt, subject.by) }],
        ]);
      } finally {
        await target.close();
      }
      const report = await runTargets(
        [{ target: await subject.open(), files: [first, second, failing] }],
        STATUS,
      );
      assert.equal(report.error, undefined);
      assert.deepEqual(report.connections[0].files.map((f) => [f.path, f.action, f.applied]), [
        [first.path, "skip", shown(appliedAt, subject.by)],
        [second.path, "skip", shown(recordedAt, subject.by)],
        [failing.path, "apply", undefined],
      ]);
    });

    it("reads a record an earlier version wrote, shows only what it holds, and keeps it so", async () => {
      const subject = await make();
      const { first, second } = subject.files;
      const earlier = new Date("2024-01-02T03:04:05.678Z");
      await subject.writeEarlierRecord(first, earlier);
      const listed = async () =>
        (await runTargets([{ target: await subject.open(), files: [first, second] }], STATUS))
          .connections[0].files.map((f) => [f.path, f.action, f.applied]);
      assert.deepEqual(await listed(), [
        [first.path, "skip", subject.earlierShows(earlier)],
        [second.path, "apply", undefined],
      ]);
      // A run that writes brings the store up to date first, then records the new file in full.
      const migrated = await runTargets(
        [{ target: await subject.open(), files: [first, second] }],
        { ...STATUS, command: "migrate" },
      );
      assert.equal(migrated.error, undefined);
      assert.equal(migrated.connections[0].applied, 1);
      const appliedAt = new Date();
      const target = await subject.open();
      try {
        // Bringing it up to date again changes nothing.
        await target.lock(1000, () => {});
        await target.release();
        const records = new Map(await fileRecords(target));
        assert.equal(records.get(first.path)?.hash, first.hash);
        assert.equal(records.get(second.path)?.hash, second.hash);
        assert.equal(records.get(second.path)?.executedBy, subject.by);
        assert.equal(records.get(second.path)?.runnerVersion, VERSION);
        const at = Date.parse(records.get(second.path)?.executedAt ?? "");
        assert.ok(Math.abs(at - appliedAt.getTime()) < 60_000, `applied just now: ${at}`);
      } finally {
        await target.close();
      }
      const [old, now] = await listed();
      assert.deepEqual(old, [first.path, "skip", subject.earlierShows(earlier)]);
      assert.deepEqual(now.slice(0, 2), [second.path, "skip"]);
      const shownNow = now[2] as RecordedRun | undefined;
      assert.equal(shownNow?.by, subject.by);
      assert.equal(shownNow?.runnerVersion, VERSION);
      assert.match(shownNow?.at ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });
  });
}
