// jobs() with data(), as an app uses them, on SQLite, PostgreSQL and MariaDB: a job enqueued in a
// transaction that rolls back never runs and one that commits runs once; a unique key dedupes;
// failing runs are tried again, then the job is dead with its last error; priority, then due time,
// orders the runs; a delay holds a job; a lease that ended (a worker gone) gives its job to
// another; a close gives a running job back untried; a schema refuses a payload at once.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Autowired, Service } from "../../mod.ts";
import { SqlClient } from "../../data.ts";
import { type Job, JobHandler, JobQueue } from "../../jobs.ts";
import { SqlJobStore } from "../../src/jobs/sql_job_store.ts";
import { jobStatements } from "../../src/sql/job_statements.ts";
import type { StandardSchemaV1 } from "../../src/config/standard_schema.ts";
import { datasourceEntries, KINDS } from "../sql/pools.ts";
import { jobsApp, jobsEndpointCall, waitFor } from "./job_support.ts";
import { deferred } from "../deferred.ts";

const databases = datasourceEntries();

interface Run {
  readonly payload: { readonly n: number };
  readonly job: Job;
}

@Service()
class Mail {
  runs: Run[] = [];
  // How many runs of each payload `n` throw before one passes.
  failFirst = 0;
  @JobHandler("mail", { backoff: { delay: 1, maxDelay: 1 } })
  send(payload: { n: number }, job: Job): void {
    this.runs.push({ payload, job });
    if (job.attempt <= this.failFirst) {
      throw new Error(`refused run ${job.attempt} of ${payload.n}`);
    }
  }
}

@Service()
class Slow {
  runs: Run[] = [];
  // Resolved by the test: the runs hold until then, or until their signal aborts.
  release = deferred();
  @JobHandler("slow", { timeout: "10m" })
  async work(payload: { n: number }, job: Job): Promise<void> {
    this.runs.push({ payload, job });
    await Promise.race([
      this.release.promise,
      new Promise((_, reject) =>
        job.signal.addEventListener("abort", () => reject(job.signal.reason))
      ),
    ]);
  }
}

const evenOnly: StandardSchemaV1<unknown, { n: number }> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: (value) => {
      const n = (value as { n?: unknown }).n;
      return typeof n === "number" && n % 2 === 0
        ? { value: { n } }
        : { issues: [{ message: "must be even", path: ["n"] }] };
    },
  },
};

@Service()
class Checked {
  runs: unknown[] = [];
  @JobHandler("checked", { schema: evenOnly })
  take(payload: { n: number }): void {
    this.runs.push(payload);
  }
}

@Service()
class Orders {
  @Autowired(SqlClient)
  sql!: SqlClient;
  @Autowired(JobQueue)
  queue!: JobQueue;

  async place(n: number, fail: boolean): Promise<void> {
    await this.sql.transaction(async () => {
      await this.sql.execute`INSERT INTO sent (id) VALUES (${`order ${n}`})`;
      await this.queue.enqueue("mail", { n });
      if (fail) throw new Error(`refused order ${n}`);
    });
  }
}

// Every job of the table, by id.
async function rows(sql: SqlClient): Promise<Record<string, unknown>[]> {
  return await sql.query`SELECT id, queue, state, attempt, last_error, payload FROM thaw_jobs
    ORDER BY id`;
}

