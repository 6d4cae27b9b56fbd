/**
 * What `SqlClient` costs over the raw driver, in-process, on the runtime that runs this file
 * (`npm run bench:data` runs it on Deno, Bun and Node 26, the test databases started first):
 *
 *   deno run -A bench/data.ts [--batches 20] [--batch 400]
 *
 * Three calls on each database this runtime reaches (SQLite through the runtime's own module,
 * PostgreSQL through `pg`, MariaDB through `mysql2`): a read of one row by key, a write of one
 * row, and a transaction that reads a row and writes it back. Each is made by every contestant:
 * the `SqlClient` bean of `bootstrap({ data: data() })` (`@Transactional`'s path:
 * `sql.transaction`); the driver as its own documentation writes it (a prepared statement for
 * SQLite, `pool.query` / `pool.execute`, a client checked out for the transaction); and, on
 * PostgreSQL and MariaDB, the peers each as its documentation writes it, each with a pool of 10
 * like Thaw's: postgres.js (tagged templates, `sql.begin`; PostgreSQL only), Kysely (its query
 * builder over its `PostgresDialect` on `pg` and `MysqlDialect` on `mysql2`) and Drizzle (its
 * query builder over a table definition, `drizzle-orm/node-postgres` and `drizzle-orm/mysql2`).
 * The peers are left out on SQLite: Kysely's and Drizzle's SQLite drivers are written for
 * `better-sqlite3`, a native addon, and postgres.js speaks PostgreSQL only.
 *
 * Each round runs a batch of `batch` calls of every contestant, one after the other, the order
 * rotated by one each round and reversed every other round, so that none is always the warmer
 * or always follows the same one; CPU time of this process from `process.cpuUsage()` (the
 * database server's is not counted). Reported per call and contestant: the medians of µs and of
 * the ratio to the raw driver's batch of the same round, with the range of the middle half.
 *
 * @module
 */
import process from "node:process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import mysql from "mysql2/promise";
import mysqlCallbacks from "mysql2";
import postgresJs from "postgres";
import { Kysely, MysqlDialect, PostgresDialect } from "kysely";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { drizzle as drizzleMysql } from "drizzle-orm/mysql2";
import { eq } from "drizzle-orm";
import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { int, mysqlTable, varchar } from "drizzle-orm/mysql-core";
import { bootstrap } from "../mod.ts";
import { data, SqlClient } from "../data.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "20" },
    batch: { type: "string", default: "400" },
  },
});
const batches = Number(values.batches);
const batch = Number(values.batch);
if (!Number.isInteger(batches) || batches < 2 || !Number.isInteger(batch) || batch < 2) {
  console.error("data.ts: --batches and --batch must be whole numbers of at least 2");
  process.exit(2);
}

const USER = "thaw";
const PASSWORD = process.env.THAW_TEST_DB_PASSWORD ?? "thaw-secret";
const POSTGRES = process.env.POSTGRES_URL ?? "postgres://127.0.0.1:54329/thaw";
const MARIADB = process.env.MARIADB_URL ?? "mysql://127.0.0.1:33069/thaw";
const ROWS = 100;

type Call = (i: number) => Promise<unknown>;
type Kind = "read" | "write" | "transaction";
const RAW = "raw driver";
const THAW = "Thaw";

/** One call kind made by each contestant, by name; the raw driver's is the baseline. */
type Contestants = Record<string, Call>;

/** A database: each call kind's contestants, and what closes them. */
interface Bench {
  readonly name: string;
  readonly calls: Record<Kind, Contestants>;
  close(): Promise<void>;
}

async function thawClient(entry: Record<string, unknown>) {
  const app = await bootstrap({ config: { datasource: [entry] }, data: data(), logger: quiet });
  return { app, sql: app.getBean(SqlClient) };
}
const quiet = { error: () => {}, info: () => {} };

