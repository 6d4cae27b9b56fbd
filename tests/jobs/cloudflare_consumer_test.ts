// Jobs on Cloudflare Queues within this process: the app given batches and bindings as workerd
// gives them (objects of the same shape), for what workerd cannot be made to do on cue (a clock
// that moved, a close mid-run). tests/edge/workerd_jobs_test.ts runs the same app on workerd.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Application, Autowired, bootstrap, Scheduled, Service } from "../../mod.ts";
import { type Job, JobHandler, JobQueue, jobs, type MessageBatch } from "../../jobs.ts";
import { memoryLogger } from "../helpers.ts";
import { deferred } from "../deferred.ts";

interface Sent {
  readonly binding: string;
  readonly body: unknown;
  readonly options: unknown;
}

// Producer bindings that keep what is sent; one named in `failing` rejects.
function bindings(names: readonly string[], failing: readonly string[] = []) {
  const sent: Sent[] = [];
  const env: Record<string, unknown> = { TEXT: "not a queue" };
  for (const binding of names) {
    env[binding] = {
      send: (body: unknown, options: unknown) => {
        if (failing.includes(binding)) return Promise.reject(new Error("the queue is down"));
        sent.push({ binding, body: structuredClone(body), options });
        return Promise.resolve({});
      },
    };
  }
  return { env, sent };
}

interface Settled {
  acked: boolean;
  retried: { delaySeconds?: number } | undefined | "no";
}

// A batch of `bodies` on `queue`, each message recording how it was settled.
function batch(queue: string, bodies: readonly unknown[], attempts = 1) {
  const settled: Settled[] = bodies.map(() => ({ acked: false, retried: "no" }));
  const value: MessageBatch = {
    queue,
    messages: bodies.map((body, i) => ({
      id: `m${i}`,
      timestamp: new Date(),
      body,
      attempts,
      ack: () => void (settled[i].acked = true),
      retry: (options?: { delaySeconds?: number }) => void (settled[i].retried = options),
    })),
    ackAll: () => assert.fail("Thaw settles each message"),
    retryAll: () => assert.fail("Thaw settles each message"),
  };
  return { batch: value, settled };
}

const runs: { payload: unknown; job: Job }[] = [];
let started = deferred();

@Service()
class Handlers {
  @Autowired(JobQueue)
  queue!: JobQueue;

  @JobHandler("mail")
  mail(payload: unknown, job: Job): void {
    runs.push({ payload, job });
  }

  // Waits for its signal: only a close ends it.
  @JobHandler("wait")
  async wait(payload: unknown, job: Job): Promise<void> {
    runs.push({ payload, job });
    started.resolve();
    await new Promise((_, reject) => {
      job.signal.addEventListener("abort", () => reject(job.signal.reason), { once: true });
    });
  }

  // Never settles, whatever its signal says.
  @JobHandler("stuck", { timeout: "30ms", concurrency: 1, backoff: { delay: "1s" } })
  stuck(payload: unknown, job: Job): Promise<void> {
    runs.push({ payload, job });
    return new Promise(() => {});
  }

  // Fails, and waits a day before the next run.
  @JobHandler("daily", { backoff: { delay: "24h" } })
  daily(): void {
    throw new Error("not today");
  }

  @Scheduled({ cron: "0 0 * * *" })
  async nightly(): Promise<void> {
    await this.queue.enqueue("mail", { nightly: true });
  }
}

// The app's queue handler, which an app with jobs on Cloudflare Queues has.
function consume(app: Application, batch: MessageBatch, env: unknown): Promise<void> {
  const { queue } = app;
  assert.ok(queue, "the app has no queue handler");
  return queue(batch, env);
}

async function cloudflareApp(extra: Record<string, unknown> = {}): Promise<{
  app: Application;
  lines: unknown[][];
}> {
  const logger = memoryLogger();
  const app = await bootstrap({
    components: [Handlers],
    config: { jobs: { store: "cloudflare", ...extra } },
    jobs: jobs(),
    logger,
  });
  return { app, lines: logger.lines };
}

