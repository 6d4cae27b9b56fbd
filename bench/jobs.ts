/**
 * What Thaw's jobs cost, against pg-boss on PostgreSQL and BullMQ on Redis doing the same work, on
 * the runtime that runs this file, with the test databases started (`tools/databases.sh start`)
 * and redis-server installed:
 *
 *   deno run -A bench/jobs.ts [--jobs 2000] [--rounds 3] [--batch 200]
 *   bun bench/jobs.ts
 *   node --import tsx bench/jobs.ts   (pg-boss needs Node 22.12 or later)
 *
 * Two figures per store:
 *
 * - jobs per second: `--jobs` jobs enqueued (in batches of 500) to a worker of 8 runs at once in
 *   this process, each run a no-op; timed from the first enqueue to the last run's end. Thaw
 *   on SQLite (a file), PostgreSQL and MariaDB; pg-boss (`work`, localConcurrency 8, batchSize
 *   100: it waits its polling interval, 0.5 s at least, after each fetch) on PostgreSQL; BullMQ
 *   (`Worker`, concurrency 8) on a redis-server this file starts; Thaw on SQS (ElasticMQ, with
 *   `--sqs`: `tools/elasticmq.sh start` first), the enqueues 10 at a time (one SQS call each).
 * - what an enqueue adds to a transaction: a transaction inserting one row of the app's (the
 *   baseline) against the same transaction that also enqueues a job, in µs of wall time. Thaw's
 *   enqueue is part of the transaction; pg-boss's `send` is given the transaction's connection
 *   (`db`); BullMQ cannot join a database transaction, so its `add` follows the commit (the dual
 *   write the others avoid); nor can SQS: Thaw's SQS enqueue follows the commit too.
 *
 * Each figure is the median of `--rounds` rounds (the enqueue figure of `--batch` transactions a
 * round, baseline and enqueue in turn, with the transaction's time with the enqueue over its time
 * without); the jobs per second are also given as a ratio to Thaw on PostgreSQL of the same run.
 *
 * @module
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import pg from "pg";
import { Queue, Worker } from "bullmq";
import { bootstrap, Service } from "../mod.ts";
import { data, SqlClient } from "../data.ts";
import { JobHandler, JobQueue, jobs } from "../jobs.ts";
import { jobTableStatements } from "../src/sql/job_statements.ts";
import { RedisServer } from "../tests/cache/redis_server.ts";
import { Deferred } from "../src/runtime/deferred.ts";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "2000" },
    rounds: { type: "string", default: "3" },
    batch: { type: "string", default: "200" },
    sqs: { type: "boolean", default: false },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const BATCH = Number(values.batch);
if (![JOBS, ROUNDS, BATCH].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error("jobs.ts: --jobs, --rounds and --batch must be whole numbers of at least 1");
  process.exit(2);
}
const CONCURRENCY = 8;
const USER = "thaw";
const PASSWORD = process.env.THAW_TEST_DB_PASSWORD ?? "thaw-secret";
const POSTGRES = process.env.POSTGRES_URL ?? "postgres://127.0.0.1:54329/thaw";
const MARIADB = process.env.MARIADB_URL ?? "mysql://127.0.0.1:33069/thaw";
const quiet = { error: () => {}, info: () => {} };
const runtime = "Deno" in globalThis
  ? "Deno"
  : "Bun" in globalThis
  ? "Bun"
  : `Node ${process.version}`;
const withSqlite = !process.version.startsWith("v20") || "Deno" in globalThis ||
  "Bun" in globalThis;
const withPgBoss = "Deno" in globalThis || "Bun" in globalThis ||
  Number(process.version.slice(1).split(".")[0]) >= 23 ||
  /^v22\.(1[2-9]|[2-9]\d)/.test(process.version);

// The runs of the handler, and what resolves once the expected number ended.
class Runs {
  count = 0;
  target = Infinity;
  done = new Deferred<void>();
  expect(n: number): Promise<void> {
    this.count = 0;
    this.target = n;
    this.done = new Deferred<void>();
    return this.done.promise;
  }
  ran(): void {
    if (++this.count === this.target) this.done.resolve();
  }
}
const runs = new Runs();

@Service()
class Work {
  @JobHandler("bench", { concurrency: CONCURRENCY })
  run(): void {
    runs.ran();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Figures {
  readonly perSecond: number;
  /** What an enqueue adds to the transaction, in µs, and the transaction's time with it / without. */
  readonly addedUs: number;
  readonly slower: number;
}