for (const kind of KINDS) {
  describe(`jobs() on ${kind}`, () => {
    it("runs a job enqueued in a committed transaction once, and never one rolled back", async () => {
      const { app } = await jobsApp(databases, kind, [Mail, Orders]);
      try {
        const orders = app.getBean(Orders);
        for (let n = 0; n < 5; n++) {
          await orders.place(n, false);
          await assert.rejects(orders.place(100 + n, true), /refused order/);
        }
        app.start();
        const mail = app.getBean(Mail);
        const sql = app.getBean(SqlClient);
        await waitFor(
          "five jobs done",
          async () => (await rows(sql)).filter((r) => r.state === "done").length === 5,
        );
        assert.deepEqual(mail.runs.map((r) => r.payload).sort((a, b) => a.n - b.n), [
          { n: 0 },
          { n: 1 },
          { n: 2 },
          { n: 3 },
          { n: 4 },
        ]);
        assert.deepEqual(mail.runs.map((r) => r.job.attempt), [1, 1, 1, 1, 1]);
        // The rolled-back enqueues left nothing to run, now or later.
        assert.equal((await rows(sql)).length, 5);
      } finally {
        await app.close();
      }
    });

    it("answers the waiting job's id for a key it holds, and a new job once it is done", async () => {
      const { app } = await jobsApp(databases, kind, [Mail]);
      try {
        const queue = app.getBean(JobQueue);
        const first = await queue.enqueue("mail", { n: 1 }, { key: "order-1" });
        assert.equal(first.created, true);
        assert.deepEqual(await queue.enqueue("mail", { n: 2 }, { key: "order-1" }), {
          id: first.id,
          created: false,
        });
        // Keys are per queue, and compared exactly.
        for (const other of ["order-1 ", "ORDER-1", "order-2"]) {
          assert.equal(
            (await queue.enqueue("mail", { n: 3 }, { key: other })).created,
            true,
            other,
          );
        }
        assert.equal((await queue.enqueue("slow", { n: 4 }, { key: "order-1" })).created, true);
        app.start();
        const sql = app.getBean(SqlClient);
        await waitFor(
          "the mail jobs done",
          async () => (await rows(sql)).filter((r) => r.state === "done").length === 4,
        );
        const again = await queue.enqueue("mail", { n: 5 }, { key: "order-1" });
        assert.equal(again.created, true);
        assert.notEqual(again.id, first.id);
        // The duplicate's payload never ran.
        const ran = app.getBean(Mail).runs.map((r) => r.payload.n);
        assert.ok(!ran.includes(2), `ran ${ran}`);
      } finally {
        await app.close();
      }
    });

    it("runs a job that fails twice three times, and one that always fails is dead", async () => {
      const { app } = await jobsApp(databases, kind, [Mail]);
      try {
        const mail = app.getBean(Mail);
        mail.failFirst = 2;
        const queue = app.getBean(JobQueue);
        const passes = await queue.enqueue("mail", { n: 1 });
        const dies = await queue.enqueue("mail", { n: 2 }, { attempts: 2 });
        app.start();
        const sql = app.getBean(SqlClient);
        await waitFor(
          "both jobs ended",
          async () => (await rows(sql)).every((r) => r.state === "done" || r.state === "dead"),
        );
        const byId = new Map((await rows(sql)).map((r) => [String(r.id), r]));
        assert.equal(byId.get(passes.id)?.state, "done");
        assert.equal(Number(byId.get(passes.id)?.attempt), 3);
        assert.equal(byId.get(dies.id)?.state, "dead");
        assert.equal(Number(byId.get(dies.id)?.attempt), 2);
        assert.match(String(byId.get(dies.id)?.last_error), /refused run 2 of 2/);
        const attempts = (n: number) =>
          mail.runs.filter((r) => r.payload.n === n).map((r) => r.job.attempt);
        assert.deepEqual(attempts(1), [1, 2, 3]);
        assert.deepEqual(attempts(2), [1, 2]);
      } finally {
        await app.close();
      }
    });

    it("runs the highest priority first, then the earliest due", async () => {
      const { app } = await jobsApp(databases, kind, [Mail]);
      try {
        const queue = app.getBean(JobQueue);
        const now = Date.now();
        const at = (ms: number) => new Date(now - ms);
        await queue.enqueue("mail", { n: 1 }, { runAt: at(1000) });
        await queue.enqueue("mail", { n: 2 }, { priority: 5, runAt: at(1000) });
        await queue.enqueue("mail", { n: 3 }, { priority: 5, runAt: at(5000) });
        await queue.enqueue("mail", { n: 4 }, { priority: -1, runAt: at(9000) });
        await queue.enqueue("mail", { n: 5 }, { runAt: at(3000) });
        const later = await queue.enqueue("mail", { n: 6 }, { delay: "1h" });
        app.start();
        const mail = app.getBean(Mail);
        await waitFor("five runs", () => mail.runs.length === 5);
        assert.deepEqual(mail.runs.map((r) => r.payload.n), [3, 2, 5, 1, 4]);
        const left = (await rows(app.getBean(SqlClient))).find((r) => String(r.id) === later.id);
        assert.equal(left?.state, "waiting");
      } finally {
        await app.close();
      }
    });

    it("holds a delayed job until it is due", async () => {
      const { app } = await jobsApp(databases, kind, [Mail]);
      try {
        app.start();
        const enqueued = Date.now();
        await app.getBean(JobQueue).enqueue("mail", { n: 1 }, { delay: 400 });
        const mail = app.getBean(Mail);
        await waitFor("the run", () => mail.runs.length === 1);
        const ranAfter = Date.now() - enqueued;
        assert.ok(ranAfter >= 400, `ran ${ranAfter} ms after the enqueue`);
      } finally {
        await app.close();
      }
    });

    it("takes again a job whose worker went away once its lease ended", async () => {
      const { app } = await jobsApp(databases, kind, [Mail]);
      try {
        const queue = app.getBean(JobQueue);
        const { id } = await queue.enqueue("mail", { n: 7 });
        // A worker of another process takes it for 100 ms, and dies.
        const gone = new SqlJobStore(app.getBean(SqlClient), 0, () => {});
        const [taken] = await gone.take("mail", 1, 100);
        assert.equal(taken.id, id);
        app.start();
        const mail = app.getBean(Mail);
        await waitFor("the run", () => mail.runs.length === 1);
        assert.equal(mail.runs[0].job.attempt, 2);
        // The dead worker's late end is not recorded over the new run's.
        await waitFor("done", async () => (await rows(app.getBean(SqlClient)))[0].state === "done");
        assert.equal(await gone.finish(taken, { state: "dead" }, "late"), false);
      } finally {
        await app.close();
      }
    });

    it("gives a running job back untried at close: the next process runs it", async () => {
      const first = await jobsApp(databases, kind, [Slow]);
      let id: string;
      try {
        ({ id } = await first.app.getBean(JobQueue).enqueue("slow", { n: 1 }));
        first.app.start();
        const slow = first.app.getBean(Slow);
        await waitFor("the run", () => slow.runs.length === 1);
      } finally {
        await first.app.close();
      }
      assert.ok(first.app.getBean(Slow).runs[0].job.signal.aborted);
      const second = await jobsApp(databases, kind, [Slow], { entry: first.entry });
      try {
        const [row] = await rows(second.app.getBean(SqlClient));
        assert.equal(String(row.id), id);
        assert.equal(row.state, "waiting");
        assert.equal(Number(row.attempt), 0);
        const slow = second.app.getBean(Slow);
        slow.release.resolve();
        second.app.start();
        await waitFor(
          "done",
          async () => (await rows(second.app.getBean(SqlClient)))[0].state === "done",
        );
        assert.equal(slow.runs[0].job.attempt, 1);
      } finally {
        await second.app.close();
      }
    });

    it("keeps the process turning while its runs fill the worker and a job is enqueued", async () => {
      const { app } = await jobsApp(databases, kind, [Slow]);
      try {
        const queue = app.getBean(JobQueue);
        await queue.enqueue("slow", { n: 1 });
        app.start();
        const slow = app.getBean(Slow);
        await waitFor("the first run", () => slow.runs.length === 1);
        // The worker has no room: this wakes it, and it must go back to waiting.
        await queue.enqueue("slow", { n: 2 });
        const turned = await new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 20));
        assert.ok(turned);
        slow.release.resolve();
        await waitFor("the second run", () => slow.runs.length === 2);
        assert.deepEqual(slow.runs.map((r) => r.payload.n), [1, 2]);
      } finally {
        await app.close();
      }
    });

    it("puts a job whose payload the schema refuses to dead at once, untried", async () => {
      const { app } = await jobsApp(databases, kind, [Checked]);
      try {
        const queue = app.getBean(JobQueue);
        const odd = await queue.enqueue("checked", { n: 3 });
        await queue.enqueue("checked", { n: 4 });
        app.start();
        const sql = app.getBean(SqlClient);
        await waitFor(
          "both ended",
          async () => (await rows(sql)).every((r) => r.state === "done" || r.state === "dead"),
        );
        assert.deepEqual(app.getBean(Checked).runs, [{ n: 4 }]);
        const dead = (await rows(sql)).find((r) => String(r.id) === odd.id);
        assert.equal(dead?.state, "dead");
        assert.equal(Number(dead?.attempt), 1);
        assert.match(String(dead?.last_error), /schema refused its payload: n: must be even/);
      } finally {
        await app.close();
      }
    });

    it("gives the handler every character a payload held, and keeps every key apart", async () => {
      const { app } = await jobsApp(databases, kind, [Mail]);
      try {
        const queue = app.getBean(JobQueue);
        const text = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join("") +
          "\uD800 \uDC00 \uD83D\uDE00 \u2028";
        await queue.enqueue("mail", { n: 0, text });
        // One key per character but NUL, which no key holds.
        const ids = new Set<string>();
        for (let c = 1; c < 256; c++) {
          const made = await queue.enqueue("mail", { n: c }, { key: `k${String.fromCharCode(c)}` });
          assert.equal(made.created, true, `key k + ${c}`);
          ids.add(made.id);
        }
        assert.equal(ids.size, 255);
        for (let c = 1; c < 256; c++) {
          const again = await queue.enqueue("mail", { n: c }, {
            key: `k${String.fromCharCode(c)}`,
          });
          assert.equal(again.created, false, `key k + ${c} again`);
        }
        app.start();
        const mail = app.getBean(Mail);
        await waitFor("every run", () => mail.runs.length === 256);
        const first = mail.runs.find((r) => r.payload.n === 0);
        assert.equal((first?.payload as unknown as { text: string }).text, text);
      } finally {
        await app.close();
      }
    });

    it("shows each queue's counts in the jobs health component, DOWN without the table", async () => {
      const { app } = await jobsApp(databases, kind, [Mail], { health: true });
      try {
        const queue = app.getBean(JobQueue);
        await queue.enqueue("mail", { n: 1 }, { runAt: new Date(Date.now() - 60_000) });
        await queue.enqueue("mail", { n: 2 }, { delay: "1h" });
        await queue.enqueue("slow", { n: 3 });
        const response = await app.fetch(new Request("http://x/actuator/health"));
        const body = await response.json();
        assert.equal(body.components.jobs.status, "UP");
        const { mail, slow } = body.components.jobs.details.queues;
        assert.deepEqual({ ...mail, oldestWaitingMs: undefined }, {
          waiting: 2,
          running: 0,
          done: 0,
          dead: 0,
          oldestWaitingMs: undefined,
        });
        // Due a minute ago, by the process's clock; the database's is the same machine's.
        assert.ok(mail.oldestWaitingMs >= 50_000, `${mail.oldestWaitingMs}`);
        assert.equal(slow.waiting, 1);
      } finally {
        await app.close();
      }
      const bare = await jobsApp(databases, kind, [Mail], { health: true, table: false });
      try {
        const response = await bare.app.fetch(new Request("http://x/actuator/health"));
        assert.equal(response.status, 503);
        const body = await response.json();
        assert.equal(body.components.jobs.status, "DOWN");
        assert.match(JSON.stringify(body.components.jobs.details), /has no table thaw_jobs/);
      } finally {
        await bare.app.close();
      }
    });

    it("lists a dead job at /actuator/jobs, runs it again once retried there, deletes it", async () => {
      const { app } = await jobsApp(databases, kind, [Mail], { health: true });
      const call = jobsEndpointCall(app);
      try {
        const mail = app.getBean(Mail);
        mail.failFirst = 99;
        const queue = app.getBean(JobQueue);
        const { id } = await queue.enqueue("mail", { n: 1 }, { attempts: 1, key: "k" });
        app.start();
        const sql = app.getBean(SqlClient);
        await waitFor("the job dead", async () => (await rows(sql))[0].state === "dead");
        const listed = await call("GET", "");
        assert.equal(listed.status, 200);
        assert.equal(listed.body.queues.mail.dead, 1);
        assert.deepEqual(
          listed.body.dead.map((
            d: { id: string; queue: string; attempt: number },
          ) => [d.id, d.queue, d.attempt]),
          [[id, "mail", 1]],
        );
        assert.match(listed.body.dead[0].error, /refused run 1 of 1/);
        assert.ok(!Number.isNaN(Date.parse(listed.body.dead[0].diedAt)));

        // Its key is free once it is dead: a job holding it now keeps the dead one from waiting.
        const holder = await queue.enqueue("mail", { n: 2 }, { key: "k", delay: "1h" });
        assert.equal((await call("POST", `/${id}/retry`)).status, 409);
        assert.equal((await call("DELETE", `/${holder.id}`)).status, 204);

        mail.failFirst = 0;
        assert.deepEqual(await call("POST", `/${id}/retry`), {
          status: 200,
          body: { id, queue: "mail", state: "waiting" },
        });
        await waitFor("the job done", async () => (await rows(sql))[0].state === "done");
        assert.deepEqual(mail.runs.map((r) => r.job.attempt), [1, 1]);
        assert.equal((await call("POST", `/${id}/retry`)).status, 404);
        for (const path of [`/${id}/again`, "/abc/retry", "/0/retry", `/${"9".repeat(30)}/retry`]) {
          assert.equal((await call("POST", path)).status, 404, path);
        }
        assert.equal((await call("DELETE", `/${id}`)).status, 204);
        assert.equal((await call("DELETE", `/${id}`)).status, 404);
        assert.equal((await rows(sql)).length, 0);
      } finally {
        await app.close();
      }
    });

    it("reads the database's clock as milliseconds since the epoch, in UTC", async () => {
      const { app } = await jobsApp(databases, kind, [Mail]);
      try {
        const sql = app.getBean(SqlClient);
        const { rows } = await sql.unsafe(jobStatements(kind).now);
        // The same machine's clock: apart by the statement's time, never by a zone's hours.
        assert.ok(Math.abs(Number(rows[0].now) - Date.now()) < 60_000, `${rows[0].now}`);
      } finally {
        await app.close();
      }
    });

    it("fails an enqueue on a datasource without the table, saying how to make it", async () => {
      const { app } = await jobsApp(databases, kind, [Mail], { table: false });
      try {
        await assert.rejects(
          app.getBean(JobQueue).enqueue("mail", { n: 1 }),
          /has no table thaw_jobs: create it with Thaw's jobs migration.*export default jobsMigration\(\)/,
        );
      } finally {
        await app.close();
      }
    });
  });
}

