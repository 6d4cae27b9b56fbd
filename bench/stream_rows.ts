/**
 * Heap growth of reading 1,000,000 rows through `sql.stream` against `sql.query`, on each
 * database this runtime reaches, in the same run (the test databases started first:
 * `bash tools/databases.sh start`):
 *
 *   deno run -A --v8-flags=--expose-gc bench/stream_rows.ts [--rows 1000000]
 *   bun bench/stream_rows.ts
 *   node --expose-gc --import tsx bench/stream_rows.ts
 *
 * The rows are made by the statement (a number and a short text each), so no table is filled.
 * Two figures against `heapUsed` after a garbage collection before the call: the peak, the
 * highest `heapUsed` seen while the rows are read (every 10,000 rows of a stream; for `query`, with
 * its array of rows held), garbage not yet collected included; and the live heap, `heapUsed`
 * after a garbage collection half-way through the rows (for `query`, with its array held), what
 * the reading keeps. Not a test: it prints figures.
 *
 * @module
 */
import process from "node:process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrap } from "../mod.ts";
import { data, SqlClient } from "../data.ts";

const { values } = parseArgs({ options: { rows: { type: "string", default: "1000000" } } });
const ROWS = Number(values.rows);
if (!Number.isInteger(ROWS) || ROWS < 10_000) {
  console.error("stream_rows.ts: --rows must be a whole number of at least 10000");
  process.exit(2);
}
const USER = "thaw";
const PASSWORD = process.env.THAW_TEST_DB_PASSWORD ?? "thaw-secret";
const POSTGRES = process.env.POSTGRES_URL ?? "postgres://127.0.0.1:54329/thaw";
const MARIADB = process.env.MARIADB_URL ?? "mysql://127.0.0.1:33069/thaw";
const RUNTIME = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const MB = 1024 * 1024;

function collect(): void {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun !== undefined) return bun.gc(true);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) {
    throw new Error("run with --expose-gc (Node) or --v8-flags=--expose-gc (Deno)");
  }
  gc();
}

function heap(): number {
  return process.memoryUsage().heapUsed;
}

type Row = { n: number; label: string };

/** The statement giving `ROWS` rows on `sql`'s database. */
function rows(sql: SqlClient, how: "stream" | "query"): AsyncIterable<Row> | Promise<Row[]> {
  const tag = how === "stream" ? sql.stream.bind(sql) : sql.query.bind(sql);
  switch (sql.kind) {
    case "postgres":
      return tag<Row>`SELECT n, 'row number ' || n AS label FROM generate_series(1, ${ROWS}) AS n`;
    case "mysql":
      return tag<Row>`SELECT seq AS n, CONCAT('row number ', seq) AS label FROM ${
        SqlClient.identifier(`seq_1_to_${ROWS}`)
      }`;
    case "sqlite":
      return tag<Row>`
        WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ${ROWS})
        SELECT n, 'row number ' || n AS label FROM r`;
  }
}

interface Growth {
  /** Bytes: the peak, and what stays after a collection half-way. */
  readonly peak: number;
  readonly live: number;
  readonly rows: number;
}

async function measure(sql: SqlClient, how: "stream" | "query"): Promise<Growth> {
  collect();
  const before = heap();
  let peak = before;
  let live = 0;
  let count = 0;
  if (how === "stream") {
    for await (const row of rows(sql, how) as AsyncIterable<Row>) {
      if (row.n > 0) count++;
      if (count % 10_000 === 0) peak = Math.max(peak, heap());
      if (count === ROWS / 2) {
        collect();
        live = heap() - before;
      }
    }
  } else {
    const all = await (rows(sql, how) as Promise<Row[]>);
    peak = Math.max(peak, heap());
    for (const row of all) if (row.n > 0) count++;
    collect();
    live = heap() - before;
  }
  return { peak: peak - before, live, rows: count };
}

const mb = (bytes: number) => `${bytes >= 0 ? "+" : ""}${(bytes / MB).toFixed(1)} MB`;

async function run(name: string, entry: Record<string, unknown>): Promise<void> {
  const app = await bootstrap({
    config: { datasource: [{ name: "main", ...entry }] },
    data: data(),
    logger: { error: () => {}, info: () => {} },
  });
  try {
    const sql = app.getBean(SqlClient);
    // Warmed: the driver's modules and first connection are no part of either figure.
    for await (const _ of sql.stream`SELECT 1 AS one`) { /* warm */ }
    await sql.query`SELECT 1 AS one`;
    const streamed = await measure(sql, "stream");
    const queried = await measure(sql, "query");
    if (streamed.rows !== ROWS || queried.rows !== ROWS) {
      throw new Error(`${name}: read ${streamed.rows} and ${queried.rows} rows of ${ROWS}`);
    }
    console.log(
      `${RUNTIME.padEnd(5)} ${name.padEnd(9)} ${ROWS.toLocaleString("en")} rows: ` +
        `stream peak ${mb(streamed.peak)}, live ${mb(streamed.live)}; ` +
        `query peak ${mb(queried.peak)}, live ${mb(queried.live)}`,
    );
  } finally {
    await app.close();
  }
}

let sqliteAvailable = true;
try {
  if (!("Bun" in globalThis)) await import("node:sqlite");
} catch {
  sqliteAvailable = false;
}
if (sqliteAvailable) {
  const dir = await mkdtemp(join(tmpdir(), "thaw-bench-stream-"));
  try {
    await run("sqlite", { url: `sqlite:${join(dir, "bench.db")}` });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
await run("postgres", { url: POSTGRES, username: USER, password: PASSWORD });
await run("mariadb", { url: MARIADB, username: USER, password: PASSWORD });