// SQLite as the pool leaves it (WAL, SQLite's FULL synchronous), or with `synchronous: NORMAL`
// on both sides (`pool.sqlite.synchronous`; the raw handle's own pragma).
async function sqlite(synchronous?: "NORMAL"): Promise<Bench | undefined> {
  const file = join(await mkdtemp(join(tmpdir(), "thaw-bench-data-")), "bench.db");
  type Db = {
    exec(sql: string): void;
    prepare(sql: string): { get(...p: unknown[]): unknown; run(...p: unknown[]): unknown };
    close(): void;
  };
  let db: Db;
  if ("Bun" in globalThis) {
    const { Database } = await import("bun:sqlite" as string);
    const bun = new Database(file);
    db = { exec: (s) => bun.exec(s), prepare: (s) => bun.query(s), close: () => bun.close() };
  } else {
    try {
      const { DatabaseSync } = await import("node:sqlite");
      db = new DatabaseSync(file) as unknown as Db;
    } catch {
      return undefined; // Node before 22.13
    }
  }
  db.exec("PRAGMA busy_timeout = 5000");
  if (synchronous !== undefined) {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec(`PRAGMA synchronous = ${synchronous}`);
  }
  db.exec("CREATE TABLE bench_items (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  for (let i = 0; i < ROWS; i++) {
    db.prepare("INSERT INTO bench_items (id, v) VALUES (?, ?)").run(i, "x");
  }
  const read = db.prepare("SELECT id, v FROM bench_items WHERE id = ?");
  const write = db.prepare("UPDATE bench_items SET v = ? WHERE id = ?");
  const { app, sql } = await thawClient({
    name: "main",
    url: `sqlite:${file}`,
    ...(synchronous === undefined ? {} : { pool: { sqlite: { synchronous } } }),
  });
  return {
    name: synchronous === undefined ? "SQLite" : `SQLite ${synchronous}+WAL`,
    calls: withThaw(sql, {
      read: (i) => Promise.resolve(read.get(i % ROWS)),
      write: (i) => Promise.resolve(write.run(`v${i}`, i % ROWS)),
      transaction: (i) => {
        db.exec("BEGIN IMMEDIATE");
        try {
          const row = read.get(i % ROWS) as { v: string };
          write.run(`${row.v.slice(0, 8)}!`, i % ROWS);
          db.exec("COMMIT");
        } catch (error) {
          db.exec("ROLLBACK");
          throw error;
        }
        return Promise.resolve();
      },
    }),
    close: async () => {
      await app.close();
      db.close();
    },
  };
}

const POOL_SIZE = 10; // Thaw's default `pool.max-size`, given to every contestant

// The peers' own shapes of the table, as their documentation declares one.
const pgItems = pgTable("bench_items", {
  id: integer("id").primaryKey(),
  v: text("v").notNull(),
});
const mysqlItems = mysqlTable("bench_items", {
  id: int("id").primaryKey(),
  v: varchar("v", { length: 40 }).notNull(),
});
interface Tables {
  bench_items: { id: number; v: string };
}

// A database of this run's own on each server: another run at the same time (the servers are
// shared) would drop the table under this one.
const DATABASE = `thaw_bench_${process.pid}_${Date.now()}`;
const url = (base: string) => {
  const at = new URL(base);
  at.pathname = `/${DATABASE}`;
  return at;
};

async function postgres(): Promise<Bench> {
  const server = new URL(POSTGRES);
  const admin = new pg.Client({
    host: server.hostname,
    port: Number(server.port),
    database: server.pathname.slice(1),
    user: USER,
    password: PASSWORD,
  });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  const own = url(POSTGRES);
  const options = {
    host: own.hostname,
    port: Number(own.port),
    database: DATABASE,
    user: USER,
    password: PASSWORD,
    max: POOL_SIZE,
  };
  const pool = new pg.Pool(options);
  await pool.query("CREATE TABLE bench_items (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  await pool.query(
    `INSERT INTO bench_items SELECT g, 'x' FROM generate_series(0, ${ROWS - 1}) AS g`,
  );
  const { app, sql } = await thawClient({
    name: "main",
    url: own.href,
    username: USER,
    password: PASSWORD,
  });
  const pgjs = postgresJs({ ...options, username: USER, max: POOL_SIZE, onnotice: () => {} });
  const kysely = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool: new pg.Pool(options) }),
  });
  const drizzlePool = new pg.Pool(options);
  const drizzle = drizzlePg({ client: drizzlePool });
  return {
    name: "PostgreSQL",
    calls: withPeers(
      withThaw(sql, {
        read: (i) => pool.query("SELECT id, v FROM bench_items WHERE id = $1", [i % ROWS]),
        write: (i) =>
          pool.query("UPDATE bench_items SET v = $1 WHERE id = $2", [`v${i}`, i % ROWS]),
        transaction: async (i) => {
          const client = await pool.connect();
          try {
            await client.query("BEGIN");
            const { rows } = await client.query("SELECT v FROM bench_items WHERE id = $1", [
              i % ROWS,
            ]);
            await client.query("UPDATE bench_items SET v = $1 WHERE id = $2", [
              `${String(rows[0].v).slice(0, 8)}!`,
              i % ROWS,
            ]);
            await client.query("COMMIT");
          } catch (error) {
            await client.query("ROLLBACK");
            throw error;
          } finally {
            client.release();
          }
        },
      }),
      {
        "postgres.js": {
          read: (i) => pgjs`SELECT id, v FROM bench_items WHERE id = ${i % ROWS}`,
          write: (i) => pgjs`UPDATE bench_items SET v = ${`v${i}`} WHERE id = ${i % ROWS}`,
          transaction: (i) =>
            pgjs.begin(async (tx) => {
              const [row] = await tx`SELECT v FROM bench_items WHERE id = ${i % ROWS}`;
              await tx`UPDATE bench_items SET v = ${`${String(row.v).slice(0, 8)}!`} WHERE id = ${
                i % ROWS
              }`;
            }),
        },
        Kysely: kyselyCalls(kysely),
        Drizzle: {
          read: (i) => drizzle.select().from(pgItems).where(eq(pgItems.id, i % ROWS)),
          write: (i) => drizzle.update(pgItems).set({ v: `v${i}` }).where(eq(pgItems.id, i % ROWS)),
          transaction: (i) =>
            drizzle.transaction(async (tx) => {
              const [row] = await tx.select({ v: pgItems.v }).from(pgItems).where(
                eq(pgItems.id, i % ROWS),
              );
              await tx.update(pgItems).set({ v: `${row.v.slice(0, 8)}!` }).where(
                eq(pgItems.id, i % ROWS),
              );
            }),
        },
      },
    ),
    close: async () => {
      await app.close();
      await pool.end();
      await pgjs.end();
      await kysely.destroy();
      await drizzlePool.end();
      await admin.query(`DROP DATABASE ${DATABASE}`);
      await admin.end();
    },
  };
}