describe("jobs() on postgres, woken by another process's enqueue", () => {
  it("runs a job another app enqueued at once, and again once its listening connection was cut", async () => {
    // A poll an hour apart: only the notification can start these runs.
    const worker = await jobsApp(databases, "postgres", [Mail], {
      jobs: { "poll-interval": "1h" },
    });
    const other = await jobsApp(databases, "postgres", [Orders], { entry: worker.entry });
    try {
      worker.app.start();
      const sql = worker.app.getBean(SqlClient);
      const listening = async () =>
        (await sql.query`SELECT pid FROM pg_stat_activity
          WHERE query = 'LISTEN thaw_jobs' AND datname = current_database()`).map((r) => r.pid);
      await waitFor("the worker to listen", async () => (await listening()).length === 1);
      const mail = worker.app.getBean(Mail);
      await other.app.getBean(Orders).place(1, false);
      await waitFor("the first run", () => mail.runs.length === 1);

      const [pid] = await listening();
      await sql.query`SELECT pg_terminate_backend(${pid})`;
      // Enqueued while the worker may not listen: the reconnect looks for what it missed.
      await other.app.getBean(Orders).place(2, false);
      await waitFor("the second run", () => mail.runs.length === 2);
      await waitFor("the worker to listen again", async () => {
        const now = await listening();
        return now.length === 1 && now[0] !== pid;
      });
      await other.app.getBean(Orders).place(3, false);
      await waitFor("the third run", () => mail.runs.length === 3);
      assert.deepEqual(mail.runs.map((r) => r.payload.n), [1, 2, 3]);
    } finally {
      await other.app.close();
      await worker.app.close();
    }
  });
});

