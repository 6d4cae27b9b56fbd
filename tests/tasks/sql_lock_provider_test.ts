// SqlLockProvider against the real databases: SQLite (the runtime's own), PostgreSQL and MariaDB
// (tools/databases.sh start; a server that is not running fails the suite). Each replica is a
// provider over connections of its own, as in a process of its own. Every time the tests reason
// about is the database's: read from it around each call, never from the test's clock, and never
// waited for with a sleep that orders events.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import mysql from "mysql2/promise";
import pg from "pg";
import { SqlLockProvider, type SqlLockQuery } from "../../src/tasks/sql_lock_provider.ts";
import type { HeldLock, LockRequest } from "../../src/tasks/lock_manager.ts";
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

/** One call of `acquire`, between two readings of the database's clock. */
async function attempt(backend: Backend, provider: SqlLockProvider, request: LockRequest) {
  const before = await backend.now();
  const lock = await provider.acquire(request);
  const after = await backend.now();
  return { lock, before, after };
}

/**
 * One try of `key` (`waitMs: 0`), held `leaseMs` at most and `minHoldMs` at least; without
 * `minHoldMs`, a key made of data, whose release deletes its row.
 */
const request = (key: string, leaseMs = 60_000, minHoldMs?: number): LockRequest => ({
  key,
  waitMs: 0,
  leaseMs,
  ...(minHoldMs === undefined ? {} : { minHoldMs }),
});

/** The lock, asserting there was one. */
function held(lock: HeldLock | undefined, what = "expected the lock to be taken"): HeldLock {
  assert.notEqual(lock, undefined, what);
  return lock!;
}

/**
 * The row's name of a key the name column cannot hold exactly (or that starts with `sha256:`):
 * `sha256:` and the base64url SHA-256 of its UTF-16 code units, worked out here apart from the
 * provider's own code.
 */
function hashedName(key: string): string {
  const digest = createHash("sha256").update(Buffer.from(key, "utf16le")).digest("base64url");
  return `sha256:${digest}`;
}

/** Polls the database's clock (a state, not a sleep) until it reads `time` or later. */
async function untilDbTime(backend: Backend, time: number): Promise<number> {
  for (;;) {
    const now = await backend.now();
    if (now >= time) return now;
    await new Promise((resolve) => setTimeout(resolve, Math.min(time - now, 20)));
  }
}

/** The driver's error for a table that does not exist. */
const ERROR_OF_MISSING_TABLE = (table: string) => ({
  sqlite: new RegExp(`no such table: ${table}`),
  postgres: new RegExp(`relation "${table}" does not exist`),
  mysql: new RegExp(`Table '\\w+\\.${table}' doesn't exist`),
});