// Times `batch` calls of `fn`, in µs per call.
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < BATCH; i++) await fn();
  return (performance.now() - start) * 1000 / BATCH;
}

// What the enqueue adds to a transaction: the medians over the rounds of (with - without) and of
// (with / without), a round timing a batch of each, in turn.
async function added(
  plain: () => Promise<unknown>,
  withJob: () => Promise<unknown>,
): Promise<Pick<Figures, "addedUs" | "slower">> {
  await timed(plain);
  await timed(withJob);
  const diffs: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const base = await timed(plain);
    const with_ = await timed(withJob);
    diffs.push(with_ - base);
    ratios.push(with_ / base);
  }
  return { addedUs: median(diffs), slower: median(ratios) };
}

async function thaw(url: string, extra: Record<string, unknown>): Promise<Figures> {
  const app = await bootstrap({
    config: {
      datasource: [{ name: "main", url, ...extra, pool: { "max-size": CONCURRENCY + 2 } }],
      jobs: { retention: 0 },
    },
    components: [Work],
    data: data(),
    jobs: jobs(),
    logger: quiet,
  });
  try {
    const sql = app.getBean(SqlClient);
    for (const text of jobTableStatements(sql.kind)) await sql.unsafe(text);
    await sql.unsafe("CREATE TABLE bench_orders (id INTEGER PRIMARY KEY, v VARCHAR(10))");
    const queue = app.getBean(JobQueue);
    let id = 0;
    const plain = () =>
      sql.transaction(() => sql.execute`INSERT INTO bench_orders VALUES (${id++}, ${"v"})`);
    const withJob = () =>
      sql.transaction(async () => {
        await sql.execute`INSERT INTO bench_orders VALUES (${id++}, ${"v"})`;
        await queue.enqueue("other", { id });
      });
    const enqueue = await added(plain, withJob);
    const rates: number[] = [];
    app.start();
    for (let round = 0; round < ROUNDS; round++) {
      // Enqueued before they are counted: the worker takes them as they commit.
      const ran = runs.expect(JOBS);
      const start = performance.now();
      for (let from = 0; from < JOBS; from += 500) {
        await sql.transaction(async () => {
          for (let n = from; n < Math.min(JOBS, from + 500); n++) {
            await queue.enqueue("bench", { n });
          }
        });
      }
      await ran;
      rates.push(JOBS / ((performance.now() - start) / 1000));
    }
    return { perSecond: median(rates), ...enqueue };
  } finally {
    await app.close();
  }
}

async function pgBoss(url: string): Promise<Figures> {
  const { PgBoss } = await import("pg-boss");
  const boss = new PgBoss({ connectionString: url, max: CONCURRENCY + 2 });
  boss.on("error", () => {});
  await boss.start();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await boss.createQueue("bench");
    await boss.createQueue("other");
    await client.query("CREATE TABLE bench_orders (id INTEGER PRIMARY KEY, v VARCHAR(10))");
    let id = 0;
    const db = { executeSql: (text: string, values?: unknown[]) => client.query(text, values) };
    const plain = async () => {
      await client.query("BEGIN");
      await client.query("INSERT INTO bench_orders VALUES ($1, $2)", [id++, "v"]);
      await client.query("COMMIT");
    };
    const withJob = async () => {
      await client.query("BEGIN");
      await client.query("INSERT INTO bench_orders VALUES ($1, $2)", [id++, "v"]);
      await boss.send("other", { id }, { db });
      await client.query("COMMIT");
    };
    const enqueue = await added(plain, withJob);
    await boss.work(
      "bench",
      // Its fastest: pg-boss waits a polling interval after each fetch, so it fetches many.
      { batchSize: 100, localConcurrency: CONCURRENCY, pollingIntervalSeconds: 0.5 },
      (batch) => {
        for (const _ of batch) runs.ran();
        return Promise.resolve();
      },
    );
    const rates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ran = runs.expect(JOBS);
      const start = performance.now();
      const jobs = Array.from({ length: JOBS }, (_, n) => ({ data: { n } }));
      for (let from = 0; from < JOBS; from += 500) {
        await boss.insert("bench", jobs.slice(from, from + 500));
      }
      await ran;
      rates.push(JOBS / ((performance.now() - start) / 1000));
    }
    return { perSecond: median(rates), ...enqueue };
  } finally {
    await client.end();
    await boss.stop({ graceful: false });
  }
}

