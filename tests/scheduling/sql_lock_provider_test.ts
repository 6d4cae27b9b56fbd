// SqlLockProvider against the real databases: SQLite (the runtime's own), PostgreSQL and MariaDB
// (tools/databases.sh start; a server that is not running fails the suite). Each replica is a
// provider over connections of its own, as in a process of its own. Every time the tests reason
// about is the database's: read from it around each call, never from the test's clock, and never
// waited for with a sleep that orders events.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import mysql from "mysql2/promise";
import pg from "pg";
import { SqlLockProvider, type SqlLockQuery } from "../../src/scheduling/sql_lock_provider.ts";
import type { LockConfiguration, SimpleLock } from "../../src/scheduling/lock_provider.ts";
import {
  createDatabase,
  DB_PASSWORD,
  DB_USER,
  type Kind,
  KINDS,
} from "../migrate/sql/databases.ts";
import { propertyOptions } from "../property.ts";
import { SQLITE } from "../sqlite.ts";
import { tempDir } from "../temp_dir.ts";

type Row = Record<string, unknown>;

/** One lock's row, its times in milliseconds of the database's clock. */
interface LockRow {
  readonly name: string;
  readonly lockUntil: number;
  readonly lockedAt: number;
  readonly lockedBy: string;
}

interface ReplicaOptions {
  readonly lockedBy?: string;
  readonly table?: string;
  /** MariaDB: the session's sql_mode gets NO_BACKSLASH_ESCAPES. */
  readonly noBackslashEscapes?: boolean;
}

/** A fresh database with the `shedlock` table, and the test's own view of it. */
interface Backend {
  readonly kind: Kind;
  /** A provider over a connection of its own: another replica of the app. */
  replica(options?: ReplicaOptions): SqlLockProvider;
  /** Rows of `sql`, written with `?` placeholders, on the test's own connection. */
  query(sql: string, params?: readonly (string | number)[]): Promise<Row[]>;
  /** The database's clock, in milliseconds, as the table stores times (to the millisecond). */
  now(): Promise<number>;
  close(): Promise<void>;
}

// Times come back as a Date (PostgreSQL) or as UTC text 'YYYY-MM-DD HH:MM:SS.SSS' (SQLite, and
// MariaDB read with dateStrings: mysql2 would read a DATETIME in the test process's zone).
function ms(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === "string") return Date.parse(`${value.replace(" ", "T")}Z`);
  throw new TypeError(`not a time: ${String(value)}`);
}

const NOW = {
  sqlite: "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now') AS now",
  postgres: "SELECT clock_timestamp()::timestamptz(3) AS now",
  mysql: "SELECT UTC_TIMESTAMP(3) AS now",
} as const;

async function openBackend(kind: Kind): Promise<Backend> {
  const closers: (() => unknown)[] = [];
  const close = async () => {
    for (const close of closers.reverse()) await close();
  };
  try {
    return await open(kind, closers, close);
  } catch (error) {
    // What was opened must not keep the test process alive.
    await close();
    throw error;
  }
}