/** How the provider's errors name each database. */
const DATABASE = { sqlite: "SQLite", postgres: "PostgreSQL", mysql: "MySQL or MariaDB" } as const;

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

    it("takes a free lock, refuses it while it is held, and takes it again after release", async () => {
      const db = await backend();
      const replica = db.replica({ lockedBy: "host-a" });
      const first = held(await replica.acquire(request("own")));
      const row = await rowOf(db, "own");
      assert.match(row!.lockedBy, /^host-a \S+$/);
      assert.equal(row!.lockUntil - row!.lockedAt, 60_000);
      assert.equal(await replica.acquire(request("own")), undefined, "the same provider holds it");
      await first.release();
      await first.release(); // a second release does nothing
      const again = held(await replica.acquire(request("own")));
      const taken = await rowOf(db, "own");
      assert.notEqual(taken!.lockedBy, row!.lockedBy, "each taking is a holder of its own");
      // A third release of the first taking leaves the second's lock as it is.
      await first.release();
      assert.deepEqual(await rowOf(db, "own"), taken);
      assert.equal(await replica.acquire(request("own")), undefined);
      await again.release();
    });

    it("refuses a lock another replica holds; after its release (no minHoldMs), takes it", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const lock = held(await a.acquire(request("shared")));
      assert.equal(await b.acquire(request("shared")), undefined);
      const heldRow = await rowOf(db, "shared");
      assert.match(heldRow!.lockedBy, /^host-a /);
      const beforeRelease = await db.now();
      await lock.release();
      // Released without minHoldMs: its row is gone, the lock free at once.
      assert.equal(await rowOf(db, "shared"), undefined);
      const taken = held(await b.acquire(request("shared")));
      const now = await rowOf(db, "shared");
      assert.match(now!.lockedBy, /^host-b /);
      // Taken after the release, long before a's lease would have ended.
      assert.ok(now!.lockedAt >= beforeRelease && now!.lockedAt < heldRow!.lockUntil);
      await taken.release();
    });

    it("two replicas with the same lockedBy still exclude each other", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "same-host" });
      const b = db.replica({ lockedBy: "same-host" });
      const lock = held(await a.acquire(request("same-host")));
      assert.equal(await b.acquire(request("same-host")), undefined);
      // b taking and releasing a lock of another key changes nothing of a's.
      const other = held(await b.acquire(request("same-host-other")));
      await other.release();
      assert.equal(await b.acquire(request("same-host")), undefined);
      await lock.release();
      held(await b.acquire(request("same-host")));
    });

    it("a release without minHoldMs deletes the lock's row, while it is still this taking's", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const long = "d".repeat(65); // stored as its hash: its row goes too
      for (const key of ["deleted", long]) {
        const name = key === long ? hashedName(key) : key;
        const lock = held(await a.acquire(request(key)));
        assert.match((await rowOf(db, name))!.lockedBy, /^host-a /);
        await lock.release();
        assert.equal(await rowOf(db, name), undefined, `row of ${JSON.stringify(key)} kept`);
      }
      // A lease that ended with nobody taking the lock since: the row is still this taking's,
      // and goes at its release.
      const lapsed = held(await a.acquire(request("lapsed", 1)));
      const row = (await rowOf(db, "lapsed"))!;
      await untilDbTime(db, row.lockUntil);
      assert.deepEqual(await rowOf(db, "lapsed"), row);
      await lapsed.release();
      assert.equal(await rowOf(db, "lapsed"), undefined);
    });

    it("a release with minHoldMs 0 keeps the row, its end moved to the release (ShedLock's unlock)", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const lock = held(await a.acquire(request("kept", 60_000, 0)));
      const heldRow = (await rowOf(db, "kept"))!;
      const beforeRelease = await db.now();
      await lock.release();
      const afterRelease = await db.now();
      // ShedLock, once it saw a name's row, only updates it: the row must stay.
      const released = (await rowOf(db, "kept"))!;
      assert.equal(released.lockedBy, heldRow.lockedBy);
      assert.equal(released.lockedAt, heldRow.lockedAt);
      assert.ok(released.lockUntil >= beforeRelease && released.lockUntil <= afterRelease);
      await held(await b.acquire(request("kept", 60_000, 0))).release();
    });

    it("minHoldMs keeps the lock after release until locked_at + minHoldMs", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      await proved(async (name) => {
        const lock = held(await a.acquire(request(name, 60_000, WINDOW_MS)));
        await lock.release();
        const releasedBy = await db.now();
        const row = await rowOf(db, name);
        // The row is kept, still the holder's, its lease cut to locked_at + minHoldMs (or the
        // release's now, had the machine been that slow).
        assert.match(row!.lockedBy, /^host-a /);
        assert.ok(row!.lockUntil >= row!.lockedAt + WINDOW_MS);
        assert.ok(row!.lockUntil <= Math.max(releasedBy, row!.lockedAt + WINDOW_MS));
        if (releasedBy < row!.lockedAt + WINDOW_MS) {
          // Released before minHoldMs ended: held until then, to the millisecond.
          assert.equal(row!.lockUntil, row!.lockedAt + WINDOW_MS);
        }
        let refusedInside = false;
        for (;;) {
          const { lock: taken, before, after } = await attempt(db, b, request(name));
          if (after < row!.lockUntil) assert.equal(taken, undefined, "taken before it ended");
          if (before >= row!.lockUntil) assert.notEqual(taken, undefined, "refused once it ended");
          if (taken === undefined) {
            refusedInside ||= after < row!.lockUntil;
            await untilDbTime(db, Math.min(after + 20, row!.lockUntil));
            continue;
          }
          const now = await rowOf(db, name);
          assert.match(now!.lockedBy, /^host-b /);
          assert.ok(now!.lockedAt >= row!.lockUntil, "taken before locked_at + minHoldMs");
          await taken.release();
          return refusedInside;
        }
      });
    });

    it("a release after minHoldMs has passed ends the lock at the database's now, its row kept", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const lock = held(await a.acquire(request("held-long-enough", 60_000, 5)));
      const heldRow = (await rowOf(db, "held-long-enough"))!;
      const beforeRelease = await untilDbTime(db, heldRow.lockedAt + 5);
      await lock.release();
      const afterRelease = await db.now();
      const released = (await rowOf(db, "held-long-enough"))!;
      // Released at the database's now: lock_until moved back from the lease to the release.
      assert.equal(released.lockedBy, heldRow.lockedBy);
      assert.equal(released.lockedAt, heldRow.lockedAt);
      assert.ok(released.lockUntil >= beforeRelease && released.lockUntil <= afterRelease);
      const taken = held(await b.acquire(request("held-long-enough")));
      const now = (await rowOf(db, "held-long-enough"))!;
      assert.match(now.lockedBy, /^host-b /);
      assert.ok(now.lockedAt >= released.lockUntil);
      await taken.release();
    });

    it("takes over a lock whose holder never released it once its lease has passed", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const c = db.replica({ lockedBy: "host-c" });
      await proved(async (name) => {
        const dying = held(await a.acquire(request(name, WINDOW_MS)));
        const expired = (await rowOf(db, name))!;
        assert.equal(expired.lockUntil - expired.lockedAt, WINDOW_MS);
        let refusedInside = false;
        let taken: HeldLock | undefined;
        while (taken === undefined) {
          const tried = await attempt(db, b, request(name));
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

        // The first holder wakes up and releases (a delete, no minHoldMs): the new holder's lock
        // stays as it was.
        await dying.release();
        assert.deepEqual(await rowOf(db, name), takenOver);
        assert.equal(await c.acquire(request(name)), undefined);
        await taken.release();
        held(await c.acquire(request(name)));
        return refusedInside;
      });
    });

    it("waits up to waitMs for a lock another holds: taken once released, nothing after waitMs", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const c = db.replica({ lockedBy: "host-c" });
      const first = held(await a.acquire(request("waited")));
      const waiting = b.acquire({ ...request("waited"), waitMs: 600_000 });
      // While b waits, the lock stays a's; a's release hands it over.
      assert.match((await rowOf(db, "waited"))!.lockedBy, /^host-a /);
      const beforeRelease = await db.now();
      await first.release();
      const second = held(await waiting);
      const row = (await rowOf(db, "waited"))!;
      assert.match(row.lockedBy, /^host-b /);
      assert.ok(row.lockedAt >= beforeRelease, "taken before a's release");
      // c waits 100 ms for b's lock, in vain: a wait on the process's monotonic clock, which the
      // provider reads too (performance.now), not the database's.
      const start = performance.now();
      assert.equal(await c.acquire({ ...request("waited"), waitMs: 100 }), undefined);
      assert.ok(performance.now() - start >= 100, "gave up before waitMs");
      // An aborted signal: one try, no wait; a free key is still taken.
      const aborted = AbortSignal.abort();
      assert.equal(
        await c.acquire({ ...request("waited"), waitMs: 600_000, signal: aborted }),
        undefined,
      );
      const free = held(await c.acquire({ ...request("waited-free"), signal: aborted }));
      assert.deepEqual(await rowOf(db, "waited"), row);
      await free.release();
      await second.release();
    });

    it("a lock lasts exactly leaseMs from when it was taken, by the database's clock", async () => {
      // Both times of a row come from one reading of the clock: locked_at + leaseMs is
      // lock_until to the millisecond. Two readings would differ by a few microseconds, and
      // now and then straddle a millisecond: PostgreSQL takes locks fast enough to try many.
      const db = await backend();
      const replicas = [db.replica(), db.replica(), db.replica(), db.replica()];
      const count = kind === "postgres" ? 10_000 : 1_000;
      const names = Array.from({ length: count }, (_, i) => `exact-${i}`);
      await Promise.all(replicas.map(async (replica, r) => {
        for (let i = r; i < names.length; i += replicas.length) {
          assert.notEqual(await replica.acquire(request(names[i], 300)), undefined);
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
        // Every byte value but 0 (PostgreSQL stores no NUL: hashed, below) as a character.
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
      const locks: HeldLock[] = [];
      for (const name of names) {
        locks.push(held(await a.acquire(request(name)), JSON.stringify(name)));
      }
      // Read back: every name exactly, each in a row of its own ("Tick" is not "tick").
      const stored = (await db.query("SELECT name FROM shedlock")).map((row) => String(row.name));
      for (const name of names) {
        assert.ok(stored.includes(name), `not stored: ${JSON.stringify(name)}`);
      }
      assert.equal(stored.filter((name) => names.includes(name)).length, names.length);
      for (const name of names) {
        assert.equal(
          await b.acquire(request(name)),
          undefined,
          `not held: ${JSON.stringify(name)}`,
        );
      }
      for (const lock of locks) await lock.release();
      for (const name of names) {
        // Released without minHoldMs: the row is gone, the lock free.
        assert.equal(await rowOf(db, name), undefined, `row kept: ${JSON.stringify(name)}`);
        const lock = held(await b.acquire(request(name)), `not released: ${JSON.stringify(name)}`);
        await lock.release();
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
          const lock = held(await replica.acquire(request(name)), JSON.stringify(name));
          assert.equal((await rowOf(db, name))?.name, name);
          await lock.release();
          assert.equal(await rowOf(db, name), undefined, JSON.stringify(name));
        }
      });
    }

    it("stores a key the name column cannot hold exactly as its SHA-256: still one lock per key", async () => {
      const db = await backend();
      const a = db.replica({ lockedBy: "host-a" });
      const b = db.replica({ lockedBy: "host-b" });
      const keys = [
        "n".repeat(65),
        "n".repeat(64) + "m", // the same 64 first characters: another lock
        "n".repeat(66),
        "\u{1F600}".repeat(65),
        "x".repeat(100_000),
        "a\u0000b", // NUL, which PostgreSQL cannot store
        "a\u0000c",
        "tock ", // MySQL's and MariaDB's collations would take it for "tock"
        "tock",
        "half \ud800 surrogate", // lone surrogates, two keys
        "half \udc00 surrogate",
        "\ud800",
        "\udc00",
        "sha256:abc", // starts as a hashed name does: hashed too
        hashedName("n".repeat(65)), // the stored name of another key: a lock of its own
      ];
      const stored = (key: string) => key === "tock" ? key : hashedName(key);
      assert.equal(new Set(keys.map(stored)).size, keys.length);
      const before = Number((await db.query("SELECT COUNT(*) AS n FROM shedlock"))[0].n);
      const locks: HeldLock[] = [];
      for (const key of keys) {
        const what = JSON.stringify(key.slice(0, 80));
        locks.push(held(await a.acquire(request(key)), `not taken: ${what}`));
        assert.equal(await b.acquire(request(key)), undefined, `not held: ${what}`);
        const row = await rowOf(db, stored(key));
        assert.match(row!.lockedBy, /^host-a /, what);
        assert.equal(row!.lockUntil - row!.lockedAt, 60_000, what);
      }
      // One row each, under its stored name, and no other.
      const rows = Number((await db.query("SELECT COUNT(*) AS n FROM shedlock"))[0].n);
      assert.equal(rows - before, keys.length);
      for (const lock of locks) await lock.release();
      for (const key of keys) {
        const what = JSON.stringify(key.slice(0, 80));
        assert.equal(await rowOf(db, stored(key)), undefined, `row kept: ${what}`);
        const lock = held(await b.acquire(request(key)), `not released: ${what}`);
        await lock.release();
      }
    });

    it("never creates its table: acquire() rejects naming the lock and table, the driver's error its cause", async () => {
      const db = await backend();
      const replica = db.replica({ table: "missing_locks" });
      const missing = ERROR_OF_MISSING_TABLE("missing_locks")[kind];
      await assert.rejects(replica.acquire(request("digest", 1000)), (error: Error) => {
        assert.ok(!(error instanceof TypeError), "a TypeError");
        const cause = error.cause;
        assert.ok(cause instanceof Error, "the driver's error is not the cause");
        assert.match(cause.message, missing);
        assert.equal(
          error.message,
          `SqlLockProvider: could not take the lock "digest" on ${DATABASE[kind]} ` +
            `(table missing_locks): ${cause.message}`,
        );
        return true;
      });
      // Still missing: the provider did not create it on the way.
      await assert.rejects(db.query("SELECT COUNT(*) AS n FROM missing_locks"), missing);
    });

    it("a release the database refuses rejects naming the lock and table, the driver's error its cause", async () => {
      const db = await backend();
      await db.query(SqlLockProvider.createTable(kind, "dropped_locks"));
      const replica = db.replica({ table: "dropped_locks" });
      const lock = held(await replica.acquire(request("dropped\nkey")));
      await db.query("DROP TABLE dropped_locks");
      const release = lock.release();
      await assert.rejects(release, (error: Error) => {
        const cause = error.cause;
        assert.ok(cause instanceof Error, "the driver's error is not the cause");
        assert.match(cause.message, ERROR_OF_MISSING_TABLE("dropped_locks")[kind]);
        assert.equal(
          error.message,
          `SqlLockProvider: could not release the lock "dropped\\nkey" on ${DATABASE[kind]} ` +
            `(table dropped_locks): ${cause.message}`,
        );
        return true;
      });
      // Given back once: a second release has that one outcome.
      assert.equal(lock.release(), release);
    });

    it("uses the table it is given, created from createTable(dialect, table)", async () => {
      const db = await backend();
      await db.query(SqlLockProvider.createTable(kind, "job_locks"));
      const replica = db.replica({ table: "job_locks", lockedBy: "h".repeat(241) });
      const lock = held(await replica.acquire(request("own-table", 1000)));
      const row = await rowOf(db, "own-table", "job_locks");
      // The longest lockedBy: with the id of the taking, the 255 characters of the column.
      assert.equal(row!.lockedBy.length, 255);
      assert.ok(row!.lockedBy.startsWith(`${"h".repeat(241)} `));
      assert.equal(await rowOf(db, "own-table"), undefined);
      await lock.release();
      assert.equal(await rowOf(db, "own-table", "job_locks"), undefined);
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

  it("a query that is not a function, options that are not an object, an unknown option", () => {
    for (const bad of [undefined, "SELECT 1", {}]) {
      assert.throws(
        () => new SqlLockProvider({ dialect: "sqlite", query: bad as unknown as SqlLockQuery }),
        (e: Error) => e instanceof TypeError && /query is the function that runs/.test(e.message),
      );
    }
    for (const [bad, shown] of [[undefined, "undefined"], [null, "null"], ["sqlite", '"sqlite"']]) {
      assert.throws(
        () => new SqlLockProvider(bad as never),
        (e: Error) =>
          e instanceof TypeError &&
          e.message === `SqlLockProvider: the options must be an object, got ${shown}; ` +
              "give { dialect, query }, or use SqlLockProvider.postgres(pool), .mysql(pool), " +
              ".sqlite(db)",
      );
    }
    const unknown = (e: Error) =>
      e instanceof TypeError &&
      e.message ===
        'SqlLockProvider: unknown option "lockAtMostFor"; the options are dialect, query, table, ' +
          "lockedBy";
    assert.throws(
      () => new SqlLockProvider({ dialect: "sqlite", query, lockAtMostFor: 1 } as never),
      unknown,
    );
    assert.throws(
      () => SqlLockProvider.postgres({ query: query as never }, { lockAtMostFor: 1 } as never),
      unknown,
    );
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

  it("a request it cannot take, before any statement runs", async () => {
    const ran: (readonly (string | number)[])[] = [];
    const provider = new SqlLockProvider({
      dialect: "postgres",
      query: (_sql, params) => {
        ran.push(params);
        return Promise.resolve([]);
      },
    });
    const max = 2_147_483_647;
    const valid = { key: "digest", waitMs: 0, leaseMs: 1000, minHoldMs: 0 };
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ key: "" }, /^SqlLockProvider: the lock's key must be a non-empty text, got ""$/],
      [{ key: 42 }, /^SqlLockProvider: the lock's key must be a non-empty text, got 42$/],
      [{ key: undefined }, /must be a non-empty text, got undefined$/],
      [
        { waitMs: -1 },
        /^SqlLockProvider: waitMs of the lock "digest" is -1; it is a number of milliseconds from 0 to 2147483647$/,
      ],
      [{ waitMs: Number.NaN }, /waitMs of the lock "digest" is NaN; it is a number/],
      [{ waitMs: Infinity }, /waitMs of the lock "digest" is Infinity; it is a number/],
      [{ waitMs: max + 1 }, /waitMs of the lock "digest" is 2147483648; it is a number/],
      [{ waitMs: "0" }, /waitMs of the lock "digest" is "0"; it is a number/],
      [{ waitMs: undefined }, /waitMs of the lock "digest" is undefined; it is a number/],
      [
        { leaseMs: 0 },
        /^SqlLockProvider: leaseMs of the lock "digest" is 0; it is a whole number of milliseconds from 1 to 2147483647$/,
      ],
      [{ leaseMs: -1 }, /leaseMs of the lock "digest" is -1; it is a whole number/],
      [{ leaseMs: Number.NaN }, /leaseMs of the lock "digest" is NaN; it is a whole number/],
      [{ leaseMs: Infinity }, /leaseMs of the lock "digest" is Infinity; it is a whole number/],
      [{ leaseMs: 1.5 }, /leaseMs of the lock "digest" is 1.5; it is a whole number/],
      [{ leaseMs: max + 1 }, /leaseMs of the lock "digest" is 2147483648; it is a whole number/],
      [{ leaseMs: "60000" }, /leaseMs of the lock "digest" is "60000"; it is a whole number/],
      [
        { minHoldMs: -5 },
        /^SqlLockProvider: minHoldMs of the lock "digest" is -5; it is a whole number of milliseconds from 0 to its leaseMs \(1000\)$/,
      ],
      [{ minHoldMs: 1.5 }, /minHoldMs of the lock "digest" is 1.5; it is a whole number/],
      [
        { minHoldMs: 2000 },
        /minHoldMs of the lock "digest" is 2000; .* from 0 to its leaseMs \(1000\)/,
      ],
      [{ minHoldMs: "5" }, /minHoldMs of the lock "digest" is "5"; it is a whole number/],
      // The key is shown escaped, and cut when long.
      [{ key: "a\nb\u0007", leaseMs: 0 }, /leaseMs of the lock "a\\nb\\u0007" is 0/],
      [{ key: "k".repeat(500), leaseMs: 0 }, /leaseMs of the lock "k{200}"…\(500 chars\) is 0/],
    ];
    for (const [change, message] of bad) {
      await assert.rejects(
        provider.acquire({ ...valid, ...change } as unknown as LockRequest),
        (e: Error) => e instanceof TypeError && message.test(e.message),
        message.source,
      );
    }
    for (const bad of [null, undefined, "digest"]) {
      await assert.rejects(
        provider.acquire(bad as unknown as LockRequest),
        (e: Error) =>
          e instanceof TypeError &&
          e.message ===
            "SqlLockProvider: acquire() takes { key, waitMs, leaseMs, minHoldMs?, signal? }",
      );
    }
    assert.equal(ran.length, 0, `statements ran: ${JSON.stringify(ran)}`);
    // The bounds are taken: each a statement (held elsewhere, here: no row comes back), the key
    // of 65 characters under its hash.
    const taken: [Partial<LockRequest>, readonly (string | number)[]][] = [
      [{ leaseMs: max, minHoldMs: max }, ["digest", max]],
      [{ leaseMs: 1, minHoldMs: 1 }, ["digest", 1]],
      [{ key: "k".repeat(65) }, [hashedName("k".repeat(65)), 1000]],
      [{ key: "k".repeat(64) }, ["k".repeat(64), 1000]],
    ];
    for (const [change, params] of taken) {
      ran.length = 0;
      assert.equal(await provider.acquire({ ...valid, ...change }), undefined);
      assert.equal(ran.length, 1, "one try");
      assert.deepEqual(ran[0].slice(0, 2), params);
    }
  });
});

// The property: random acquire, release and advance steps of three replicas (two of them with the
// same lockedBy) over three keys (one long enough to be stored as its hash), against a model that
// knows each grant's times only as bounds read from the database's clock around the call. Never
// two holders at once: a grant is refused while an earlier one surely has not ended. And never a
// refusal of a lock that surely is free. Each grant's row is its own, with its lease to the
// millisecond; a release without minHoldMs deletes its row, one with minHoldMs (0 included) keeps
// it to locked_at + minHoldMs or the release; a late release (of a grant taken over since), or a second one, leaves
// the row as it is.
type Step =
  | {
    readonly op: "acquire";
    readonly replica: number;
    readonly key: number;
    readonly leaseMs: number;
    readonly minHoldMs: number | undefined;
  }
  | { readonly op: "release"; readonly grant: number }
  | { readonly op: "advance"; readonly ms: number };

interface Grant {
  readonly key: number;
  readonly lock: HeldLock;
  /** Its row's locked_by: this taking's holder. */
  readonly holder: string;
  /** Bounds of its locked_at on the database's clock. */
  readonly lo: number;
  readonly hi: number;
  readonly leaseMs: number;
  readonly minHoldMs: number | undefined;
  /** Bounds of its first release's time. */
  releaseLo?: number;
  releaseHi?: number;
}

const LOCKED_BY = ["host-a", "host-a", "host-b"];

// When a released grant stops holding the lock, for a release at `at` and a taking at `takenAt`:
// at once without minHoldMs (its row deleted) or with 0, else not before minHoldMs from its taking.
const releasedAt = (g: Grant, at: number, takenAt: number) =>
  Math.max(at, takenAt + (g.minHoldMs ?? 0));
// When a grant stops holding the lock: at its lease's end, or at its release before that. A
// release after the lease ended (taken over, or not) changes nothing.
const endLo = (g: Grant) =>
  g.releaseLo === undefined
    ? g.lo + g.leaseMs
    : Math.min(g.lo + g.leaseMs, releasedAt(g, g.releaseLo, g.lo));
const endHi = (g: Grant) =>
  g.releaseHi === undefined
    ? g.hi + g.leaseMs
    : Math.min(g.hi + g.leaseMs, releasedAt(g, g.releaseHi, g.hi));

// Mostly one key, and often no minHoldMs or 0, so that takeovers and late releases come often.
const steps = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        replica: fc.nat(2),
        key: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.constant(1), fc.constant(2)),
        leaseMs: fc.integer({ min: 1, max: 80 }),
        minHoldMs: fc.oneof(fc.constant(undefined), fc.constant(0), fc.nat(80)),
      }).map(({ leaseMs, minHoldMs, ...rest }): Step => ({
        op: "acquire",
        ...rest,
        leaseMs,
        minHoldMs: minHoldMs === undefined ? undefined : Math.min(minHoldMs, leaseMs),
      })),
    },
    { weight: 3, arbitrary: fc.nat(3).map((grant): Step => ({ op: "release", grant })) },
    { weight: 2, arbitrary: fc.nat(80).map((ms): Step => ({ op: "advance", ms })) },
  ),
  { minLength: 1, maxLength: 30 },
);