async function mariadb(): Promise<Bench> {
  const admin = await mysql.createConnection({ uri: MARIADB, user: USER, password: PASSWORD });
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  const own = url(MARIADB).href;
  const options = { uri: own, user: USER, password: PASSWORD, connectionLimit: POOL_SIZE };
  const pool = mysql.createPool(options);
  await pool.query("CREATE TABLE bench_items (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)");
  for (let i = 0; i < ROWS; i++) {
    await pool.execute("INSERT INTO bench_items VALUES (?, ?)", [i, "x"]);
  }
  const { app, sql } = await thawClient({
    name: "main",
    url: own,
    username: USER,
    password: PASSWORD,
  });
  // Kysely's MysqlDialect takes mysql2's callback pool, as its documentation shows.
  const kysely = new Kysely<Tables>({
    dialect: new MysqlDialect({ pool: mysqlCallbacks.createPool(options) }),
  });
  const drizzlePool = mysql.createPool(options);
  const drizzle = drizzleMysql({ client: drizzlePool });
  return {
    name: "MariaDB",
    calls: withPeers(
      withThaw(sql, {
        read: (i) => pool.execute("SELECT id, v FROM bench_items WHERE id = ?", [i % ROWS]),
        write: (i) =>
          pool.execute("UPDATE bench_items SET v = ? WHERE id = ?", [`v${i}`, i % ROWS]),
        transaction: async (i) => {
          const connection = await pool.getConnection();
          try {
            await connection.query("START TRANSACTION");
            const [rows] = await connection.execute("SELECT v FROM bench_items WHERE id = ?", [
              i % ROWS,
            ]);
            await connection.execute("UPDATE bench_items SET v = ? WHERE id = ?", [
              `${String((rows as { v: string }[])[0].v).slice(0, 8)}!`,
              i % ROWS,
            ]);
            await connection.query("COMMIT");
          } catch (error) {
            await connection.query("ROLLBACK");
            throw error;
          } finally {
            connection.release();
          }
        },
      }),
      {
        Kysely: kyselyCalls(kysely),
        Drizzle: {
          read: (i) => drizzle.select().from(mysqlItems).where(eq(mysqlItems.id, i % ROWS)),
          write: (i) =>
            drizzle.update(mysqlItems).set({ v: `v${i}` }).where(eq(mysqlItems.id, i % ROWS)),
          transaction: (i) =>
            drizzle.transaction(async (tx) => {
              const [row] = await tx.select({ v: mysqlItems.v }).from(mysqlItems).where(
                eq(mysqlItems.id, i % ROWS),
              );
              await tx.update(mysqlItems).set({ v: `${row.v.slice(0, 8)}!` }).where(
                eq(mysqlItems.id, i % ROWS),
              );
            }),
        },
      },
    ),
    close: async () => {
      await app.close();
      await pool.end();
      await kysely.destroy();
      await drizzlePool.end();
      await admin.query(`DROP DATABASE ${DATABASE}`);
      await admin.end();
    },
  };
}

