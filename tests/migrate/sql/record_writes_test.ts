import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { Datasource } from "../../../src/sql/datasource.ts";
import { MysqlDatabase } from "../../../src/migrate/sql/mysql_database.ts";
import { PostgresDatabase } from "../../../src/migrate/sql/postgres_database.ts";
import type { SqlDatabase, SqlRecord } from "../../../src/migrate/sql/sql_database.ts";
import { SqliteDatabase } from "../../../src/migrate/sql/sqlite_database.ts";
import { SqlTarget } from "../../../src/migrate/sql/sql_target.ts";
import { MigrationFailure } from "../../../src/migrate/migration_error.ts";
import { VERSION } from "../../../src/version.ts";
import { createDatabase, DB_PASSWORD, DB_USER, type Kind, KINDS } from "./databases.ts";
import { SQLITE } from "../../sqlite.ts";
import { tempDir } from "../../temp_dir.ts";

// Mixed case: every statement must quote the table as `lock` created it.
const TABLE = "Record_Writes";
const QUOTED: Record<Kind, string> = {
  sqlite: `"${TABLE}"`,
  postgres: `"${TABLE}"`,
  mysql: `\`${TABLE}\``,
};
// executed_at as UTC text whatever the column type and the session's time zone.
const EXECUTED_AT: Record<Kind, string> = {
  sqlite: "executed_at",
  postgres: `to_char(executed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS')`,
  mysql: "DATE_FORMAT(executed_at, '%Y-%m-%dT%H:%i:%s.%f')",
};
const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

/** One stored record, as the table holds it. */
interface Row {
  readonly path: string;
  readonly hash: string;
  readonly by: string;
  readonly ms: number;
  /** Epoch milliseconds. */
  readonly at: number;
  readonly version: string;
}