async function runSteps(db: Backend, replicas: SqlLockProvider[], prefix: string, plan: Step[]) {
  // Key 2 is longer than the name column: stored as its hash.
  const keys = [`${prefix}-0`, `${prefix}-1`, `${prefix}-${"l".repeat(64)}`];
  const names = [keys[0], keys[1], hashedName(keys[2])];
  const grants: Grant[] = [];
  let clock = await db.now();
  for (const step of plan) {
    if (step.op === "advance") {
      clock = await untilDbTime(db, clock + step.ms);
    } else if (step.op === "release") {
      if (grants.length === 0) continue;
      // Counted from the latest: the one before it is the late release of a lock taken over.
      const grant = grants[grants.length - 1 - (step.grant % grants.length)];
      const before = await rowOf(db, names[grant.key]);
      const lo = clock = await db.now();
      await grant.lock.release();
      clock = await db.now();
      const row = await rowOf(db, names[grant.key]);
      const shown = JSON.stringify({ step, grant, lo, hi: clock, before, row });
      if (grant.releaseLo !== undefined || before?.lockedBy !== grant.holder) {
        // Released before, or the row is no longer this taking's: nothing changes.
        assert.deepEqual(row, before, `a late or second release changed the row: ${shown}`);
      } else if (grant.minHoldMs === undefined) {
        assert.equal(row, undefined, `released without minHoldMs, its row kept: ${shown}`);
      } else {
        const kept = before.lockedAt + grant.minHoldMs;
        assert.ok(
          row !== undefined && row.lockedBy === before.lockedBy &&
            row.lockedAt === before.lockedAt && row.lockUntil >= Math.max(lo, kept) &&
            row.lockUntil <= Math.max(clock, kept),
          `released with minHoldMs, not kept to locked_at + minHoldMs: ${shown}`,
        );
      }
      if (grant.releaseLo === undefined) {
        grant.releaseLo = lo;
        grant.releaseHi = clock;
      }
    } else {
      const lo = clock;
      const lock = await replicas[step.replica].acquire({
        key: keys[step.key],
        waitMs: 0,
        leaseMs: step.leaseMs,
        ...(step.minHoldMs === undefined ? {} : { minHoldMs: step.minHoldMs }),
      });
      const hi = clock = await db.now();
      const earlier = grants.filter((g) => g.key === step.key);
      if (lock !== undefined) {
        for (const g of earlier) {
          assert.ok(hi >= endLo(g), `two holders at once: ${JSON.stringify({ step, g, lo, hi })}`);
        }
        const row = await rowOf(db, names[step.key]);
        assert.ok(
          row !== undefined && row.lockedBy.startsWith(`${LOCKED_BY[step.replica]} `) &&
            !grants.some((g) => g.holder === row.lockedBy) && row.lockedAt >= lo &&
            row.lockedAt <= hi && row.lockUntil - row.lockedAt === step.leaseMs,
          `the grant's row is not its own: ${JSON.stringify({ step, lo, hi, row })}`,
        );
        grants.push({
          key: step.key,
          lock,
          holder: row.lockedBy,
          lo,
          hi,
          leaseMs: step.leaseMs,
          minHoldMs: step.minHoldMs,
        });
      } else {
        assert.ok(
          earlier.some((g) => endHi(g) > lo),
          `refused a free lock: ${JSON.stringify({ step, earlier, lo, hi })}`,
        );
      }
    }
  }
}