async function open(
  kind: Kind,
  closers: (() => unknown)[],
  close: () => Promise<void>,
): Promise<Backend> {
  // Removed last: the closers run in reverse, after every connection to a file in it.
  const folder = await tempDir("thaw-shedlock-");
  closers.push(() => folder[Symbol.asyncDispose]());
  const dir = folder.path;
  let query: (sql: string, params: readonly (string | number)[]) => Promise<Row[]>;
  let replica: (options: ReplicaOptions) => SqlLockProvider;
  if (kind === "sqlite") {
    const sqlite = SQLITE!;
    const file = join(dir, "locks.db");
    const open = () => {
      const db = new sqlite.DatabaseSync(file);
      closers.push(() => db.close());
      return db;
    };
    const own = open();
    // deno-lint-ignore require-await
    query = async (sql, params) => own.prepare(sql).all(...params) as Row[];
    replica = ({ noBackslashEscapes: _, ...options }) => SqlLockProvider.sqlite(open(), options);
  } else {
    const id = `s${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const db = await createDatabase(kind, dir, id);
    closers.push(() => db.close());
    const url = new URL(db.url);
    url.username = DB_USER;
    url.password = DB_PASSWORD;
    if (kind === "postgres") {
      const pool = (options: pg.PoolConfig = {}) => {
        const p = new pg.Pool({ connectionString: url.href, max: 4, ...options });
        closers.push(() => p.end());
        return p;
      };
      const own = pool();
      query = async (sql, params) => {
        let n = 0;
        return (await own.query(sql.replace(/\?/g, () => `$${++n}`), [...params])).rows;
      };
      // Every other replica's sessions are in another time zone: the times are the same.
      let replicas = 0;
      replica = ({ noBackslashEscapes: _, ...options }) =>
        SqlLockProvider.postgres(
          pool(++replicas % 2 === 0 ? { options: "-c TimeZone=Asia/Tokyo" } : {}),
          options,
        );
    } else {
      const pool = (sessionSql: string[] = []) => {
        const p = mysql.createPool({ uri: url.href, connectionLimit: 4, dateStrings: true });
        // Run on each new connection before anything else it is given.
        p.pool.on("connection", (connection) => {
          for (const sql of sessionSql) connection.query(sql);
        });
        closers.push(() => p.end());
        return p;
      };
      const own = pool();
      query = async (sql, params) => (await own.query(sql, [...params]))[0] as Row[];
      let replicas = 0;
      replica = ({ noBackslashEscapes, ...options }) =>
        SqlLockProvider.mysql(
          pool([
            ...(++replicas % 2 === 0 ? ["SET time_zone = '+09:00'"] : []),
            ...(noBackslashEscapes
              ? ["SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"]
              : []),
          ]),
          options,
        );
    }
  }
  // As a migration would create it: the provider never does.
  await query(SqlLockProvider.createTable(kind), []);
  return {
    kind,
    replica: (options = {}) => replica(options),
    query: (sql, params = []) => query(sql, params),
    now: async () => ms((await query(NOW[kind], []))[0].now),
    close,
  };
}

/** The row of the lock `name`, or `undefined`. */
async function rowOf(
  backend: Backend,
  name: string,
  table = "shedlock",
): Promise<LockRow | undefined> {
  const [row] = await backend.query(
    `SELECT name, lock_until, locked_at, locked_by FROM ${table} WHERE name = ?`,
    [name],
  );
  return row === undefined ? undefined : {
    name: String(row.name),
    lockUntil: ms(row.lock_until),
    lockedAt: ms(row.locked_at),
    lockedBy: String(row.locked_by),
  };
}

/** One call of `lock`, between two readings of the database's clock. */
async function attempt(backend: Backend, provider: SqlLockProvider, config: LockConfiguration) {
  const before = await backend.now();
  const lock = await provider.lock(config);
  const after = await backend.now();
  return { lock, before, after };
}

/** Polls the database's clock (a state, not a sleep) until it reads `time` or later. */
async function untilDbTime(backend: Backend, time: number): Promise<number> {
  for (;;) {
    const now = await backend.now();
    if (now >= time) return now;
    await new Promise((resolve) => setTimeout(resolve, Math.min(time - now, 20)));
  }
}

const ERROR_OF_MISSING_TABLE = {
  sqlite: /no such table: missing_locks/,
  postgres: /relation "missing_locks" does not exist/,
  mysql: /Table '\w+\.missing_locks' doesn't exist/,
} as const;

/**
 * How long the window of a {@linkcode proved} scenario lasts on the database's clock: long enough
 * for its few round trips to fall inside it on a loaded machine, so that a retry stays rare.
 */
const WINDOW_MS = 2000;

/**
 * A scenario that proves something only when the test's calls ran inside a window of the
 * database's clock (a lock refused before it ends): run again, under another lock name, when a
 * loaded machine made a call too late to prove it. Never a pass without the proof.
 */
async function proved(scenario: (name: string) => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 20; i++) {
    if (await scenario(`window-${crypto.randomUUID().slice(0, 8)}`)) return;
  }
  assert.fail("the machine never made the call inside the window in 20 tries");
}

for (const kind of KINDS) {
  describe(`SqlLockProvider on ${kind}`, () => {
    let opened: Promise<Backend> | undefined;
    const backend = () => opened ??= openBackend(kind);
    after(async () => await (await opened)?.close());

    it("takes a free lock, refuses it while it is held, and takes it again after unlock", async () => {
      const db = await backend();
      const replica = db.replica({ lockedBy: "host-a" });
      const config = { name: "own", lockAtMostFor: 60_000, lockAtLeastFor: 0 };
      const lock = await replica.lock(config);
      assert.notEqual(lock, undefined);
      const row = await rowOf(db, "own");
      assert.match(row!.lockedBy, /^host-a \S+$/);
      assert.equal(row!.lockUntil - row!.lockedAt, 60_000);
      assert.equal(await replica.lock(config), undefined, "the same provider holds it");
      await lock!.unlock();
      await lock!.unlock(); // a second unlock does nothing
      const again = await replica.lock(config);
      assert.notEqual(again, undefined);
      await again!.unlock();
    });

    it("refuses a lock another replica holds; after its unlock (lockAtLeastFor 0), takes it", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const config = { name: "shared", lockAtMostFor: 60_000, lockAtLeastFor: 0 };
      const lock = await a.lock(config);
      assert.notEqual(lock, undefined);
      assert.equal(await b.lock(config), undefined);
      const held = await rowOf(db, "shared");
      const beforeUnlock = await db.now();
      await lock!.unlock();
      const unlocked = await rowOf(db, "shared");
      // Released at the database's now: lock_until moved back from lockAtMostFor to the unlock.
      assert.equal(unlocked!.lockedBy, held!.lockedBy);
      assert.ok(unlocked!.lockUntil >= beforeUnlock && unlocked!.lockUntil < held!.lockUntil);
      const taken = await b.lock(config);
      assert.notEqual(taken, undefined);
      const now = await rowOf(db, "shared");
      assert.match(now!.lockedBy, /^host-b /);
      assert.ok(now!.lockedAt >= unlocked!.lockUntil);
      await taken!.unlock();
    });

    it("two replicas with the same lockedBy still exclude each other", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "same-host" });
      const b = db.replica({ lockedBy: "same-host" });
      const config = { name: "same-host", lockAtMostFor: 60_000, lockAtLeastFor: 0 };
      const lock = await a.lock(config);
      assert.notEqual(lock, undefined);
      assert.equal(await b.lock(config), undefined);
      // b taking and releasing a lock of another name changes nothing of a's.
      const other = await b.lock({ ...config, name: "same-host-other" });
      await other!.unlock();
      assert.equal(await b.lock(config), undefined);
      await lock!.unlock();
      assert.notEqual(await b.lock(config), undefined);
    });

    it("lockAtLeastFor keeps the lock after unlock until locked_at + lockAtLeastFor", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      await proved(async (name) => {
        const config = { name, lockAtMostFor: 60_000, lockAtLeastFor: WINDOW_MS };
        const lock = await a.lock(config);
        assert.notEqual(lock, undefined);
        await lock!.unlock();
        const unlockedBy = await db.now();
        const row = await rowOf(db, name);
        if (unlockedBy < row!.lockedAt + WINDOW_MS) {
          // Unlocked before lockAtLeastFor ended: held until then, to the millisecond.
          assert.equal(row!.lockUntil, row!.lockedAt + WINDOW_MS);
        }
        let refusedInside = false;
        for (;;) {
          const { lock: taken, before, after } = await attempt(db, b, config);
          if (after < row!.lockUntil) assert.equal(taken, undefined, "taken before it ended");
          if (before >= row!.lockUntil) assert.notEqual(taken, undefined, "refused once it ended");
          if (taken === undefined) {
            refusedInside ||= after < row!.lockUntil;
            await untilDbTime(db, Math.min(after + 20, row!.lockUntil));
            continue;
          }
          const now = await rowOf(db, name);
          assert.match(now!.lockedBy, /^host-b /);
          assert.ok(now!.lockedAt >= row!.lockUntil, "taken before locked_at + lockAtLeastFor");
          await taken.unlock();
          return refusedInside;
        }
      });
    });

    it("takes over a lock whose holder never released it once lockAtMostFor has passed", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const c = db.replica({ lockedBy: "host-c" });
      await proved(async (name) => {
        const dying = await a.lock({ name, lockAtMostFor: WINDOW_MS, lockAtLeastFor: 0 });
        assert.notEqual(dying, undefined);
        const expired = (await rowOf(db, name))!;
        assert.equal(expired.lockUntil - expired.lockedAt, WINDOW_MS);
        const config = { name, lockAtMostFor: 60_000, lockAtLeastFor: 0 };
        let refusedInside = false;
        let taken: SimpleLock | undefined;
        while (taken === undefined) {
          const tried = await attempt(db, b, config);
          taken = tried.lock;
          if (tried.after < expired.lockUntil) assert.equal(taken, undefined, "taken too early");
          if (tried.before >= expired.lockUntil) assert.notEqual(taken, undefined, "not taken");
          if (taken === undefined) {
            refusedInside ||= tried.after < expired.lockUntil;
            await untilDbTime(db, Math.min(tried.after + 20, expired.lockUntil));
          }
        }
        const takenOver = (await rowOf(db, name))!;
        assert.match(takenOver.lockedBy, /^host-b /);
        assert.ok(takenOver.lockedAt >= expired.lockUntil);
        assert.equal(takenOver.lockUntil - takenOver.lockedAt, 60_000);

        // The first holder wakes up and unlocks: the new holder's lock stays as it was.
        await dying!.unlock();
        assert.deepEqual(await rowOf(db, name), takenOver);
        assert.equal(await c.lock(config), undefined);
        await taken.unlock();
        assert.notEqual(await c.lock(config), undefined);
        return refusedInside;
      });
    });

    it("a lock lasts exactly lockAtMostFor from when it was taken, by the database's clock", async () => {
      // Both times of a row come from one reading of the clock: locked_at + lockAtMostFor is
      // lock_until to the millisecond. Two readings would differ by a few microseconds, and
      // now and then straddle a millisecond: PostgreSQL takes locks fast enough to try many.
      const db = await backend();
      const replicas = [db.replica(), db.replica(), db.replica(), db.replica()];
      const count = kind === "postgres" ? 10_000 : 1_000;
      const names = Array.from({ length: count }, (_, i) => `exact-${i}`);
      await Promise.all(replicas.map(async (replica, r) => {
        for (let i = r; i < names.length; i += replicas.length) {
          assert.notEqual(
            await replica.lock({ name: names[i], lockAtMostFor: 300, lockAtLeastFor: 0 }),
            undefined,
          );
        }
      }));
      const rows = await db.query(
        "SELECT name, lock_until, locked_at FROM shedlock WHERE name LIKE 'exact-%'",
      );
      assert.equal(rows.length, names.length);
      const off = rows.filter((row) => ms(row.lock_until) - ms(row.locked_at) !== 300);
      assert.deepEqual(off, []);
    });

    it("sends hostile names as parameters and stores them exactly, each its own lock", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const names = [
        // Every byte value but 0 (refused: PostgreSQL stores no NUL) as a character.
        ...Array.from({ length: 255 }, (_, i) => {
          const c = String.fromCharCode(i + 1);
          return `${c}byte ${i + 1} [${c}]`;
        }),
        "'",
        "''",
        '"',
        "`",
        "\\",
        "\\'",
        "\\\\",
        "'; DROP TABLE shedlock; --",
        "x'); DROP TABLE shedlock; --",
        "?",
        "$1",
        "%s",
        "Tick",
        "tick",
        "TICK",
        "\u00e9", // é, composed
        "e\u0301", // é, decomposed
        "\u{1F600}".repeat(64), // 64 characters, 128 UTF-16 units, 256 bytes of UTF-8
        "n".repeat(64),
      ];
      const config = (name: string) => ({ name, lockAtMostFor: 60_000, lockAtLeastFor: 0 });
      const locks: SimpleLock[] = [];
      for (const name of names) {
        const lock = await a.lock(config(name));
        assert.notEqual(lock, undefined, JSON.stringify(name));
        locks.push(lock!);
      }
      // Read back: every name exactly, each in a row of its own ("Tick" is not "tick").
      const stored = (await db.query("SELECT name FROM shedlock")).map((row) => String(row.name));
      for (const name of names) {
        assert.ok(stored.includes(name), `not stored: ${JSON.stringify(name)}`);
      }
      assert.equal(stored.filter((name) => names.includes(name)).length, names.length);
      for (const name of names) {
        assert.equal(await b.lock(config(name)), undefined, `not held: ${JSON.stringify(name)}`);
      }
      for (const lock of locks) await lock.unlock();
      for (const name of names) {
        const row = await rowOf(db, name);
        assert.equal(row?.name, name);
        assert.ok(await b.lock(config(name)), `not released: ${JSON.stringify(name)}`);
      }
    });

    if (kind === "mysql") {
      it("stores hostile names exactly under NO_BACKSLASH_ESCAPES: never quoted into the SQL", async () => {
        const db = await backend();
        const replica = db.replica({ lockedBy: "host-nbe", noBackslashEscapes: true });
        const names = [
          "nbe \\",
          "nbe \\\\",
          "nbe '",
          "nbe \\'",
          "nbe '; DROP TABLE shedlock; --",
          "nbe ', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), 0x41) -- x",
        ];
        for (const name of names) {
          const lock = await replica.lock({ name, lockAtMostFor: 60_000, lockAtLeastFor: 0 });
          assert.notEqual(lock, undefined, JSON.stringify(name));
          assert.equal((await rowOf(db, name))?.name, name);
          await lock!.unlock();
        }
      });
    }

    it("refuses, before the database sees it, a name the table cannot hold exactly", async () => {
      const db = await backend();
      const replica = db.replica();
      const count = async () => Number((await db.query("SELECT COUNT(*) AS n FROM shedlock"))[0].n);
      const rows = await count();
      const refused = async (name: unknown, message: RegExp) =>
        await assert.rejects(
          replica.lock({ name, lockAtMostFor: 1000, lockAtLeastFor: 0 } as LockConfiguration),
          (error: Error) => error instanceof TypeError && message.test(error.message),
        );
      await refused("n".repeat(65), /"n{65}" is 65 characters long; the name column holds 64/);
      await refused("\u{1F600}".repeat(65), /65 characters long; the name column holds 64/);
      await refused("a\u0000b", /"a\\u0000b" holds NUL/);
      await refused("", /the lock name "" is empty/);
      await refused(42, /lock name 42 is not text/);
      await refused("tick ", /"tick " ends with a space/);
      await refused("half \ud800 surrogate", /lone UTF-16 surrogate/);
      assert.equal(await count(), rows, "nothing was written");
    });

    it("never creates its table: lock() rejects with the database's own error", async () => {
      const db = await backend();
      const replica = db.replica({ table: "missing_locks" });
      await assert.rejects(
        replica.lock({ name: "digest", lockAtMostFor: 1000, lockAtLeastFor: 0 }),
        (error: Error) =>
          !(error instanceof TypeError) && ERROR_OF_MISSING_TABLE[kind].test(error.message),
      );
      // Still missing: the provider did not create it on the way.
      await assert.rejects(
        db.query("SELECT COUNT(*) AS n FROM missing_locks"),
        ERROR_OF_MISSING_TABLE[kind],
      );
    });

    it("uses the table it is given, created from createTable(dialect, table)", async () => {
      const db = await backend();
      await db.query(SqlLockProvider.createTable(kind, "job_locks"));
      const replica = db.replica({ table: "job_locks", lockedBy: "h".repeat(241) });
      const lock = await replica.lock({
        name: "own-table",
        lockAtMostFor: 1000,
        lockAtLeastFor: 0,
      });
      assert.notEqual(lock, undefined);
      const row = await rowOf(db, "own-table", "job_locks");
      // The longest lockedBy: with the id of the taking, the 255 characters of the column.
      assert.equal(row!.lockedBy.length, 255);
      assert.ok(row!.lockedBy.startsWith(`${"h".repeat(241)} `));
      assert.equal(await rowOf(db, "own-table"), undefined);
      await lock!.unlock();
    });
  });
}