for (const kind of KINDS) {
  describe(`putRecord and deleteRecord on ${kind}`, () => {
    const closers: (() => Promise<void>)[] = [];
    after(async () => {
      for (const close of closers.splice(0)) await close();
    });

    /** A fresh database with the records table made (by `lock`, as a run makes it). */
    async function open(): Promise<
      { db: SqlDatabase; datasource: Datasource; rows: () => Promise<Row[]> }
    > {
      const folder = await tempDir("thaw-records-");
      const dir = folder.path;
      const id = `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
      const raw = await createDatabase(kind, dir, id);
      const datasource: Datasource = {
        name: "main",
        kind,
        location: kind === "sqlite" ? raw.url.slice("sqlite:".length) : raw.url,
        ...(kind === "sqlite" ? {} : { username: DB_USER, password: DB_PASSWORD }),
        migrationsEnabled: true,
        strictOrder: false,
        validateOnMigrate: false,
        placeholders: new Map(),
        table: TABLE,
      };
      const db = kind === "sqlite"
        ? new SqliteDatabase(datasource, 5_000, "--lock-timeout")
        : kind === "postgres"
        ? new PostgresDatabase(datasource, { host: "test", pid: 1 }, "--lock-timeout")
        : new MysqlDatabase(datasource, "--lock-timeout");
      closers.push(async () => {
        await db.close();
        await raw.close();
        await folder[Symbol.asyncDispose]();
      });
      await db.lock(TABLE, { timeoutMs: 5_000, onWait: () => {} });
      // SQLite's lock is a transaction held to unlock: ended here, so that each write below
      // commits on its own and the test's connection sees it, as outside a run.
      if (kind === "sqlite") await db.unlock();
      const rows = async () =>
        (await raw.query(
          `SELECT migration_path, content_hash, executed_by, execution_ms, runner_version, ${
            EXECUTED_AT[kind]
          } AS at FROM ${QUOTED[kind]} ORDER BY id`,
        )).map((r): Row => ({
          path: String(r.migration_path),
          hash: String(r.content_hash),
          by: String(r.executed_by),
          ms: Number(r.execution_ms),
          at: new Date(String(r.at).replace(/Z?$/, "Z")).getTime(),
          version: String(r.runner_version),
        }));
      return { db, datasource, rows };
    }

    /** The records' checksums, by path. */
    const hashes = async (db: SqlDatabase) =>
      new Map([...await db.readRecords(TABLE)].map(([path, r]) => [path, r.hash]));

    const record = (path: string, hash: string, at: string, by = "tester@test"): SqlRecord => ({
      path,
      hash,
      executedAt: new Date(at),
      executedBy: by,
    });

    it("putRecord inserts the record with execution_ms 0, counting its queries", async () => {
      const { db, rows } = await open();
      const before = db.queries;
      await db.putRecord(TABLE, record("001-users.sql", HASH_A, "2024-05-06T07:08:09.123Z"));
      assert.ok(db.queries > before, "counted");
      assert.deepEqual(await rows(), [{
        path: "001-users.sql",
        hash: HASH_A,
        by: "tester@test",
        ms: 0,
        at: Date.parse("2024-05-06T07:08:09.123Z"),
        version: VERSION,
      }]);
      assert.deepEqual(
        await db.readRecords(TABLE),
        new Map([["001-users.sql", {
          hash: HASH_A,
          executedAt: "2024-05-06T07:08:09.123Z",
          executedBy: "tester@test",
          runnerVersion: VERSION,
        }]]),
      );
      await db.unlock();
    });

    it("putRecord over a recorded path replaces hash, executed_at and executed_by: one row", async () => {
      const { db, rows } = await open();
      // Recorded by a run, 1 s long: what putRecord leaves of it is the measured time.
      const ran = await db.runFile(TABLE, [{ script: "SELECT 1;" }], {
        path: "001-users.sql",
        hash: HASH_A,
        executedAt: new Date(Date.now() - 1_000),
        executedBy: "first@host",
      }, true);
      assert.ok(ran !== undefined && ran >= 1_000, String(ran));
      await db.putRecord(TABLE, record("002-orders.sql", HASH_A, "2024-01-01T00:00:00.000Z"));
      await db.putRecord(
        TABLE,
        record("001-users.sql", HASH_B, "2025-02-03T04:05:06.789Z", "second@host"),
      );
      assert.deepEqual(await rows(), [
        {
          path: "001-users.sql",
          hash: HASH_B,
          by: "second@host",
          ms: ran,
          at: Date.parse("2025-02-03T04:05:06.789Z"),
          version: VERSION,
        },
        {
          path: "002-orders.sql",
          hash: HASH_A,
          by: "tester@test",
          ms: 0,
          at: Date.parse("2024-01-01T00:00:00.000Z"),
          version: VERSION,
        },
      ]);
      assert.deepEqual(
        await hashes(db),
        new Map([["001-users.sql", HASH_B], ["002-orders.sql", HASH_A]]),
      );
      // Again, the same: still one row per path.
      await db.putRecord(TABLE, record("001-users.sql", HASH_A, "2025-02-03T04:05:06.789Z"));
      assert.deepEqual((await rows()).map((r) => [r.path, r.hash]), [
        ["001-users.sql", HASH_A],
        ["002-orders.sql", HASH_A],
      ]);
      await db.unlock();
    });

    it("deleteRecord says whether there was a record, and removes it", async () => {
      const { db, rows } = await open();
      await db.putRecord(TABLE, record("001-users.sql", HASH_A, "2024-01-01T00:00:00.000Z"));
      await db.putRecord(TABLE, record("002-orders.sql", HASH_B, "2024-01-01T00:00:00.000Z"));
      const before = db.queries;
      assert.equal(await db.deleteRecord(TABLE, "001-users.sql"), true);
      assert.ok(db.queries > before, "counted");
      assert.deepEqual(await hashes(db), new Map([["002-orders.sql", HASH_B]]));
      assert.equal(await db.deleteRecord(TABLE, "001-users.sql"), false);
      assert.equal(await db.deleteRecord(TABLE, "never-recorded.sql"), false);
      assert.deepEqual((await rows()).map((r) => r.path), ["002-orders.sql"]);
      // Deleted, then put again: a fresh record.
      await db.putRecord(TABLE, record("001-users.sql", HASH_A, "2024-01-01T00:00:00.000Z"));
      assert.deepEqual(
        await hashes(db),
        new Map([["002-orders.sql", HASH_B], ["001-users.sql", HASH_A]]),
      );
      await db.unlock();
    });

    it("touches only the path's own row: quotes, unicode, LIKE wildcards, backslashes", async () => {
      const { db, rows } = await open();
      // Each odd path beside the paths a LIKE pattern, a dropped quote or a lost escape would hit.
      const odd = [
        'it\'s "quoted"; --.sql',
        "100%_done.sql",
        "données/日本語 😀.sql",
        "back\\slash.sql",
      ];
      const neighbours = [
        'its "quoted"; --.sql',
        "100%Xdone.sql",
        "100abc_done.sql",
        "1000_done.sql",
        "donnees/日本語 😀.sql",
        "back\\\\slash.sql",
        "backslash.sql",
      ];
      for (const path of [...odd, ...neighbours]) {
        await db.putRecord(TABLE, record(path, HASH_A, "2024-01-01T00:00:00.000Z"));
      }
      const all = new Map([...odd, ...neighbours].map((p) => [p, HASH_A]));
      assert.deepEqual(await hashes(db), all);
      for (const path of odd) {
        await db.putRecord(TABLE, record(path, HASH_B, "2024-01-02T00:00:00.000Z"));
        all.set(path, HASH_B);
        assert.deepEqual(await hashes(db), all, `put ${path}`);
      }
      assert.equal((await rows()).length, odd.length + neighbours.length);
      for (const path of odd) {
        assert.equal(await db.deleteRecord(TABLE, path), true, path);
        all.delete(path);
        assert.deepEqual(await hashes(db), all, `deleted ${path}`);
        assert.equal(await db.deleteRecord(TABLE, path), false, path);
      }
      assert.deepEqual(
        (await rows()).map((r) => [r.path, r.hash]),
        neighbours.map((p) => [p, HASH_A]),
      );
      await db.unlock();
    });

    it("SqlTarget.record writes the file's record without running it; dropRecord drops it", async () => {
      const { db, datasource, rows } = await open();
      const target = new SqlTarget(datasource, db, "tester@test");
      // Would fail if it ran.
      const file = {
        path: "001-users.sql",
        hash: HASH_A,
        runOnce: true,
        text: "NOT SQL AT ALL;",
      };
      await target.record(file, new Date("2024-05-06T07:08:09.123Z"));
      assert.deepEqual(await rows(), [{
        path: "001-users.sql",
        hash: HASH_A,
        by: "tester@test",
        ms: 0,
        at: Date.parse("2024-05-06T07:08:09.123Z"),
        version: VERSION,
      }]);
      await target.record({ ...file, hash: HASH_B }, new Date("2024-05-07T00:00:00.000Z"));
      const records = await target.readRecords();
      assert.deepEqual([...records].map(([path, r]) => [path, r.hash]), [[
        "001-users.sql",
        HASH_B,
      ]]);
      await target.dropRecord("001-users.sql");
      await target.dropRecord("never-recorded.sql");
      assert.deepEqual(await target.readRecords(), new Map());
      await target.release();
    });

    // SQLite has no run-wide lock: two runners decide on what each read, and only the file's own
    // write lock orders them. (PostgreSQL and MariaDB decide again under the run's lock.)
    if (kind === "sqlite") {
      it("SqlTarget decides again under the file's write lock: another runner's record wins over a run-once file", async () => {
        const { db, datasource, rows } = await open();
        const second = new SqliteDatabase(datasource, 5_000, "--lock-timeout");
        closers.push(() => second.close());
        const a = new SqlTarget(datasource, db, "a@host");
        const b = new SqlTarget(datasource, second, "b@host");
        // Both planned V3 (no record); their checkouts hold other texts. B is first.
        const v3 = (hash: string, table: string) => ({
          path: "V3__x.sql",
          hash,
          runOnce: true,
          text: `CREATE TABLE ${table} (id INT);`,
        });
        assert.equal((await b.apply(v3(HASH_A, "by_b"), new Date())).alreadyRecorded, undefined);
        const late = await a.apply(v3(HASH_B, "by_a"), new Date());
        assert.equal(late.alreadyRecorded, true, "A's V3 did not run");
        // A repeatable file runs over another runner's record of other text, as PostgreSQL and
        // MariaDB would decide under their lock; over one of its own text it does not run again.
        const view = (hash: string, name: string) => ({
          path: "R__v.sql",
          hash,
          runOnce: true,
          text: `CREATE VIEW ${name} AS SELECT 1 AS one;`,
        });
        await b.apply(view(HASH_A, "v_by_b"), new Date());
        assert.equal(
          (await a.apply(view(HASH_B, "v_by_a"), new Date())).alreadyRecorded,
          undefined,
        );
        assert.equal((await b.apply(view(HASH_B, "v_again"), new Date())).alreadyRecorded, true);
        assert.deepEqual((await rows()).map((r) => [r.path, r.hash, r.by]), [
          ["V3__x.sql", HASH_A, "b@host"],
          ["R__v.sql", HASH_B, "a@host"],
        ]);
        // What ran: B's V3 and both views, never A's V3 nor B's repeat.
        const sqlite = new SQLITE!.DatabaseSync(datasource.location);
        const made = sqlite.prepare(
          "SELECT name FROM sqlite_master WHERE name IN ('by_a', 'by_b', 'v_by_a', 'v_by_b', 'v_again') ORDER BY name",
        ).all().map((r) => r.name);
        sqlite.close();
        assert.deepEqual(made, ["by_b", "v_by_a", "v_by_b"]);
      });
    }

    // Two runners in one process (an app calling migrate() twice): SQLite's own busy wait would
    // hold the thread, and with it the code step that holds the lock, until the wait times out.
    if (kind === "sqlite") {
      it("a wait for the write lock lets the code step holding it go on, in one process", async () => {
        const { db, datasource, rows } = await open();
        const second = new SqliteDatabase(datasource, 5_000, "--lock-timeout");
        closers.push(() => second.close());
        await second.readRecords(TABLE);
        let entered!: () => void;
        const inside = new Promise<void>((resolve) => (entered = resolve));
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const first = db.runFile(
          TABLE,
          [{
            code: async (session) => {
              await session.query("CREATE TABLE by_first (v INT)");
              entered();
              await held;
            },
          }],
          record("V1__a.ts", HASH_A, "2024-05-06T07:08:09.123Z"),
          true,
        );
        await inside;
        const next = second.runFile(
          TABLE,
          [{ script: "CREATE TABLE by_second (v INT);" }],
          record("V2__b.sql", HASH_B, "2024-05-06T07:08:10.123Z"),
          true,
        );
        // A macrotask: every microtask of `next` runs first, so it has met the lock by now.
        await new Promise((resolve) => setTimeout(resolve, 0));
        release();
        assert.equal(typeof await first, "number");
        assert.equal(typeof await next, "number");
        assert.deepEqual((await rows()).map((r) => r.path), ["V1__a.ts", "V2__b.sql"]);
      });
    }

    it("SqlTarget names the datasource and the path when the database refuses the record", async () => {
      const { db, datasource } = await open();
      // A table the run did not create: every statement on it fails.
      const target = new SqlTarget({ ...datasource, table: "No_Such_Table" }, db, "tester@test");
      const file = { path: "it's 001.sql", hash: HASH_A, runOnce: true, text: "" };
      for (
        const write of [() => target.record(file, new Date()), () => target.dropRecord(file.path)]
      ) {
        await assert.rejects(write(), (error: unknown) => {
          assert.ok(error instanceof MigrationFailure, String(error));
          assert.equal(error.detail.connection, "main");
          assert.equal(error.detail.file, "it's 001.sql");
          assert.match(error.message, /No_Such_Table/);
          return true;
        });
      }
      await target.release();
    });
  });
}