// The same three calls through Kysely's query builder, on either database.
function kyselyCalls(db: Kysely<Tables>): Record<Kind, Call> {
  return {
    read: (i) =>
      db.selectFrom("bench_items").select(["id", "v"]).where("id", "=", i % ROWS)
        .executeTakeFirst(),
    write: (i) =>
      db.updateTable("bench_items").set({ v: `v${i}` }).where("id", "=", i % ROWS).execute(),
    transaction: (i) =>
      db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom("bench_items").select("v").where("id", "=", i % ROWS)
          .executeTakeFirstOrThrow();
        await trx.updateTable("bench_items").set({ v: `${row.v.slice(0, 8)}!` })
          .where("id", "=", i % ROWS).execute();
      }),
  };
}

// The raw driver's calls and the same three through the SqlClient, the table named in the
// statement's text as the raw driver's and the peers' statements name it.
function withThaw(sql: SqlClient, raw: Record<Kind, Call>): Bench["calls"] {
  return {
    read: {
      [RAW]: raw.read,
      [THAW]: (i) => sql.maybeOne`SELECT id, v FROM bench_items WHERE id = ${i % ROWS}`,
    },
    write: {
      [RAW]: raw.write,
      [THAW]: (i) => sql.execute`UPDATE bench_items SET v = ${`v${i}`} WHERE id = ${i % ROWS}`,
    },
    transaction: {
      [RAW]: raw.transaction,
      [THAW]: (i) =>
        sql.transaction(async () => {
          const row = await sql.one<{ v: string }>`SELECT v FROM bench_items WHERE id = ${
            i % ROWS
          }`;
          await sql.execute`UPDATE bench_items SET v = ${`${row.v.slice(0, 8)}!`} WHERE id = ${
            i % ROWS
          }`;
        }),
    },
  };
}

function withPeers(
  calls: Bench["calls"],
  peers: Record<string, Record<Kind, Call>>,
): Bench["calls"] {
  for (const [name, peer] of Object.entries(peers)) {
    for (const kind of Object.keys(calls) as Kind[]) calls[kind][name] = peer[kind];
  }
  return calls;
}

// CPU per call; and the wall time, which a sync to the disk (SQLite's synchronous) takes
// without CPU.
const wall: Map<Call, number[]> = new Map();
async function cpuPerCall(call: Call): Promise<number> {
  const start = process.cpuUsage();
  const since = performance.now();
  for (let i = 0; i < batch; i++) await call(i);
  const used = process.cpuUsage(start);
  const times = wall.get(call) ?? [];
  times.push(((performance.now() - since) * 1000) / batch);
  wall.set(call, times);
  return (used.user + used.system) / batch;
}

const quartiles = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), low: at(0.25), high: at(0.75) };
};

const runtime = "Deno" in globalThis
  ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
  : "Bun" in globalThis
  ? `Bun ${process.versions.bun}`
  : `Node ${process.version}`;
console.log(`\n${runtime}: CPU per call of this process, each library against the raw driver`);
console.log(
  `(${batches} rounds of a batch of ${batch} calls per contestant, the order rotated; ` +
    "medians, middle half)",
);
console.log("| database | call | contestant | µs | ratio to raw | wall µs |");
console.log("|---|---|---|---|---|---|");
for (const open of [() => sqlite(), () => sqlite("NORMAL"), postgres, mariadb]) {
  const bench = await open();
  if (bench === undefined) continue;
  try {
    for (const [call, contestants] of Object.entries(bench.calls)) {
      const names = Object.keys(contestants);
      // Warm every path: the first calls compile and fill the pools.
      for (let i = 0; i < batch; i++) {
        for (const name of names) await contestants[name](i);
      }
      const cpu = new Map<string, number[]>(names.map((name) => [name, []]));
      const ratio = new Map<string, number[]>(names.map((name) => [name, []]));
      for (let b = 0; b < batches; b++) {
        // Rotated by one each round, reversed every other: each contestant takes each place and
        // follows different ones, so that none is always the warmer.
        const order = names.map((_, k) => names[(k + b) % names.length]);
        if (b % 2 === 1) order.reverse();
        const round = new Map<string, number>();
        for (const name of order) round.set(name, await cpuPerCall(contestants[name]));
        for (const name of names) {
          cpu.get(name)!.push(round.get(name)!);
          ratio.get(name)!.push(round.get(name)! / round.get(RAW)!);
        }
      }
      for (const name of names) {
        const [q, x] = [quartiles(cpu.get(name)!), quartiles(ratio.get(name)!)];
        const shown = name === RAW
          ? "1"
          : `${x.median.toFixed(3)}x (${x.low.toFixed(3)}-${x.high.toFixed(3)})`;
        console.log(
          `| ${bench.name} | ${call} | ${name} | ${q.median.toFixed(1)} | ${shown} | ` +
            `${quartiles(wall.get(contestants[name])!).median.toFixed(1)} |`,
        );
      }
    }
  } finally {
    await bench.close();
  }
}
process.exit(0);
