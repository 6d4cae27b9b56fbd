/**
 * What the outbox costs a transaction, on the runtime that runs this file, with the test
 * databases started (`tools/databases.sh start`):
 *
 *   deno run -A bench/kafka_outbox.ts [--batches 20] [--batch 300]
 *
 * On SQLite (a file, the pool's WAL) and PostgreSQL: a transaction that inserts one row of the
 * app's (the baseline), against the same transaction that also writes one record (a key, a
 * 200-byte value, two headers) through `Outbox.write`, as `KafkaTemplate.send` does inside a
 * transaction. The relay is not started: its sends run after the commit, off the caller's path.
 * Each round runs a batch of each, the order swapped every round; reported: the medians of the
 * wall time and of this process's CPU time (`process.cpuUsage()`) per transaction, and of the
 * ratio to the baseline's batch of the same round.
 *
 * @module
 */
import process from "node:process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { bootstrap } from "../mod.ts";
import { data, SqlClient } from "../data.ts";
import { innermostTransaction } from "../src/data/transaction_scope.ts";
import { Outbox } from "../src/kafka/outbox/outbox.ts";
import { outboxTableStatements } from "../src/kafka/outbox/outbox_table.ts";
import { SqlLockManager } from "../src/tasks/sql_lock_manager.ts";
import type { OutgoingRecord } from "../src/kafka/outgoing_record.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "20" },
    batch: { type: "string", default: "300" },
  },
});
const batches = Number(values.batches);
const batch = Number(values.batch);
if (!Number.isInteger(batches) || batches < 2 || !Number.isInteger(batch) || batch < 2) {
  console.error("kafka_outbox.ts: --batches and --batch must be whole numbers of at least 2");
  process.exit(2);
}

const USER = "thaw";
const PASSWORD = process.env.THAW_TEST_DB_PASSWORD ?? "thaw-secret";
const POSTGRES = process.env.POSTGRES_URL ?? "postgres://127.0.0.1:54329/thaw";
const DATABASE = `thaw_bench_outbox_${process.pid}_${Date.now()}`;
const quiet = { error: () => {}, info: () => {} };
const encoder = new TextEncoder();
const record: OutgoingRecord = {
  topic: "orders",
  key: encoder.encode("order-42"),
  value: encoder.encode(JSON.stringify({ id: 42, note: "x".repeat(180) })),
  headers: [["traceparent", encoder.encode("00-".padEnd(55, "0"))], [
    "kind",
    encoder.encode("created"),
  ]],
  partition: undefined,
};

async function measure(name: string, sql: SqlClient): Promise<void> {
  await sql.unsafe("CREATE TABLE bench_orders (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  for (const text of outboxTableStatements(sql.kind, "thaw_outbox")) await sql.unsafe(text);
  await sql.unsafe(SqlLockManager.createTable(sql.kind, "thaw_outbox_lock"));
  const outbox = new Outbox(sql, { send: () => Promise.reject(new Error("not started")) });
  let id = 0;
  const plain = () =>
    sql.transaction(() => sql.execute`INSERT INTO bench_orders VALUES (${id++}, ${"v"})`);
  const withOutbox = () =>
    sql.transaction(async () => {
      await sql.execute`INSERT INTO bench_orders VALUES (${id++}, ${"v"})`;
      await outbox.write(innermostTransaction()!, record);
    });
  const run = async (fn: () => Promise<unknown>) => {
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < batch; i++) await fn();
    const wall = (performance.now() - start) * 1000 / batch;
    const used = process.cpuUsage(cpu);
    return { wall, cpu: (used.user + used.system) / batch };
  };
  // A warm-up batch of each, not counted.
  await run(plain);
  await run(withOutbox);
  const rows: { base: { wall: number; cpu: number }; out: { wall: number; cpu: number } }[] = [];
  for (let round = 0; round < batches; round++) {
    if (round % 2 === 0) {
      const base = await run(plain);
      rows.push({ base, out: await run(withOutbox) });
    } else {
      const out = await run(withOutbox);
      rows.push({ base: await run(plain), out });
    }
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const f = (n: number) => n.toFixed(0).padStart(6);
  const r = (n: number) => n.toFixed(2);
  console.log(
    `${name.padEnd(10)} baseline ${f(median(rows.map((x) => x.base.wall)))} µs wall ${
      f(median(rows.map((x) => x.base.cpu)))
    } µs CPU | with outbox ${f(median(rows.map((x) => x.out.wall)))} µs wall ${
      f(median(rows.map((x) => x.out.cpu)))
    } µs CPU | ratio wall ${r(median(rows.map((x) => x.out.wall / x.base.wall)))} CPU ${
      r(median(rows.map((x) => x.out.cpu / x.base.cpu)))
    }`,
  );
}

const runtime = "Deno" in globalThis
  ? "Deno"
  : "Bun" in globalThis
  ? "Bun"
  : `Node ${process.version}`;
console.log(`outbox write per transaction, ${runtime}, ${batches} rounds of ${batch}`);

if (!process.version.startsWith("v20") || "Deno" in globalThis || "Bun" in globalThis) {
  const file = join(await mkdtemp(join(tmpdir(), "thaw-bench-outbox-")), "bench.db");
  const app = await bootstrap({
    config: { datasource: [{ name: "main", url: `sqlite:${file}` }] },
    data: data(),
    logger: quiet,
  });
  await measure("SQLite", app.getBean(SqlClient));
  await app.close();
}

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
try {
  const own = new URL(POSTGRES);
  own.pathname = `/${DATABASE}`;
  const app = await bootstrap({
    config: { datasource: [{ name: "main", url: own.href, username: USER, password: PASSWORD }] },
    data: data(),
    logger: quiet,
  });
  await measure("PostgreSQL", app.getBean(SqlClient));
  await app.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.end();
}
