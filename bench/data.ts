/**
 * What `SqlClient` costs over the raw driver, in-process, on the runtime that runs this file
 * (`npm run bench:data` runs it on Deno, Bun and Node 26, the test databases started first):
 *
 *   deno run -A bench/data.ts [--batches 20] [--batch 400]
 *
 * Three calls on each database this runtime reaches (SQLite through the runtime's own module,
 * PostgreSQL through `pg`, MariaDB through `mysql2`): a read of one row by key, a write of one
 * row, and a transaction that reads a row and writes it back. Each is made through the
 * `SqlClient` bean of `bootstrap({ data: data() })` (`@Transactional`'s path: `sql.transaction`)
 * and through the driver as its own documentation writes it (a prepared statement for SQLite,
 * `pool.query` / `pool.execute`, a client checked out for the transaction). Batches of `batch`
 * calls of each alternate (A B, then B A); CPU time of this process from `process.cpuUsage()`
 * (the database server's is not counted). Reported per call: the medians of µs and of the ratio
 * of each pair, with the range of the middle half.
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

/** One call made two ways. */
interface Pair {
  readonly thaw: (i: number) => Promise<unknown>;
  readonly raw: (i: number) => Promise<unknown>;
}

/** A database: the three pairs, and what closes it. */
interface Bench {
  readonly name: string;
  readonly pairs: Record<"read" | "write" | "transaction", Pair>;
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
  db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  for (let i = 0; i < ROWS; i++) db.prepare("INSERT INTO items (id, v) VALUES (?, ?)").run(i, "x");
  const read = db.prepare("SELECT id, v FROM items WHERE id = ?");
  const write = db.prepare("UPDATE items SET v = ? WHERE id = ?");
  const { app, sql } = await thawClient({
    name: "main",
    url: `sqlite:${file}`,
    ...(synchronous === undefined ? {} : { pool: { sqlite: { synchronous } } }),
  });
  return {
    name: synchronous === undefined ? "SQLite" : `SQLite ${synchronous}+WAL`,
    pairs: pairs(sql, {
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

async function postgres(): Promise<Bench> {
  const url = new URL(POSTGRES);
  const pool = new pg.Pool({
    host: url.hostname,
    port: Number(url.port),
    database: url.pathname.slice(1),
    user: USER,
    password: PASSWORD,
    max: 10,
  });
  await pool.query("DROP TABLE IF EXISTS bench_items");
  await pool.query("CREATE TABLE bench_items (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  await pool.query(
    `INSERT INTO bench_items SELECT g, 'x' FROM generate_series(0, ${ROWS - 1}) AS g`,
  );
  const { app, sql } = await thawClient({
    name: "main",
    url: POSTGRES,
    username: USER,
    password: PASSWORD,
  });
  return {
    name: "PostgreSQL",
    pairs: pairs(sql, {
      read: (i) => pool.query("SELECT id, v FROM bench_items WHERE id = $1", [i % ROWS]),
      write: (i) => pool.query("UPDATE bench_items SET v = $1 WHERE id = $2", [`v${i}`, i % ROWS]),
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
    }, "bench_items"),
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

async function mariadb(): Promise<Bench> {
  const pool = mysql.createPool({
    uri: MARIADB,
    user: USER,
    password: PASSWORD,
    connectionLimit: 10,
  });
  await pool.query("DROP TABLE IF EXISTS bench_items");
  await pool.query("CREATE TABLE bench_items (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)");
  for (let i = 0; i < ROWS; i++) {
    await pool.execute("INSERT INTO bench_items VALUES (?, ?)", [i, "x"]);
  }
  const { app, sql } = await thawClient({
    name: "main",
    url: MARIADB,
    username: USER,
    password: PASSWORD,
  });
  return {
    name: "MariaDB",
    pairs: pairs(sql, {
      read: (i) => pool.execute("SELECT id, v FROM bench_items WHERE id = ?", [i % ROWS]),
      write: (i) => pool.execute("UPDATE bench_items SET v = ? WHERE id = ?", [`v${i}`, i % ROWS]),
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
    }, "bench_items"),
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

// The same three calls through the SqlClient.
function pairs(
  sql: SqlClient,
  raw: Record<"read" | "write" | "transaction", (i: number) => Promise<unknown>>,
  table = "items",
): Bench["pairs"] {
  const t = SqlClient.identifier(table);
  return {
    read: {
      raw: raw.read,
      thaw: (i) => sql.maybeOne`SELECT id, v FROM ${t} WHERE id = ${i % ROWS}`,
    },
    write: {
      raw: raw.write,
      thaw: (i) => sql.execute`UPDATE ${t} SET v = ${`v${i}`} WHERE id = ${i % ROWS}`,
    },
    transaction: {
      raw: raw.transaction,
      thaw: (i) =>
        sql.transaction(async () => {
          const row = await sql.one<{ v: string }>`SELECT v FROM ${t} WHERE id = ${i % ROWS}`;
          await sql.execute`UPDATE ${t} SET v = ${`${row.v.slice(0, 8)}!`} WHERE id = ${i % ROWS}`;
        }),
    },
  };
}

// CPU per call; and the wall time, which a sync to the disk (SQLite's synchronous) takes
// without CPU.
const wall: Map<(i: number) => Promise<unknown>, number[]> = new Map();
async function cpuPerCall(call: (i: number) => Promise<unknown>): Promise<number> {
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
console.log(`\n${runtime}: CPU per call of this process, SqlClient against the raw driver`);
console.log(`(${batches} pairs of batches of ${batch} calls, alternating; medians, middle half)`);
console.log("| database | call | raw driver µs | SqlClient µs | ratio | wall µs raw, SqlClient |");
console.log("|---|---|---|---|---|---|");
for (const open of [() => sqlite(), () => sqlite("NORMAL"), postgres, mariadb]) {
  const bench = await open();
  if (bench === undefined) continue;
  try {
    for (const [call, pair] of Object.entries(bench.pairs)) {
      // Warm both paths: the first calls compile and fill the pools.
      for (let i = 0; i < batch; i++) {
        await pair.raw(i);
        await pair.thaw(i);
      }
      const raw: number[] = [];
      const thaw: number[] = [];
      const ratio: number[] = [];
      for (let b = 0; b < batches; b++) {
        // A B, then B A: neither is always the warmer.
        let r: number, t: number;
        if (b % 2 === 0) {
          r = await cpuPerCall(pair.raw);
          t = await cpuPerCall(pair.thaw);
        } else {
          t = await cpuPerCall(pair.thaw);
          r = await cpuPerCall(pair.raw);
        }
        raw.push(r);
        thaw.push(t);
        ratio.push(t / r);
      }
      const [qr, qt, qx] = [quartiles(raw), quartiles(thaw), quartiles(ratio)];
      console.log(
        `| ${bench.name} | ${call} | ${qr.median.toFixed(1)} | ${qt.median.toFixed(1)} | ` +
          `${qx.median.toFixed(3)}x (${qx.low.toFixed(3)}-${qx.high.toFixed(3)}) | ` +
          `${quartiles(wall.get(pair.raw)!).median.toFixed(1)}, ${
            quartiles(wall.get(pair.thaw)!).median.toFixed(1)
          } |`,
      );
    }
  } finally {
    await bench.close();
  }
}
process.exit(0);
