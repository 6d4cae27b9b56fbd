// jobs() with `jobs.store: sqs`, against a real ElasticMQ (tools/elasticmq.sh start, which the test
// set-up runs): a job runs once; a failing one is tried again, then dead in `<queue>-dead` with its
// error, listed, retried and deleted at /actuator/jobs; a delay holds a job, one past SQS's 15
// minutes is sent again until due; a run longer than its window keeps its job from the other
// replica; a close gives a running job back untried; a key or a priority is refused; a host that
// never answers fails the enqueue, named.
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { after, describe, it } from "node:test";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { type Application, bootstrap, type Class, Service } from "../../mod.ts";
import { type Job, JobHandler, JobQueue, jobs } from "../../jobs.ts";
import { actuator } from "../../actuator.ts";
import { memoryLogger } from "../helpers.ts";
import { deferred } from "../deferred.ts";
import { ACTUATOR_JOBS, jobsEndpointCall, waitFor } from "./job_support.ts";
import { SqsProxy } from "./sqs_proxy.ts";
import { ELASTICMQ, elasticMqClient, queueName } from "./sqs_support.ts";

const raw = elasticMqClient();
after(() => raw.destroy());

interface Run {
  readonly payload: unknown;
  readonly job: Job;
}

// A bean with a handler of `queue`, recording its runs; `behave` decides each run's end.
function handlerOf(
  queue: string,
  options: Parameters<typeof JobHandler>[1] = {},
): { readonly type: Class; readonly runs: Run[]; behave: (run: Run) => unknown } {
  const state = {
    runs: [] as Run[],
    behave: (_run: Run): unknown => undefined,
  };
  @Service()
  class Handler {
    @JobHandler(queue, { backoff: { delay: 1, maxDelay: 1 }, ...options })
    async run(payload: unknown, job: Job): Promise<void> {
      const run = { payload, job };
      state.runs.push(run);
      await state.behave(run);
    }
  }
  return {
    type: Handler,
    get runs() {
      return state.runs;
    },
    set behave(f: (run: Run) => unknown) {
      state.behave = f;
    },
    get behave() {
      return state.behave;
    },
  };
}

async function sqsApp(
  components: Class[],
  options: { readonly endpoint?: string; readonly health?: boolean } = {},
): Promise<{ app: Application; lines: unknown[][] }> {
  const logger = memoryLogger();
  const app = await bootstrap({
    config: {
      server: { "shutdown-timeout": 10 },
      jobs: {
        store: "sqs",
        "poll-interval": "50ms",
        sqs: {
          endpoint: options.endpoint ?? ELASTICMQ,
          region: "us-east-1",
          "access-key-id": "thaw-test-id",
          "secret-access-key": "thaw-test-secret",
          "wait-time": "1s",
        },
      },
      ...(options.health ? { management: ACTUATOR_JOBS } : {}),
    },
    components,
    logger,
    jobs: jobs(),
    ...(options.health ? { actuator: actuator() } : {}),
  });
  return { app, lines: logger.lines };
}

async function attributes(queue: string): Promise<Record<string, number>> {
  const { QueueUrl } = await raw.send(new CreateQueueCommand({ QueueName: queue }));
  const answer = await raw.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }),
  );
  return Object.fromEntries(
    Object.entries(answer.Attributes ?? {}).map(([k, v]) => [k, Number(v)]),
  );
}