describe("SqlLockProvider refuses what it cannot use, with a TypeError that says why", () => {
  const query: SqlLockQuery = () => Promise.reject(new Error("no query runs"));

  it("a dialect it does not speak", () => {
    for (const dialect of ["oracle", "Postgres", "toString", "", undefined, 42]) {
      const message = new RegExp(
        `dialect ${JSON.stringify(dialect) ?? "undefined"}; it is one of postgres, mysql, sqlite`,
      );
      assert.throws(
        () => new SqlLockProvider({ dialect: dialect as "sqlite", query }),
        (e: Error) => e instanceof TypeError && message.test(e.message),
      );
      assert.throws(
        () => SqlLockProvider.createTable(dialect as "sqlite"),
        (e: Error) => e instanceof TypeError && message.test(e.message),
      );
    }
  });

  it("a table name that is not a plain identifier", () => {
    const tables = [
      "",
      "1locks",
      "shed lock",
      "shedlock; DROP TABLE users",
      'shed"lock',
      "shed`lock",
      "shed'lock",
      "public.shedlock",
      "t".repeat(64),
      "verrou_\u00e9",
      42,
      null,
    ];
    for (const table of tables) {
      const message = /table .* is not a plain table name \(letters, digits, _; up to 63/;
      const is = (e: Error) => e instanceof TypeError && message.test(e.message);
      assert.throws(
        () => new SqlLockProvider({ dialect: "postgres", query, table: table as string }),
        is,
      );
      assert.throws(() => SqlLockProvider.createTable("mysql", table as string), is);
      assert.throws(
        () => SqlLockProvider.postgres({ query: query as never }, { table: table as string }),
        is,
      );
    }
    assert.match(SqlLockProvider.createTable("sqlite", "t".repeat(63)), /^CREATE TABLE t{63} /);
  });

  it("a query that is not a function, and options that are not an object", () => {
    for (const bad of [undefined, "SELECT 1", {}]) {
      assert.throws(
        () => new SqlLockProvider({ dialect: "sqlite", query: bad as unknown as SqlLockQuery }),
        (e: Error) => e instanceof TypeError && /query is the function that runs/.test(e.message),
      );
    }
    for (const bad of [undefined, null, "sqlite"]) {
      assert.throws(
        () => new SqlLockProvider(bad as never),
        (e: Error) => e instanceof TypeError && /^SqlLockProvider: options are/.test(e.message),
      );
    }
  });

  it("a lockedBy the locked_by column cannot hold exactly", () => {
    for (const lockedBy of [42, "", "a\u0000b", "x".repeat(242), "lone \udc00"]) {
      assert.throws(
        () => new SqlLockProvider({ dialect: "sqlite", query, lockedBy: lockedBy as string }),
        (e: Error) => e instanceof TypeError && /^SqlLockProvider: lockedBy /.test(e.message),
        JSON.stringify(lockedBy),
      );
    }
    new SqlLockProvider({ dialect: "sqlite", query, lockedBy: "x".repeat(241) });
  });

  it("a lock's name or durations it cannot store, before any statement runs", async () => {
    const ran: string[] = [];
    const provider = new SqlLockProvider({
      dialect: "postgres",
      query: (sql) => {
        ran.push(sql);
        return Promise.resolve([]);
      },
    });
    const bad: [Partial<LockConfiguration>, RegExp][] = [
      [{ name: "n".repeat(65) }, /65 characters long; the name column holds 64/],
      [{ name: "a\u0000" }, /holds NUL/],
      [{ lockAtMostFor: -1 }, /lockAtMostFor -1 is not a whole number of milliseconds/],
      [{ lockAtMostFor: Number.NaN }, /lockAtMostFor NaN is not/],
      [{ lockAtMostFor: Infinity }, /lockAtMostFor Infinity is not/],
      [{ lockAtMostFor: 1.5 }, /lockAtMostFor 1.5 is not/],
      [{ lockAtMostFor: "60000" as unknown as number }, /lockAtMostFor "60000" is not/],
      [{ lockAtLeastFor: -5 }, /lockAtLeastFor -5 is not/],
      [
        { lockAtLeastFor: 2000 },
        /lockAtLeastFor \(2000 ms\) is more than lockAtMostFor \(1000 ms\)/,
      ],
    ];
    for (const [change, message] of bad) {
      await assert.rejects(
        provider.lock({ name: "digest", lockAtMostFor: 1000, lockAtLeastFor: 0, ...change }),
        (e: Error) => e instanceof TypeError && message.test(e.message),
        message.source,
      );
    }
    assert.deepEqual(ran, []);
  });
});

// The property: random lock, unlock and advance steps of three replicas (two of them with the
// same lockedBy) over two lock names, against a model that knows each grant's times only as
// bounds read from the database's clock around the call. Never two holders at once: a grant is
// refused while an earlier one surely has not ended. And never a refusal of a lock that surely is
// free. A late unlock (of a grant taken over since) must leave the new holder's lock alone.
type Step =
  | {
    readonly op: "lock";
    readonly replica: number;
    readonly name: number;
    readonly atMost: number;
    readonly atLeast: number;
  }
  | { readonly op: "unlock"; readonly grant: number }
  | { readonly op: "advance"; readonly ms: number };

interface Grant {
  readonly name: number;
  readonly lock: SimpleLock;
  /** Bounds of its locked_at on the database's clock. */
  readonly lo: number;
  readonly hi: number;
  readonly atMost: number;
  readonly atLeast: number;
  /** Bounds of its first unlock's time. */
  unlockLo?: number;
  unlockHi?: number;
}

// When a grant stops holding the lock: at lockAtMostFor, or when unlocked before that (but not
// before lockAtLeastFor). An unlock after lockAtMostFor (taken over, or not) changes nothing.
const endLo = (g: Grant) =>
  g.unlockLo === undefined
    ? g.lo + g.atMost
    : Math.min(g.lo + g.atMost, Math.max(g.unlockLo, g.lo + g.atLeast));
const endHi = (g: Grant) =>
  g.unlockHi === undefined
    ? g.hi + g.atMost
    : Math.min(g.hi + g.atMost, Math.max(g.unlockHi, g.hi + g.atLeast));

// Mostly one name, and often no lockAtLeastFor, so that takeovers and late unlocks come often.
const steps = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        replica: fc.nat(2),
        name: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.constant(1)),
        atMost: fc.integer({ min: 1, max: 80 }),
        atLeast: fc.oneof(fc.constant(0), fc.nat(80)),
      }).map(({ atMost, atLeast, ...rest }): Step => ({
        op: "lock",
        ...rest,
        atMost,
        atLeast: Math.min(atLeast, atMost),
      })),
    },
    { weight: 3, arbitrary: fc.nat(3).map((grant): Step => ({ op: "unlock", grant })) },
    { weight: 2, arbitrary: fc.nat(80).map((ms): Step => ({ op: "advance", ms })) },
  ),
  { minLength: 1, maxLength: 30 },
);

