// 10,000 jobs over three processes of one app (the runtime running the suite, four runs at a time
// each), on SQLite (a file), PostgreSQL and MariaDB, one process killed with SIGKILL mid-run: every
// job ends done, none is lost, and a job runs twice only where the killed process ran it and died
// before recording its end: the four runs it held when killed, each run again once its lease
// ended. The same with 3,000 jobs on SQS (ElasticMQ), the runs recorded on PostgreSQL: the
// killed process's runs come back once their window (a third of the lease) ended. The processes
// are tests/fixtures/jobs/worker_process.ts.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { bootstrap } from "../../mod.ts";
import { data, SqlClient } from "../../data.ts";
import { JobQueue, jobs, jobsMigration } from "../../jobs.ts";
import { watchChild, type WatchedChild } from "../child_output.ts";
import { scriptCommand } from "../runtime.ts";
import { datasourceEntries, type DatasourceEntry, KINDS } from "../sql/pools.ts";
import { waitFor } from "./job_support.ts";
import { ELASTICMQ, elasticMqClient, queueName } from "./sqs_support.ts";

const databases = datasourceEntries();
const WORKER = fileURLToPath(new URL("../fixtures/jobs/worker_process.ts", import.meta.url));
const JOBS = 10_000;
// Short, so that the killed process's jobs come back soon; long enough that no live run, which
// takes milliseconds, outlasts it on a loaded machine. On SQLite a process's thread sleeps while
// another process writes (seconds in all, as the three start together on 10,000 due jobs).
const LEASE_MS: Readonly<Record<string, number>> = {
  sqlite: 30_000,
  postgres: 10_000,
  mysql: 10_000,
};

for (const kind of KINDS) {
  describe(`jobs() on ${kind}, three processes`, () => {
    it(`runs ${JOBS} jobs, each done, through a SIGKILL of one process`, async () => {
      const { entry } = await databases(kind, "main");
      const app = await bootstrap({
        config: { datasource: [entry] },
        data: data(),
        jobs: jobs(),
      });
      const children: WatchedChild[] = [];
      try {
        const sql = app.getBean(SqlClient);
        await jobsMigration()({
          kind: sql.kind,
          query: async (text) => (await sql.unsafe(text)).rows as never,
          connection: "main",
          path: "V1__thaw_jobs.ts",
          placeholders: {},
          log: () => {},
          signal: new AbortController().signal,
        });
        await sql.unsafe(
          "CREATE TABLE runs (job VARCHAR(20), n INTEGER, attempt INTEGER, process VARCHAR(10))",
        );
        const queue = app.getBean(JobQueue);
        for (let from = 0; from < JOBS; from += 1000) {
          await sql.transaction(async () => {
            for (let n = from; n < from + 1000; n++) await queue.enqueue("work", { n });
          });
        }
        for (const name of ["p1", "p2", "p3"]) {
          const [command, args] = scriptCommand(WORKER);
          children.push(watchChild(command, args, {
            WORKER_DATASOURCE: JSON.stringify(entry),
            WORKER_NAME: name,
            WORKER_LEASE: String(LEASE_MS[kind]),
            NO_COLOR: "1",
            ...(name === "p1" ? { WORKER_HOLD: "1" } : {}),
          }));
        }
        await Promise.all(children.map((child) => child.line(/^started$/)));
        const count = async (text: string) => Number((await sql.unsafe(text)).rows[0].n);
        // p1 holds four runs, each recorded and never ended, when it is killed.
        await children[0].line(/^holding 4$/);
        children[0].child.kill("SIGKILL");
        await children[0].exited;
        await waitFor(
          "every job done",
          async () =>
            await count("SELECT COUNT(*) AS n FROM thaw_jobs WHERE state <> 'done'") === 0,
        );
        for (const child of children.slice(1)) child.child.stdin!.write("close\n");
        await Promise.all(children.slice(1).map((child) => child.line(/^closed$/)));

        assert.equal(await count("SELECT COUNT(*) AS n FROM thaw_jobs"), JOBS);
        // None lost: every payload ran.
        assert.equal(await count("SELECT COUNT(DISTINCT n) AS n FROM runs"), JOBS);
        // Doubled: the four runs p1 held when killed, and no other; each ran once more, as a
        // later attempt, in another process.
        const { rows: twice } = await sql.unsafe<{ n: unknown }>(
          "SELECT n FROM runs GROUP BY n HAVING COUNT(*) > 1",
        );
        assert.equal(twice.length, 4, `${twice.length} jobs ran twice`);
        for (const { n } of twice) {
          const { rows } = await sql.unsafe<{ attempt: unknown; process: unknown }>(
            "SELECT attempt, process FROM runs WHERE n = " + Number(n) + " ORDER BY attempt",
          );
          assert.deepEqual(rows.map((r) => r.process === "p1"), [true, false]);
          assert.ok(Number(rows[1].attempt) > Number(rows[0].attempt));
        }
        console.log(
          `${kind}: ${JOBS} jobs done, none lost, ${twice.length} ran twice (the killed ` +
            "process's runs in flight)",
        );
      } catch (error) {
        throw explained(error, children);
      } finally {
        await ended(children);
        await app.close();
      }
    });
  });
}