describe("jobs on Cloudflare Queues, in process", () => {
  it("sends nothing before the app was given its bindings, then through the queue's binding", async () => {
    const { app } = await cloudflareApp({ cloudflare: { bindings: { mail: "MAIL" } } });
    try {
      const queue = app.getBean(JobQueue);
      await assert.rejects(
        queue.enqueue("mail", {}),
        /no job can be sent to queue "mail" yet: the app is given its bindings with each event/,
      );
      const { env, sent } = bindings(["MAIL"]);
      // Any event brings them: a request the app answers 404 to does.
      assert.equal((await app.fetch(new Request("http://localhost/nothing"), env)).status, 404);
      const { id, created } = await queue.enqueue("mail", { to: "ada" }, { delay: 1500 });
      assert.equal(created, true);
      assert.deepEqual(sent.map(({ binding, options }) => ({ binding, options })), [
        { binding: "MAIL", options: { contentType: "json", delaySeconds: 2 } },
      ]);
      assert.equal((sent[0].body as { thaw: { id: string } }).thaw.id, id);
      // A job with no delay leaves the queue's own delivery delay to it.
      await queue.enqueue("mail", { to: "alan" });
      assert.deepEqual(sent[1].options, { contentType: "json" });
    } finally {
      await app.close();
    }
  });

  it("takes the bindings from a cron trigger and a queue batch too", async () => {
    const { app } = await cloudflareApp({ cloudflare: { bindings: { mail: "MAIL" } } });
    try {
      const { env, sent } = bindings(["MAIL"]);
      await app.scheduled({ cron: "0 0 * * *" }, env);
      assert.deepEqual((sent[0].body as { payload: unknown }).payload, { nightly: true });
      const other = bindings(["MAIL"]);
      const { batch: given, settled } = batch("mail", [sent[0].body]);
      await consume(app, given, other.env);
      assert.deepEqual(settled, [{ acked: true, retried: "no" }]);
      await app.getBean(JobQueue).enqueue("mail", {});
      assert.equal(other.sent.length, 1);
    } finally {
      await app.close();
    }
  });

  it("sends a job not yet due again for the rest of its wait, untried", async () => {
    const { app } = await cloudflareApp();
    try {
      const { env, sent } = bindings(["mail"]);
      const before = runs.length;
      const body = {
        thaw: { id: "later", enqueuedAt: Date.now(), due: Date.now() + 3_600_500 },
        payload: 1,
      };
      const { batch: given, settled } = batch("mail", [body]);
      await consume(app, given, env);
      assert.deepEqual(settled, [{ acked: true, retried: "no" }]);
      assert.equal(runs.length, before);
      assert.equal(sent.length, 1);
      assert.deepEqual(sent[0].body, body);
      const { delaySeconds } = sent[0].options as { delaySeconds: number };
      assert.ok(delaySeconds > 3590 && delaySeconds <= 3601, `${delaySeconds} s`);
      // Due now: it runs.
      const due = { thaw: { id: "now", enqueuedAt: 0, due: Date.now() - 1 }, payload: 2 };
      const second = batch("mail", [due]);
      await consume(app, second.batch, env);
      assert.deepEqual(second.settled, [{ acked: true, retried: "no" }]);
      assert.equal(runs.at(-1)?.job.id, "now");
    } finally {
      await app.close();
    }
  });

  it("retries a message whose next leg could not be sent, losing nothing", async () => {
    const { app, lines } = await cloudflareApp();
    try {
      const { env } = bindings(["mail"], ["mail"]);
      const body = {
        thaw: { id: "later", enqueuedAt: 0, due: Date.now() + 86_400_000 },
        payload: 1,
      };
      const { batch: given, settled } = batch("mail", [body]);
      await consume(app, given, env);
      // After a wait, not at once: an outage of the queue spends few of its max_retries.
      assert.deepEqual(settled, [{ acked: false, retried: { delaySeconds: 10 } }]);
      const later = batch("mail", [body], 4);
      await consume(app, later.batch, env);
      assert.deepEqual(later.settled, [{ acked: false, retried: { delaySeconds: 80 } }]);
      assert.match(
        String(lines.at(-1)?.[0]),
        /^@JobHandler\("mail"\) \(Handlers.mail\(\)\): job later: its message could not be settled/,
      );
      assert.match(
        String((lines.at(-1)?.[1] as Error).message),
        /binding mail\): the queue is down/,
      );
    } finally {
      await app.close();
    }
  });

  it("sends a run the close ended again, not counted, and refuses a batch after the close", async () => {
    const { app } = await cloudflareApp();
    started = deferred();
    const { env, sent } = bindings(["wait"]);
    const body = { thaw: { id: "job-1", enqueuedAt: 0, tried: 1 }, payload: { n: 1 } };
    // Its third run (one before this message, and this message's second delivery).
    const { batch: given, settled } = batch("wait", [body], 2);
    const consumed = consume(app, given, env);
    await started.promise;
    assert.equal(runs.at(-1)?.job.attempt, 3);
    await app.close();
    await consumed;
    // The queue counts deliveries: sent again holding the two runs it had, this one not counted.
    assert.deepEqual(settled, [{ acked: true, retried: "no" }]);
    assert.deepEqual(sent.map((s) => s.body), [{
      thaw: { id: "job-1", enqueuedAt: 0, tried: 2 },
      payload: { n: 1 },
    }]);
    const after = batch("wait", [{ n: 2 }]);
    await assert.rejects(consume(app, after.batch, env), /the app is closing/);
    assert.deepEqual(after.settled, [{ acked: false, retried: "no" }]);
  });

  it("leaves a run that ignores its signal at its timeout: the batch's other messages go on", async () => {
    const { app } = await cloudflareApp();
    try {
      const before = runs.length;
      const { batch: given, settled } = batch("stuck", [{ n: 1 }, { n: 2 }]);
      await consume(app, given, {});
      assert.deepEqual(runs.slice(before).map((r) => r.payload), [{ n: 1 }, { n: 2 }]);
      assert.deepEqual(settled, [
        { acked: false, retried: { delaySeconds: 1 } },
        { acked: false, retried: { delaySeconds: 1 } },
      ]);
    } finally {
      await app.close();
    }
  });

  it("retries after the backoff, 12 hours at most, the longest delay a message has", async () => {
    const { app } = await cloudflareApp();
    try {
      const { batch: given, settled } = batch("daily", [{ n: 1 }, { n: 2 }], 1);
      await consume(app, given, {});
      assert.deepEqual(settled.map((s) => s.retried), [
        { delaySeconds: 43_200 },
        { delaySeconds: 43_200 },
      ]);
    } finally {
      await app.close();
    }
  });

  it("refuses a batch of a queue it has no handler for, settling none of its messages", async () => {
    const { app } = await cloudflareApp();
    try {
      const { batch: given, settled } = batch("nobody", [{}]);
      await assert.rejects(
        consume(app, given, {}),
        /a batch of queue "nobody" came, and no @JobHandler runs that queue \(the handled queues: "mail", "wait", "stuck", "daily"\)/,
      );
      assert.deepEqual(settled, [{ acked: false, retried: "no" }]);
    } finally {
      await app.close();
    }
  });

  it("has no queue handler unless its jobs are on Cloudflare Queues", async () => {
    const plain = await bootstrap({});
    assert.equal(plain.queue, undefined);
    await plain.close();
    const { app } = await cloudflareApp();
    assert.equal(typeof app.queue, "function");
    await app.close();
  });

  it("checks jobs.cloudflare.bindings where the app starts", async () => {
    const cases: [unknown, RegExp][] = [
      ["MAIL", /jobs\.cloudflare\.bindings: give a mapping of queue names to producer bindings/],
      [{ "a b": "X" }, /jobs\.cloudflare\.bindings: "a b" is no queue's name/],
      [
        { mail: "" },
        /jobs\.cloudflare\.bindings\.mail: give the name of the queue's producer binding/,
      ],
      [
        { mail: 3 },
        /jobs\.cloudflare\.bindings\.mail: give the name of the queue's producer binding, got 3/,
      ],
    ];
    for (const [given, message] of cases) {
      await assert.rejects(cloudflareApp({ cloudflare: { bindings: given } }), message);
    }
  });

  it("refuses what Cloudflare Queues cannot do before anything is sent", async () => {
    const { app } = await cloudflareApp();
    try {
      const { env, sent } = bindings(["mail"]);
      await app.fetch(new Request("http://localhost/"), env);
      const queue = app.getBean(JobQueue);
      await assert.rejects(queue.enqueue("mail", {}, { key: "k" }), TypeError);
      await assert.rejects(queue.enqueue("mail", {}, { priority: -1 }), TypeError);
      await assert.rejects(
        queue.enqueue("mail", "x".repeat(130_000)),
        /over the 127000 a job on Cloudflare Queues may take/,
      );
      assert.deepEqual(sent, []);
    } finally {
      await app.close();
    }
  });
});