describe("jobs() on SQS (ElasticMQ)", () => {
  it("runs a job once with its payload's every character, and deletes its message", async () => {
    const queue = queueName("once");
    const handler = handlerOf(queue);
    const { app } = await sqsApp([handler.type]);
    try {
      // Every UTF-16 code unit below the surrogates, lone surrogates (JSON escapes them), and
      // a pair.
      const text = Array.from({ length: 0xd800 }, (_, i) => String.fromCharCode(i)).join("") +
        "\ud800 \udfff \u{1f600}";
      const { id, created } = await app.getBean(JobQueue).enqueue(queue, { text });
      assert.equal(created, true);
      app.start();
      await waitFor("the run", () => handler.runs.length === 1);
      const [{ payload, job }] = handler.runs;
      assert.ok((payload as { text: string }).text === text, "the payload, code unit for unit");
      assert.equal(job.id, id);
      assert.equal(job.attempt, 1);
      assert.equal(job.queue, queue);
      await waitFor("its message deleted", async () => {
        const counts = await attributes(queue);
        return counts.ApproximateNumberOfMessages + counts.ApproximateNumberOfMessagesNotVisible ===
          0;
      });
      assert.equal(handler.runs.length, 1);
    } finally {
      await app.close();
    }
  });

  it("tries a failing job again, then it is dead: listed, retried and deleted at the actuator", async () => {
    const queue = queueName("dies");
    const handler = handlerOf(queue);
    // Every control character in the error: SQS refuses some in an attribute.
    const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("");
    handler.behave = ({ job }) => {
      throw new Error(`refused run ${job.attempt} ${controls}\ud800`);
    };
    const { app } = await sqsApp([handler.type], { health: true });
    const call = jobsEndpointCall(app);
    try {
      const jobQueue = app.getBean(JobQueue);
      const { id } = await jobQueue.enqueue(queue, { n: 1 }, { attempts: 3 });
      app.start();
      await waitFor("three runs and the job dead", async () => {
        const listed = await call("GET", "");
        return listed.body.queues[queue]?.dead === 1;
      });
      assert.deepEqual(handler.runs.map((r) => r.job.attempt), [1, 2, 3]);
      const listed = await call("GET", "");
      assert.equal(listed.status, 200);
      const dead = listed.body.dead.filter((d: { queue: string }) => d.queue === queue);
      assert.deepEqual(dead.map((d: { id: string; attempt: number }) => [d.id, d.attempt]), [
        [id, 3],
      ]);
      assert.match(dead[0].error, /^Error: refused run 3 /);
      assert.ok(!Number.isNaN(Date.parse(dead[0].diedAt)));

      handler.behave = () => undefined;
      assert.deepEqual(await call("POST", `/${id}/retry`), {
        status: 200,
        body: { id, queue, state: "waiting" },
      });
      await waitFor("the retried run", () => handler.runs.length === 4);
      assert.equal(handler.runs[3].job.attempt, 1);
      assert.equal(handler.runs[3].job.id, id);
      assert.equal((await call("POST", `/${id}/retry`)).status, 404);
      for (const path of [`/${id}/again`, "/abc/retry", "/1/retry"]) {
        assert.equal((await call("POST", path)).status, 404, path);
      }

      // A second dead job, deleted there.
      handler.behave = () => {
        throw new Error("refused");
      };
      const second = await jobQueue.enqueue(queue, { n: 2 }, { attempts: 1 });
      await waitFor("the second job dead", async () => {
        return (await call("GET", "")).body.queues[queue]?.dead === 1;
      });
      assert.equal((await call("DELETE", `/${second.id}`)).status, 204);
      assert.equal((await call("DELETE", `/${second.id}`)).status, 404);
      assert.equal((await call("GET", "")).body.queues[queue].dead, 0);
    } finally {
      await app.close();
    }
  });

  it("holds a delayed job until due; one due past 15 minutes is sent again, not run", async () => {
    const queue = queueName("delayed");
    const handler = handlerOf(queue);
    const { app } = await sqsApp([handler.type]);
    try {
      const jobQueue = app.getBean(JobQueue);
      const started = Date.now();
      await jobQueue.enqueue(queue, { n: "later" }, { delay: 2000 });
      await jobQueue.enqueue(queue, { n: "now" });
      // What a job enqueued 20 minutes ahead looks like once SQS's 15 minutes passed.
      const { QueueUrl } = await raw.send(new CreateQueueCommand({ QueueName: queue }));
      await raw.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: JSON.stringify({ n: "far" }),
          MessageAttributes: {
            "thaw-id": { DataType: "String", StringValue: crypto.randomUUID() },
            "thaw-runs": { DataType: "Number", StringValue: "0" },
            "thaw-due": { DataType: "Number", StringValue: String(Date.now() + 20 * 60_000) },
          },
        }),
      );
      app.start();
      await waitFor("two runs", () => handler.runs.length === 2);
      assert.deepEqual(handler.runs.map((r) => (r.payload as { n: string }).n), ["now", "later"]);
      const later = handler.runs[1];
      assert.ok(Date.now() - started >= 2000, "not before its delay");
      assert.equal(later.job.attempt, 1);
      await waitFor("the far one sent again, delayed", async () => {
        const counts = await attributes(queue);
        return counts.ApproximateNumberOfMessagesDelayed === 1 &&
          counts.ApproximateNumberOfMessages + counts.ApproximateNumberOfMessagesNotVisible === 0;
      });
      assert.equal(handler.runs.length, 2);
    } finally {
      await app.close();
    }
  });

  it("keeps a run longer than its window from the other replica, and gives one back at close", async () => {
    const queue = queueName("long");
    // A lease of 9 s: a window of 3 s, extended every second while the run lasts.
    const first = handlerOf(queue, { timeout: "9s" });
    const second = handlerOf(queue, { timeout: "9s" });
    const release = deferred();
    first.behave = ({ job }) =>
      Promise.race([
        release.promise,
        new Promise((_, reject) =>
          job.signal.addEventListener("abort", () => reject(job.signal.reason))
        ),
      ]);
    second.behave = first.behave;
    // Each replica through a proxy of its own, that counts its calls.
    const proxies = [await SqsProxy.start(ELASTICMQ, {}), await SqsProxy.start(ELASTICMQ, {})];
    const calls = (n: number, action: string) =>
      proxies[n].actions.filter((a) => a === action).length;
    const one = await sqsApp([first.type], { endpoint: proxies[0].endpoint });
    const two = await sqsApp([second.type], { endpoint: proxies[1].endpoint });
    try {
      await one.app.getBean(JobQueue).enqueue(queue, { n: 1 });
      one.app.start();
      await waitFor("the first replica's run", () => first.runs.length === 1);
      two.app.start();
      const extended = calls(0, "ChangeMessageVisibility");
      const received = calls(1, "ReceiveMessage");
      // Six extensions, two windows: had they not held it, the other replica, receiving
      // meanwhile, would have taken it.
      await waitFor(
        "six extensions while the other replica receives, or its run",
        () =>
          second.runs.length > 0 ||
          (calls(0, "ChangeMessageVisibility") - extended >= 6 &&
            calls(1, "ReceiveMessage") - received >= 3),
      );
      assert.equal(second.runs.length, 0);
      // The first replica closes: its run is given back untried, and the other one runs it.
      await one.app.close();
      await waitFor("the other replica's run", () => second.runs.length === 1);
      assert.equal(second.runs[0].job.attempt, 1);
      release.resolve();
    } finally {
      release.resolve();
      await one.app.close();
      await two.app.close();
      for (const proxy of proxies) await proxy.close();
    }
  });

  it("puts a job whose runs never end to dead once its attempts are spent", async () => {
    const queue = queueName("hangs");
    // Runs that ignore their signal: each lease ends with nothing written.
    const handler = handlerOf(queue, { timeout: "3s", concurrency: 3, attempts: 2 });
    const release = deferred();
    handler.behave = () => release.promise;
    const { app } = await sqsApp([handler.type], { health: true });
    try {
      const { id } = await app.getBean(JobQueue).enqueue(queue, { n: 1 });
      app.start();
      await waitFor("the job dead", async () => {
        const response = await app.fetch(new Request("http://x/actuator/jobs"));
        return (await response.json()).queues[queue]?.dead === 1;
      });
      assert.deepEqual(handler.runs.map((r) => r.job.attempt), [1, 2]);
      const listed = await (await app.fetch(new Request("http://x/actuator/jobs"))).json();
      const [dead] = listed.dead.filter((d: { queue: string }) => d.queue === queue);
      assert.equal(dead.id, id);
      assert.equal(dead.attempt, 2);
      assert.match(dead.error, /lease ended 2 times/);
    } finally {
      release.resolve();
      await app.close();
    }
  });

  it("refuses a unique key and a priority, naming the queue, and sends nothing", async () => {
    const queue = queueName("refused");
    const { app } = await sqsApp([]);
    try {
      const jobQueue = app.getBean(JobQueue);
      await assert.rejects(
        jobQueue.enqueue(queue, {}, { key: "k" }),
        (error: Error) =>
          error instanceof TypeError && error.message.includes(queue) &&
          /unique key/.test(error.message),
      );
      await assert.rejects(
        jobQueue.enqueue(queue, {}, { priority: 5 }),
        (error: Error) => error instanceof TypeError && /priority/.test(error.message),
      );
      // Another queue's dead jobs, and a payload over what SQS holds with its attributes.
      await assert.rejects(
        jobQueue.enqueue(`${queue}-dead`, {}),
        (error: Error) => error instanceof TypeError && /dead jobs of <queue>/.test(error.message),
      );
      await assert.rejects(
        jobQueue.enqueue(queue, { text: "x".repeat(240 * 1024) }),
        (error: Error) =>
          error instanceof TypeError && /bytes is over the 245760/.test(error.message),
      );
      const counts = await attributes(queue);
      assert.equal(counts.ApproximateNumberOfMessages, 0);
      // A handler of a dead queue's name, or with a lease SQS cannot hold, stops the start.
      for (
        const [name, options, refused] of [
          [`${queue}-dead`, {}, /holds the dead jobs/],
          [queue, { timeout: "13h" }, /longer than SQS keeps a message invisible/],
        ] as const
      ) {
        await assert.rejects(sqsApp([handlerOf(name, options).type]), refused);
      }
    } finally {
      await app.close();
    }
  });

  it("fails an enqueue to a host that never answers, naming the store, without its secret", async () => {
    const sockets = new Set<Socket>();
    const server: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const { app } = await sqsApp([], { endpoint: `http://127.0.0.1:${port}`, health: true });
    try {
      await assert.rejects(
        app.getBean(JobQueue).enqueue("silent", { n: 1 }),
        (error: Error) =>
          error.message.includes(`jobs on SQS (http://127.0.0.1:${port})`) &&
          error.message.includes('enqueue on queue "silent"') &&
          !error.message.includes("thaw-test-secret"),
      );
      const health = await app.fetch(new Request("http://x/actuator/health"));
      const body = await health.json();
      assert.equal(health.status, 503);
      assert.equal(body.components.jobs.status, "DOWN");
    } finally {
      await app.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