@Service()
class Stubborn {
  running = 0;
  most = 0;
  runs: Run[] = [];
  // Resolved by the test: the first run ends then, whatever its signal says.
  readonly first = deferred();
  readonly others = deferred();
  @JobHandler("stubborn", { concurrency: 2, timeout: 200 })
  async work(payload: { n: number }, job: Job): Promise<void> {
    this.runs.push({ payload, job });
    this.most = Math.max(this.most, ++this.running);
    try {
      await (this.runs.length === 1 ? this.first.promise : this.others.promise);
    } finally {
      this.running--;
    }
  }
}

@Service()
class Quick {
  runs = 0;
  @JobHandler("quick", { concurrency: 4 })
  async work(): Promise<void> {
    this.runs++;
    await Promise.resolve();
  }
}

for (const kind of KINDS) {
  describe(`jobs() on ${kind}, a backlog`, () => {
    it("lets timers run while the worker drains it", async () => {
      const { app } = await jobsApp(databases, kind, [Quick]);
      try {
        const queue = app.getBean(JobQueue);
        const sql = app.getBean(SqlClient);
        await sql.transaction(async () => {
          for (let n = 0; n < 3000; n++) await queue.enqueue("quick", { n });
        });
        const quick = app.getBean(Quick);
        app.start();
        // A timer set now fires while most of the backlog still waits, not once it drained.
        const seen = await new Promise<number>((resolve) =>
          setTimeout(() => resolve(quick.runs), 0)
        );
        assert.ok(seen < 3000, `a timer fired only after ${seen} runs`);
        await waitFor("the backlog drained", () => quick.runs === 3000);
      } finally {
        await app.close();
      }
    });
  });
}