async function bullMq(postgres: string): Promise<Figures> {
  // The test suite's redis-server, started as its tests start it (and refused as they refuse it).
  const server = await RedisServer.start();
  const port = server.port;
  const connection = { host: "127.0.0.1", port, maxRetriesPerRequest: null };
  const queue = new Queue("bench", { connection });
  const other = new Queue("other", { connection });
  const client = new pg.Client({ connectionString: postgres });
  await client.connect();
  let worker: Worker | undefined;
  try {
    await queue.waitUntilReady();
    await client.query("CREATE TABLE bench_orders_bull (id INTEGER PRIMARY KEY, v VARCHAR(10))");
    let id = 0;
    const plain = async () => {
      await client.query("BEGIN");
      await client.query("INSERT INTO bench_orders_bull VALUES ($1, $2)", [id++, "v"]);
      await client.query("COMMIT");
    };
    const withJob = async () => {
      await plain();
      await other.add("other", { id }, { removeOnComplete: true });
    };
    const enqueue = await added(plain, withJob);
    worker = new Worker("bench", () => Promise.resolve(runs.ran()), {
      connection,
      concurrency: CONCURRENCY,
    });
    await worker.waitUntilReady();
    const rates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ran = runs.expect(JOBS);
      const start = performance.now();
      for (let from = 0; from < JOBS; from += 500) {
        await queue.addBulk(
          Array.from({ length: Math.min(500, JOBS - from) }, (_, i) => ({
            name: "bench",
            data: { n: from + i },
            opts: { removeOnComplete: true },
          })),
        );
      }
      await ran;
      rates.push(JOBS / ((performance.now() - start) / 1000));
    }
    return { perSecond: median(rates), ...enqueue };
  } finally {
    await client.query("DROP TABLE IF EXISTS bench_orders_bull").catch(() => {});
    await client.end();
    await worker?.close();
    await queue.close();
    await other.close();
    await server.kill();
  }
}

// Thaw on SQS (ElasticMQ on its test port), queues of this run's own; the enqueue's cost measured
// after a PostgreSQL transaction, as BullMQ's.
async function thawSqs(postgres: string): Promise<Figures> {
  const suffix = `${process.pid}-${Date.now()}`;
  @Service()
  class SqsWork {
    @JobHandler(`bench-${suffix}`, { concurrency: CONCURRENCY })
    run(): void {
      runs.ran();
    }
  }
  const app = await bootstrap({
    config: {
      jobs: {
        store: "sqs",
        sqs: {
          endpoint: "http://127.0.0.1:9324",
          region: "us-east-1",
          "access-key-id": "bench",
          "secret-access-key": "bench",
        },
      },
    },
    components: [SqsWork],
    jobs: jobs(),
    logger: quiet,
  });
  const client = new pg.Client({ connectionString: postgres });
  await client.connect();
  try {
    const queue = app.getBean(JobQueue);
    await client.query("CREATE TABLE bench_orders_sqs (id INTEGER PRIMARY KEY, v VARCHAR(10))");
    let id = 0;
    const plain = async () => {
      await client.query("BEGIN");
      await client.query("INSERT INTO bench_orders_sqs VALUES ($1, $2)", [id++, "v"]);
      await client.query("COMMIT");
    };
    const withJob = async () => {
      await plain();
      await queue.enqueue(`other-${suffix}`, { id });
    };
    const enqueue = await added(plain, withJob);
    app.start();
    const rates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ran = runs.expect(JOBS);
      const start = performance.now();
      for (let from = 0; from < JOBS; from += 10) {
        await Promise.all(
          Array.from(
            { length: Math.min(10, JOBS - from) },
            (_, i) => queue.enqueue(`bench-${suffix}`, { n: from + i }),
          ),
        );
      }
      await ran;
      rates.push(JOBS / ((performance.now() - start) / 1000));
    }
    return { perSecond: median(rates), ...enqueue };
  } finally {
    await client.query("DROP TABLE IF EXISTS bench_orders_sqs").catch(() => {});
    await client.end();
    await app.close();
  }
}