// The shapes a broken provider fails on, run first on every database: a late release after a
// takeover (a delete, then an update), a release inside minHoldMs, a held lock asked for by
// another replica, the hashed key.
const SHAPES: [Step[]][] = [
  [[
    { op: "acquire", replica: 0, key: 0, leaseMs: 10, minHoldMs: 0 },
    { op: "advance", ms: 10 },
    { op: "acquire", replica: 1, key: 0, leaseMs: 80, minHoldMs: 0 },
    { op: "release", grant: 1 },
    { op: "acquire", replica: 2, key: 0, leaseMs: 80, minHoldMs: 0 },
  ]],
  [[
    { op: "acquire", replica: 0, key: 0, leaseMs: 10, minHoldMs: 5 },
    { op: "advance", ms: 10 },
    { op: "acquire", replica: 1, key: 0, leaseMs: 80, minHoldMs: 0 },
    { op: "release", grant: 1 },
    { op: "acquire", replica: 2, key: 0, leaseMs: 80, minHoldMs: 0 },
  ]],
  [[
    { op: "acquire", replica: 0, key: 0, leaseMs: 80, minHoldMs: 60 },
    { op: "release", grant: 0 },
    { op: "acquire", replica: 1, key: 0, leaseMs: 80, minHoldMs: 0 },
    { op: "advance", ms: 60 },
    { op: "acquire", replica: 2, key: 0, leaseMs: 80, minHoldMs: 0 },
  ]],
  [[
    { op: "acquire", replica: 0, key: 0, leaseMs: 80, minHoldMs: 0 },
    { op: "acquire", replica: 1, key: 0, leaseMs: 80, minHoldMs: 0 },
    { op: "acquire", replica: 2, key: 1, leaseMs: 80, minHoldMs: 0 },
    { op: "release", grant: 1 },
    { op: "acquire", replica: 2, key: 0, leaseMs: 80, minHoldMs: 0 },
  ]],
  [[
    { op: "acquire", replica: 0, key: 2, leaseMs: 80, minHoldMs: 0 },
    { op: "acquire", replica: 2, key: 2, leaseMs: 80, minHoldMs: 0 },
    { op: "release", grant: 0 },
    { op: "acquire", replica: 2, key: 2, leaseMs: 80, minHoldMs: 0 },
  ]],
];

describe("SqlLockProvider: never two holders at once (property)", () => {
  // SQLite at length; the servers too, with fewer runs (each step is a round trip).
  for (const kind of KINDS) {
    it(`on ${kind}`, async () => {
      const db = await openBackend(kind);
      try {
        const replicas = LOCKED_BY.map((lockedBy) => db.replica({ lockedBy }));
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
