// integration test: PostgreSQL and MariaDB (tools/databases.sh start) and the Kafka broker (tools/kafka.sh start)
// The test of the outbox: 1,000 transactions, about half rolled back, written by a process
// of the runtime running the suite that relays as it writes, killed (SIGKILL) at random points
// and started again until it is done. Exactly the committed transactions are delivered, each at
// least once, in order per key. The kills wait on the writer's progress, not on time.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { describe, it } from "node:test";
import { SqlClient } from "../../../src/data/sql_client.ts";
import { scriptCommand } from "../../runtime.ts";
import { testPools } from "../../sql/pools.ts";
import { createTopic, readTopic, uniqueName } from "../broker.ts";
import { createOutboxTable, topicSize } from "./outbox_support.ts";
import { rolledBackInPlan } from "./kill_plan.ts";

const WRITER = fileURLToPath(new URL("../../fixtures/kafka/outbox_writer.ts", import.meta.url));
const COUNT = 1_000;
const KILLS = 4;
const PARTITIONS = 3;

/**
 * Runs the writer until it prints `c <i>` with `i` at least `killAt` (then kills it with SIGKILL)
 * or `done`; resolves with whether it finished.
 */
function runWriter(env: Record<string, string>, killAt: number): Promise<boolean> {
  const [command, args] = scriptCommand(WRITER);
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr.on("data", (chunk) => errors = (errors + chunk).slice(-4000));
  let finished = false;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line === "done") finished = true;
    else if (Number(line.slice(2)) >= killAt) child.kill("SIGKILL");
  });
  return new Promise((resolve, reject) => {
    child.on("exit", (code, signal) => {
      if (finished) resolve(true);
      else if (signal === "SIGKILL") resolve(false);
      else reject(new Error(`the writer exited with ${code ?? signal}: ${errors}`));
    });
  });
}

for (const kind of ["postgres", "mysql"] as const) {
  describe(`Outbox killed at random points, on ${kind}`, () => {
    const open = testPools();

    it("delivers exactly the committed transactions, each at least once, in order per key", async () => {
      const { pool, datasource } = await open(kind);
      const sql = new SqlClient(pool);
      await createOutboxTable(sql);
      await sql.unsafe("CREATE TABLE ledger (i INTEGER PRIMARY KEY)");
      const topic = uniqueName("outbox-kill");
      await createTopic(topic, PARTITIONS);
      const env = {
        OUTBOX_DATASOURCE: JSON.stringify(datasource),
        OUTBOX_TOPIC: topic,
        OUTBOX_COUNT: String(COUNT),
      };
      // The kill points from a seed printed on failure (FC_SEED replays them).
      const seed = Number(process.env.FC_SEED ?? 1 + Date.now() % 100_000);
      let state = seed;
      const random = () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
      const killPoints = Array.from({ length: KILLS }, () => Math.floor(random() * COUNT))
        .sort((a, b) => a - b);
      let runs = 0;
      let done = false;
      // What each kill left unsent: rows committed and not (or not known to be) sent.
      const leftUnsent: number[] = [];
      for (const at of [...killPoints, Infinity]) {
        runs++;
        // A kill point behind where the writer is now kills it at its first commit.
        done = await runWriter(env, at);
        if (done) break;
        const [{ n }] = (await sql.unsafe<{ n: unknown }>(
          "SELECT COUNT(*) AS n FROM thaw_outbox WHERE sent_at IS NULL",
        )).rows;
        leftUnsent.push(Number(n));
      }
      while (!done) {
        done = await runWriter(env, Infinity);
        runs++;
      }
      assert.ok(runs > 1, `the writer was never killed (kills at ${killPoints.join(", ")})`);
      const committed = (await sql.unsafe<{ i: number }>("SELECT i FROM ledger ORDER BY i")).rows
        .map((row) => Number(row.i));
      const expected = Array.from({ length: COUNT }, (_, i) => i).filter((i) =>
        !rolledBackInPlan(i)
      );
      assert.deepEqual(committed, expected, `seed ${seed}`);
      const read = await readTopic(topic, await topicSize(topic, PARTITIONS));
      for (let k = 0; k < 7; k++) {
        const values = read.filter((r) => r.key === `k${k}`).map((r) => Number(r.value));
        // At least once: a record sent but not marked before a kill may come again. The first
        // time each came is the committed order of its key.
        assert.deepEqual(
          [...new Set(values)],
          expected.filter((i) => i % 7 === k),
          `key k${k}, seed ${seed}, kills at ${killPoints.join(", ")} left ` +
            `${leftUnsent.join(", ")} rows unsent, ${runs} runs`,
        );
      }
    });
  });
}