// A database of its own on the server of `url`, dropped by the returned function.
async function ownDatabase(
  url: string,
  kind: "postgres" | "mysql",
): Promise<[string, () => Promise<void>]> {
  const name = `thaw_bench_jobs_${process.pid}_${Date.now()}`;
  const server = new URL(url);
  if (kind === "postgres") {
    const admin = new pg.Client({
      host: server.hostname,
      port: Number(server.port),
      database: server.pathname.slice(1),
      user: USER,
      password: PASSWORD,
    });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const own = new URL(url);
    own.pathname = `/${name}`;
    return [own.href, async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }];
  }
  const mysql = await import("mysql2/promise");
  const admin = await mysql.createConnection({
    host: server.hostname,
    port: Number(server.port),
    user: USER,
    password: PASSWORD,
  });
  await admin.query(`CREATE DATABASE ${name}`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return [own.href, async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.end();
  }];
}

console.log(
  `jobs, ${runtime}: ${JOBS} no-op jobs, ${CONCURRENCY} runs at once, median of ${ROUNDS} ` +
    `rounds; an enqueue in a transaction, ${BATCH} transactions a round`,
);
const results: [string, Figures][] = [];
const credentials = { username: USER, password: PASSWORD };
if (withSqlite) {
  const file = join(await mkdtemp(join(tmpdir(), "thaw-bench-jobs-")), "bench.db");
  results.push(["Thaw, SQLite", await thaw(`sqlite:${file}`, {})]);
}
{
  const [url, drop] = await ownDatabase(POSTGRES, "postgres");
  try {
    results.push(["Thaw, PostgreSQL", await thaw(url, credentials)]);
  } finally {
    await drop();
  }
}
{
  const [url, drop] = await ownDatabase(MARIADB, "mysql");
  try {
    results.push(["Thaw, MariaDB", await thaw(url, credentials)]);
  } finally {
    await drop();
  }
}
{
  const [url, drop] = await ownDatabase(POSTGRES, "postgres");
  const withUser = new URL(url);
  withUser.username = USER;
  withUser.password = PASSWORD;
  try {
    if (withPgBoss) results.push(["pg-boss, PostgreSQL", await pgBoss(withUser.href)]);
    results.push(["BullMQ, Redis", await bullMq(withUser.href)]);
    if (values.sqs) results.push(["Thaw, SQS (ElasticMQ)", await thawSqs(withUser.href)]);
  } finally {
    await drop();
  }
}
const reference = results.find(([name]) => name === "Thaw, PostgreSQL")![1];
for (const [name, { perSecond, addedUs, slower }] of results) {
  console.log(
    `${name.padEnd(22)} ${perSecond.toFixed(0).padStart(7)} jobs/s (${
      (perSecond / reference.perSecond).toFixed(2)
    }x Thaw on PostgreSQL)  an enqueue adds ${addedUs.toFixed(0).padStart(5)} µs to a ` +
      `transaction (${slower.toFixed(2)}x its time)`,
  );
}
process.exit(0);