async function runSteps(db: Backend, replicas: SqlLockProvider[], prefix: string, plan: Step[]) {
  const grants: Grant[] = [];
  let clock = await db.now();
  for (const step of plan) {
    if (step.op === "advance") {
      clock = await untilDbTime(db, clock + step.ms);
    } else if (step.op === "unlock") {
      if (grants.length === 0) continue;
      // Counted from the latest: the one before it is the late unlock of a lock taken over.
      const grant = grants[grants.length - 1 - (step.grant % grants.length)];
      const lo = clock;
      await grant.lock.unlock();
      clock = await db.now();
      if (grant.unlockLo === undefined) {
        grant.unlockLo = lo;
        grant.unlockHi = clock;
      }
    } else {
      const lo = clock;
      const lock = await replicas[step.replica].lock({
        name: `${prefix}-${step.name}`,
        lockAtMostFor: step.atMost,
        lockAtLeastFor: step.atLeast,
      });
      const hi = clock = await db.now();
      const earlier = grants.filter((g) => g.name === step.name);
      if (lock !== undefined) {
        for (const g of earlier) {
          assert.ok(hi >= endLo(g), `two holders at once: ${JSON.stringify({ step, g, lo, hi })}`);
        }
        grants.push({ name: step.name, lock, lo, hi, atMost: step.atMost, atLeast: step.atLeast });
      } else {
        assert.ok(
          earlier.some((g) => endHi(g) > lo),
          `refused a free lock: ${JSON.stringify({ step, earlier, lo, hi })}`,
        );
      }
    }
  }
}

