import assert from "node:assert/strict";
import { SqlClient } from "../../src/data/sql_client.ts";
import { after } from "node:test";
import { DataError } from "../../src/sql/data_error.ts";
import { openPool } from "../../src/sql/open_pool.ts";
import type { DataPool } from "../../src/sql/data_pool.ts";
import type { PoolSettings } from "../../src/sql/pool_settings.ts";
import type { Datasource } from "../../src/sql/datasource.ts";
import {
  createDatabase,
  DB_PASSWORD,
  DB_USER,
  type Kind,
  KINDS,
  type TestDatabase,
} from "../migrate/sql/databases.ts";
import { suiteTempDirs } from "../temp_dir.ts";

export { type Kind, KINDS };

/** A pool on a fresh database, and a connection of its own to look and act beside it. */
export interface TestPool {
  readonly pool: DataPool;
  readonly datasource: Datasource;
  /** Beside the pool: another connection (for SQLite, another handle on the file). */
  readonly admin: TestDatabase;
}

/**
 * Makes pools for the suite it is called in, each on a database of its own (a file for SQLite,
 * or `:memory:` when asked), and closes them after it. A server that is not running fails the
 * test, saying how to start it.
 */
export function testPools(): (
  kind: Kind,
  settings?: PoolSettings,
  options?: { memory?: boolean },
) => Promise<TestPool> {
  const opened: TestPool[] = [];
  // Registered first, so that the pools close before their folders go.
  after(async () => {
    for (const p of opened) {
      await p.pool.close();
      await p.admin.close();
    }
  });
  const tempDir = suiteTempDirs();
  return async (kind, settings = {}, options = {}) => {
    const dir = await tempDir("thaw-data-");
    const id = `d${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const admin = await createDatabase(kind, dir, id);
    const location = kind === "sqlite"
      ? options.memory ? ":memory:" : admin.url.slice("sqlite:".length)
      : admin.url;
    const datasource: Datasource = {
      name: `${kind}_main`,
      kind,
      location,
      ...(kind === "sqlite" ? {} : { username: DB_USER, password: DB_PASSWORD }),
      migrationsEnabled: false,
      strictOrder: false,
      validateOnMigrate: false,
      table: "framework_migrations",
    };
    const pool = await openPool(datasource, settings);
    const made = { pool, datasource, admin };
    opened.push(made);
    return made;
  };
}

/** The DataError `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<DataError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DataError, `expected a DataError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a rejection");
}

/** A client on a fresh `items (v)` table, and the values committed there, seen from beside it. */
export interface ItemsTable {
  readonly sql: SqlClient;
  readonly admin: TestDatabase;
  readonly committed: () => Promise<string[]>;
}

/** Makes the suite's `items` tables on pools of `open` (testPools()) of one database kind. */
export function itemsTables(
  open: ReturnType<typeof testPools>,
  kind: Kind,
): (settings?: PoolSettings) => Promise<ItemsTable> {
  return async (settings = {}) => {
    const { pool, admin } = await open(kind, settings);
    const sql = new SqlClient(pool);
    await sql.execute`CREATE TABLE items (v VARCHAR(40) NOT NULL)`;
    const committed = async () =>
      (await admin.query("SELECT v FROM items ORDER BY v")).map((r) => String(r.v));
    return { sql, admin, committed };
  };
}

/** A fresh database's `datasource:` entry, and a connection to look at it from beside. */
export interface DatasourceEntry {
  /** The entry, with the credentials as keys. */
  readonly entry: Record<string, unknown>;
  readonly admin: TestDatabase;
  /** Its folder (the SQLite file's), removed after the suite. */
  readonly dir: string;
}

/**
 * Makes `datasource:` entries for the suite it is called in, named `name` with `extra` keys, each
 * on a database of its own, and closes their admin connections after it.
 */
export function datasourceEntries(): (
  kind: Kind,
  name: string,
  extra?: Record<string, unknown>,
) => Promise<DatasourceEntry> {
  const admins: TestDatabase[] = [];
  // Registered first, so that the connections close before their folders go.
  after(async () => {
    for (const admin of admins) await admin.close();
  });
  const tempDir = suiteTempDirs();
  return async (kind, name, extra = {}) => {
    const dir = await tempDir("thaw-data-app-");
    const admin = await createDatabase(kind, dir, `d${crypto.randomUUID().slice(0, 8)}`);
    admins.push(admin);
    const entry = {
      name,
      url: admin.url,
      ...(kind === "sqlite" ? {} : { username: DB_USER, password: DB_PASSWORD }),
      ...extra,
    };
    return { entry, admin, dir };
  };
}

/**
 * Asserts that a call on a busy pool of `open`'s database waits its acquire-timeout, not the
 * shorter connect-timeout (pg bounds the two together unless told apart).
 */
export async function waitsAcquireTimeout(
  open: (settings: PoolSettings) => Promise<TestPool>,
): Promise<void> {
  // A connect bound a loaded machine still meets (CI saw a local connect pass 100 ms).
  const { pool } = await open({ maxSize: 1, connectTimeoutMs: 1_000, acquireTimeoutMs: 60_000 });
  const held = await pool.acquire();
  let outcome = "waiting";
  const waiting = pool.acquire().then(
    (connection) => {
      outcome = "served";
      return connection;
    },
    (error: Error) => {
      outcome = error.message;
      throw error;
    },
  );
  waiting.catch(() => {});
  // The connect timeout passing, several times over, is the condition under test: the waiter
  // connects nothing, so that bound is not its own.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  assert.equal(outcome, "waiting");
  held.release();
  const served = await waiting;
  assert.deepEqual((await served.run("SELECT 1 AS one", [])).rows, [{ one: 1 }]);
  served.release();
}
