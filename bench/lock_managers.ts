/**
 * What an uncontended lock costs `@Lockable`'s lock managers across processes, on the runtime that
 * runs this file, with the test databases started (tools/databases.sh start) and redis-server
 * installed:
 *
 *   deno run -A bench/lock_managers.ts [--rounds 10] [--batch 300]
 *   bun bench/lock_managers.ts
 *   node --import tsx bench/lock_managers.ts   (SQLite on Node 22.13 and later)
 *
 * One `acquire` and `release` of one key no one else holds, through `SqlLockManager` on SQLite (a
 * file) and PostgreSQL (the `SqlClient` of `bootstrap({ data: data() })`) and `RedisLockManager`
 * (a node-redis client, a redis-server this file starts), against, in the same run and on the same
 * connection: one plain statement of the same client (`UPDATE` of one row by key to a new value;
 * Redis: one `SET`), and a plain async call. Each round runs a batch of each contestant, the order rotated;
 * reported per store: the median wall time per call in µs, and the median ratio to the plain
 * statement of the same round (a lock is two statements: SQLite and PostgreSQL write, and Redis
 * runs a script to release).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { createClient } from "redis";
import { bootstrap } from "../mod.ts";
import { data, SqlClient } from "../data.ts";
import { RedisLockManager } from "../cache-redis.ts";
import type { LockManager } from "../src/tasks/lock_manager.ts";
import { SqlLockManager } from "../src/tasks/sql_lock_manager.ts";
import { freePort } from "../tests/free_port.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "10" }, batch: { type: "string", default: "300" } },
});
const rounds = Number(values.rounds);
const batch = Number(values.batch);
const PASSWORD = process.env.THAW_TEST_DB_PASSWORD ?? "thaw-secret";
const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://127.0.0.1:54329/thaw";

type Contestant = readonly [name: string, call: () => Promise<unknown>];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(store: string, contestants: readonly Contestant[]): Promise<void> {
  const times = new Map<string, number[]>(contestants.map(([name]) => [name, []]));
  const ratios = new Map<string, number[]>(contestants.map(([name]) => [name, []]));
  for (const [, call] of contestants) for (let i = 0; i < 50; i++) await call(); // warm up
  for (let round = 0; round < rounds; round++) {
    const order = contestants.map((_, i) => contestants[(i + round) % contestants.length]!);
    const perCall = new Map<string, number>();
    for (const [name, call] of order) {
      const start = performance.now();
      for (let i = 0; i < batch; i++) await call();
      perCall.set(name, (performance.now() - start) * 1000 / batch);
    }
    const base = perCall.get("one statement")!;
    for (const [name, us] of perCall) {
      times.get(name)!.push(us);
      ratios.get(name)!.push(us / base);
    }
  }
  for (const [name] of contestants) {
    console.log(
      `${store.padEnd(11)} ${name.padEnd(16)} ${
        median(times.get(name)!).toFixed(1).padStart(9)
      } µs` +
        `  ×${median(ratios.get(name)!).toPrecision(3)} of one statement`,
    );
  }
}

function lockCall(locks: LockManager, key: string): () => Promise<void> {
  return async () => {
    const held = await locks.acquire({ key, waitMs: 0, leaseMs: 60_000 });
    if (held === undefined) throw new Error(`${key} is held: the bench runs alone`);
    await held.release();
  };
}

const plain = async () => {};

async function sqlStore(store: string, datasource: Record<string, unknown>): Promise<void> {
  const app = await bootstrap({ config: { datasource: [datasource] }, data: data() });
  const sql = app.getBean(SqlClient);
  const table = `bench_locks_${crypto.randomUUID().slice(0, 8)}`;
  try {
    await sql.unsafe(SqlLockManager.createTable(sql.kind, table));
    await sql.unsafe(`INSERT INTO ${table} VALUES ('plain', '2000-01-01', '2000-01-01', 'bench')`);
    const locks = new SqlLockManager(sql, { table });
    let written = 0;
    const statement = sql.kind === "postgres"
      ? `UPDATE ${table} SET locked_by = $1 WHERE name = 'plain'`
      : `UPDATE ${table} SET locked_by = ? WHERE name = 'plain'`;
    await measure(store, [
      // A value of its own each time: a write that changes nothing is not written at all.
      ["one statement", () => sql.unsafe(statement, [`bench ${written++}`])],
      ["acquire+release", lockCall(locks, "bench-key")],
      ["plain call", plain],
    ]);
  } finally {
    await sql.unsafe(`DROP TABLE ${table}`).catch(() => {});
    await app.close();
  }
}

async function redisStore(): Promise<void> {
  const port = await freePort();
  const server: ChildProcess = spawn("redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
  ], { stdio: "ignore" });
  const client = createClient({ url: `redis://127.0.0.1:${port}`, RESP: 2 });
  client.on("error", () => {});
  try {
    for (let tries = 0;; tries++) {
      try {
        await client.connect();
        break;
      } catch (error) {
        if (tries > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const locks = new RedisLockManager(client);
    let written = 0;
    await measure("Redis", [
      ["one statement", () => client.sendCommand(["SET", "plain", `bench ${written++}`])],
      ["acquire+release", lockCall(locks, "bench-key")],
      ["plain call", plain],
    ]);
  } finally {
    client.destroy();
    server.kill("SIGKILL");
  }
}

console.log(`lock managers, ${rounds} rounds of ${batch} calls, uncontended, on ${runtime()}`);
// Node before 22.13 has no built-in SQLite: the other stores are measured all the same.
if (await import("node:sqlite").then(() => true, () => false)) {
  const dir = await mkdtemp(join(tmpdir(), "thaw-bench-locks-"));
  try {
    await sqlStore("SQLite", { name: "main", url: `sqlite:${join(dir, "locks.db")}` });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
} else console.log("SQLite      (this runtime has no node:sqlite)");
await sqlStore("PostgreSQL", {
  name: "main",
  url: POSTGRES_URL,
  username: "thaw",
  password: PASSWORD,
});
await redisStore();

function runtime(): string {
  const g = globalThis as { Deno?: { version: { deno: string } }; Bun?: { version: string } };
  if (g.Deno) return `Deno ${g.Deno.version.deno}`;
  if (g.Bun) return `Bun ${g.Bun.version}`;
  return `Node ${process.version}`;
}