// On one database: the worker's count of its runs is the same on each.
describe(`jobs() on ${KINDS[0]}, a run that outlives its lease`, () => {
  it("counts it among the worker's runs until it ends, beside its job's next run", async () => {
    const { app } = await jobsApp(databases, KINDS[0], [Stubborn]);
    try {
      const queue = app.getBean(JobQueue);
      await queue.enqueue("stubborn", { n: 1 });
      app.start();
      const stubborn = app.getBean(Stubborn);
      // Its lease ends while it runs: the worker, which has room for one more, takes it again.
      await waitFor("the job's second run", () => stubborn.runs.length === 2);
      assert.deepEqual(stubborn.runs.map((r) => [r.payload.n, r.job.attempt]), [[1, 1], [1, 2]]);
      assert.ok(stubborn.runs[0].job.signal.aborted);
      await queue.enqueue("stubborn", { n: 2 });
      await queue.enqueue("stubborn", { n: 3 });
      // The first run ends: its job's second run still holds the other place.
      stubborn.first.resolve();
      await waitFor("a third run", () => stubborn.runs.length >= 3);
      stubborn.others.resolve();
      await waitFor("every run", () => stubborn.runs.length === 4 && stubborn.running === 0);
      assert.equal(stubborn.most, 2);
    } finally {
      await app.close();
    }
  });
});