// The shapes a broken provider fails on, run first on every database: a late unlock after a
// takeover, an unlock inside lockAtLeastFor, a held lock asked for by another replica.
const SHAPES: [Step[]][] = [
  [[
    { op: "lock", replica: 0, name: 0, atMost: 10, atLeast: 0 },
    { op: "advance", ms: 10 },
    { op: "lock", replica: 1, name: 0, atMost: 80, atLeast: 0 },
    { op: "unlock", grant: 1 },
    { op: "lock", replica: 2, name: 0, atMost: 80, atLeast: 0 },
  ]],
  [[
    { op: "lock", replica: 0, name: 0, atMost: 80, atLeast: 60 },
    { op: "unlock", grant: 0 },
    { op: "lock", replica: 1, name: 0, atMost: 80, atLeast: 0 },
    { op: "advance", ms: 60 },
    { op: "lock", replica: 2, name: 0, atMost: 80, atLeast: 0 },
  ]],
  [[
    { op: "lock", replica: 0, name: 0, atMost: 80, atLeast: 0 },
    { op: "lock", replica: 1, name: 0, atMost: 80, atLeast: 0 },
    { op: "lock", replica: 2, name: 1, atMost: 80, atLeast: 0 },
    { op: "unlock", grant: 1 },
    { op: "lock", replica: 2, name: 0, atMost: 80, atLeast: 0 },
  ]],
];

describe("SqlLockProvider: never two holders at once (property)", () => {
  // SQLite at length; the servers too, with fewer runs (each step is a round trip).
  for (const kind of KINDS) {
    it(`on ${kind}`, async () => {
      const db = await openBackend(kind);
      try {
        const replicas = [
          db.replica({ lockedBy: "host-a" }),
          db.replica({ lockedBy: "host-a" }),
          db.replica({ lockedBy: "host-b" }),
        ];
        let run = 0;
        await fc.assert(
          fc.asyncProperty(steps, (plan) => runSteps(db, replicas, `p${++run}`, plan)),
          { ...propertyOptions(kind === "sqlite" ? 60 : 25), examples: SHAPES },
        );
      } finally {
        await db.close();
      }
    });
  }
});