// Fewer than on a table: SQS's calls are one per job and run (a send, a receive's share, a
// delete), the suite's longest on a loaded CI machine; p1 holds its runs after its first 300.
const SQS_JOBS = 3000;

const SQS = {
  endpoint: ELASTICMQ,
  region: "us-east-1",
  "access-key-id": "thaw-test",
  "secret-access-key": "thaw-test",
};

describe("jobs() on SQS (ElasticMQ), three processes", () => {
  it(`runs ${SQS_JOBS} jobs, each once but the killed process's, through a SIGKILL`, async () => {
    const name = queueName("work");
    const { entry } = await databases("postgres", "main");
    const app = await bootstrap({
      config: { datasource: [entry], jobs: { store: "sqs", sqs: SQS } },
      data: data(),
      jobs: jobs(),
    });
    const raw = elasticMqClient();
    const children: WatchedChild[] = [];
    try {
      const sql = app.getBean(SqlClient);
      await sql.unsafe(
        "CREATE TABLE runs (job VARCHAR(40), n INTEGER, attempt INTEGER, process VARCHAR(10))",
      );
      const queue = app.getBean(JobQueue);
      for (let from = 0; from < SQS_JOBS; from += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => queue.enqueue(name, { n: from + i })),
        );
      }
      children.push(...startWorkers(entry, name));
      await Promise.all(children.map((child) => child.line(/^started$/)));
      const count = async (text: string) => Number((await sql.unsafe(text)).rows[0].n);
      await children[0].line(/^holding 4$/);
      children[0].child.kill("SIGKILL");
      await children[0].exited;
      const { QueueUrl } = await raw.send(new CreateQueueCommand({ QueueName: name }));
      await waitFor("every job run, and no message left", async () => {
        if (await count("SELECT COUNT(DISTINCT n) AS n FROM runs") < SQS_JOBS) return false;
        const { Attributes = {} } = await raw.send(
          new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }),
        );
        return Attributes.ApproximateNumberOfMessages === "0" &&
          Attributes.ApproximateNumberOfMessagesNotVisible === "0";
      });
      for (const child of children.slice(1)) child.child.stdin!.write("close\n");
      await Promise.all(children.slice(1).map((child) => child.line(/^closed$/)));
      const { rows: twice } = await sql.unsafe<{ n: unknown }>(
        "SELECT n FROM runs GROUP BY n HAVING COUNT(*) > 1",
      );
      assert.equal(twice.length, 4, `${twice.length} jobs ran twice`);
      for (const { n } of twice) {
        const { rows } = await sql.unsafe<{ attempt: unknown; process: unknown }>(
          "SELECT attempt, process FROM runs WHERE n = " + Number(n) + " ORDER BY attempt",
        );
        assert.deepEqual(rows.map((r) => r.process === "p1"), [true, false]);
        assert.deepEqual(rows.map((r) => Number(r.attempt)), [1, 2]);
      }
      console.log(
        `sqs: ${SQS_JOBS} jobs run, none lost, ${twice.length} ran twice (the killed process's ` +
          "runs in flight)",
      );
    } catch (error) {
      throw explained(error, children);
    } finally {
      await ended(children);
      raw.destroy();
      await app.close();
    }
  });
});

// `error` with the end of what each process said: what tells why.
function explained(error: unknown, children: readonly WatchedChild[]): Error {
  const said = children.map((c, i) => `p${i + 1}: ${c.stderr().slice(-3000)}`).join("\n");
  return new Error(`${(error as Error).message}\n${said}`, { cause: error });
}

// Kills the processes still running, and waits until each one exited.
async function ended(children: readonly WatchedChild[]): Promise<void> {
  for (const child of children) {
    if (child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill("SIGKILL");
    }
    await child.exited;
  }
}

// The three worker processes on SQS, p1 holding its runs after its first 300.
function startWorkers(entry: DatasourceEntry["entry"], queue: string): WatchedChild[] {
  return ["p1", "p2", "p3"].map((name) => {
    const [command, args] = scriptCommand(WORKER);
    return watchChild(command, args, {
      WORKER_DATASOURCE: JSON.stringify(entry),
      WORKER_NAME: name,
      WORKER_LEASE: "9000",
      WORKER_SQS: JSON.stringify(SQS),
      WORKER_QUEUE: queue,
      NO_COLOR: "1",
      ...(name === "p1" ? { WORKER_HOLD: "300" } : {}),
    });
  });
}
