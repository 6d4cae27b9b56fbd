// The SQS job store at its edges, against a real ElasticMQ (tools/elasticmq.sh start), some calls
// through a loopback proxy that holds or fails one action: a slow send of a job's end never lets
// its message be taken again meanwhile; a take that ends after the store closed holds nothing;
// messages whose Thaw attributes no Thaw wrote go to dead, named, never loop; reads (counts, dead
// jobs, a retry or delete of an unknown id) make no queue; two searches of a dead queue at once
// both find their job, and a search that found its job answers it though showing the others again
// failed.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueUrlCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { SqsJobStore } from "../../src/jobs/sqs_job_store.ts";
import type { CheckedEnqueue } from "../../src/jobs/enqueue_options.ts";
import { deferred } from "../deferred.ts";
import { waitFor } from "./job_support.ts";
import { SqsProxy } from "./sqs_proxy.ts";
import { ELASTICMQ, elasticMqClient, queueName } from "./sqs_support.ts";

const raw = elasticMqClient();
after(() => raw.destroy());

function storeAt(endpoint: string): SqsJobStore {
  return new SqsJobStore({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "thaw-test", secretAccessKey: "thaw-test" },
    waitSeconds: 1,
  }, () => {});
}

// Runs `body` with a store of ElasticMQ's and a queue name of its own, closing the store after.
async function onStore(
  what: string,
  body: (store: SqsJobStore, queue: string) => Promise<void>,
): Promise<void> {
  const store = storeAt(ELASTICMQ);
  try {
    await body(store, queueName(what));
  } finally {
    store.close();
  }
}

function job(queue: string, payload: unknown = {}): CheckedEnqueue {
  return {
    queue,
    payload: JSON.stringify(payload),
    delayMs: 0,
    key: undefined,
    priority: 0,
    attempts: undefined,
  };
}

async function urlOf(queue: string): Promise<string> {
  const { QueueUrl } = await raw.send(new CreateQueueCommand({ QueueName: queue }));
  return QueueUrl as string;
}

// Receives what is visible in `queue` now, leaving it visible.
async function visible(queue: string): Promise<number> {
  const answer = await raw.send(
    new ReceiveMessageCommand({
      QueueUrl: await urlOf(queue),
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 0,
      WaitTimeSeconds: 0,
    }),
  );
  return answer.Messages?.length ?? 0;
}

async function exists(queue: string): Promise<boolean> {
  try {
    await raw.send(new GetQueueUrlCommand({ QueueName: queue }));
    return true;
  } catch (error) {
    if (/QueueDoesNotExist|NonExistentQueue/.test((error as Error).name)) return false;
    throw error;
  }
}

const numberAttribute = (value: string): MessageAttributeValue => ({
  DataType: "Number",
  StringValue: value,
});

describe("the SQS job store at its edges (ElasticMQ)", () => {
  it("keeps a job's window extended while its end is sent: no other take gets it", async () => {
    const queue = queueName("slow-end");
    const hold = { on: false, held: 0, release: deferred() };
    const proxy = await SqsProxy.start(ELASTICMQ, {
      before: async (action) => {
        if (hold.on && action === "SendMessage") {
          hold.held++;
          await hold.release.promise;
        }
      },
    });
    const store = storeAt(proxy.endpoint);
    let ending: Promise<boolean> | undefined;
    try {
      await store.enqueue(job(queue), undefined);
      // A lease of 6 s: windows of 2 s, each extended every 667 ms. Four extensions end the hold
      // within the 5 s a call may take before the SDK tries it again.
      const [taken] = await store.take(queue, 1, 6000);
      assert.ok(taken !== undefined);
      hold.on = true;
      ending = store.finish(taken, { state: "dead" }, "boom");
      await waitFor("the dead job's send held", () => hold.held === 1);
      const extensions = () => proxy.actions.filter((a) => a === "ChangeMessageVisibility").length;
      const before = extensions();
      // Four extensions after the send was held are more than a window: had they stopped, the
      // message would have been visible meanwhile.
      let seen = 0;
      await waitFor("four extensions, or the message seen", async () => {
        seen += await visible(queue);
        return seen > 0 || extensions() - before >= 4;
      });
      assert.equal(seen, 0, "the job's message was visible while its end was being sent");
      hold.release.resolve();
      assert.equal(await ending, true);
      assert.equal(await visible(queue), 0);
      assert.equal(await visible(`${queue}-dead`), 1);
    } finally {
      hold.release.resolve();
      await ending?.catch(() => {});
      store.close();
      await proxy.close();
    }
  });

  it("gives nothing from a take that ends after the store closed, and holds nothing", async () => {
    const queue = queueName("late-take");
    // The call held, by action, when one is.
    const hold = { action: "", held: 0, release: deferred() };
    const proxy = await SqsProxy.start(ELASTICMQ, {
      before: async (action) => {
        if (action === hold.action) {
          hold.held++;
          await hold.release.promise;
        }
      },
    });
    const stores: SqsJobStore[] = [];
    const closedWhile = async (action: string) => {
      const store = storeAt(proxy.endpoint);
      stores.push(store);
      Object.assign(hold, { action, held: 0, release: deferred() });
      const taking = store.take(queue, 10, 3000);
      await waitFor(`the ${action} held`, () => hold.held === 1);
      store.close();
      hold.release.resolve();
      hold.action = "";
      return await taking;
    };
    try {
      const sender = storeAt(ELASTICMQ);
      stores.push(sender);
      await sender.enqueue(job(queue), undefined);
      // Closed while its queue is looked up, while it receives, and while it sets aside a
      // message not due: none holds what it received, or extends its window.
      assert.deepEqual(await closedWhile("GetQueueUrl"), []);
      assert.deepEqual(await closedWhile("ReceiveMessage"), []);
      await waitFor("the message visible again", async () => await visible(queue) === 1);
      assert.ok(!proxy.actions.includes("ChangeMessageVisibility"), proxy.actions.join(", "));
      const url = await urlOf(queue);
      await raw.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: "{}",
          MessageAttributes: { "thaw-due": numberAttribute(String(Date.now() + 3_600_000)) },
        }),
      );
      const seen = new Set<number>();
      await waitFor("both messages visible", async () => {
        seen.add(await visible(queue));
        return seen.has(2);
      });
      assert.deepEqual(await closedWhile("SendMessage"), []);
    } finally {
      hold.release.resolve();
      for (const store of stores) store.close();
      await proxy.close();
    }
  });

  it("puts a message whose Thaw attributes no Thaw wrote to dead, named, and never loops", () =>
    onStore("foreign", async (store, queue) => {
      store.know([{ queue, timeoutMs: 3000, where: "a test" }]);
      await store.reclaim(queue, 3);
      const url = await urlOf(queue);
      const cases: Record<string, MessageAttributeValue>[] = [
        { "thaw-runs": numberAttribute("-5") },
        { "thaw-runs": numberAttribute("1.5") },
        { "thaw-due": numberAttribute("1e120") },
        { "thaw-attempts": numberAttribute("0") },
        { "thaw-enqueued": numberAttribute("-1e120") },
      ];
      for (const [n, attributes] of cases.entries()) {
        await raw.send(
          new SendMessageCommand({
            QueueUrl: url,
            MessageBody: JSON.stringify({ n }),
            MessageAttributes: attributes,
          }),
        );
      }
      const dead = new Map<string, string>();
      await waitFor("each message dead", async () => {
        const taken = await store.take(queue, 10, 3000);
        assert.deepEqual(taken.map((t) => t.payload), [], "a foreign message was run");
        for (const job of await store.dead(10)) dead.set(job.id, job.error ?? "");
        return dead.size === cases.length;
      });
      const errors = [...dead.values()].sort();
      for (const name of ["thaw-attempts", "thaw-due", "thaw-enqueued", "thaw-runs"]) {
        assert.ok(errors.some((e) => e.includes(name)), `${name} named in ${errors.join(" | ")}`);
      }
      assert.equal(await visible(queue), 0);
    }));

  it("makes no queue to count, list, retry or delete jobs", () =>
    onStore("unread", async (store, queue) => {
      store.know([{ queue, timeoutMs: 3000, where: "a test" }]);
      const counts = await store.counts();
      assert.deepEqual(
        counts.map(({ state, jobs }) => [state, jobs]),
        [["waiting", 0], ["running", 0], ["dead", 0]],
      );
      assert.deepEqual(await store.dead(10), []);
      assert.equal(await store.revive(crypto.randomUUID()), undefined);
      assert.equal(await store.remove(crypto.randomUUID()), false);
      assert.equal(await exists(queue), false);
      assert.equal(await exists(`${queue}-dead`), false);
    }));

  it("finds two dead jobs searched for at once, and one found when showing the others failed", async () => {
    const queue = queueName("searched");
    const failBatch = { on: false };
    let received = 0;
    const proxy = await SqsProxy.start(ELASTICMQ, {
      before: (action) => {
        if (failBatch.on && action === "ChangeMessageVisibilityBatch") throw new Error("refused");
      },
      after: (action) => {
        if (action === "ReceiveMessage") received++;
      },
    });
    const store = storeAt(proxy.endpoint);
    try {
      store.know([{ queue, timeoutMs: 3000, where: "a test" }]);
      const deadUrl = await urlOf(`${queue}-dead`);
      const sendDead = (id: string) =>
        raw.send(
          new SendMessageCommand({
            QueueUrl: deadUrl,
            MessageBody: "{}",
            MessageAttributes: {
              "thaw-id": { DataType: "String", StringValue: id },
              "thaw-runs": numberAttribute("3"),
            },
          }),
        );
      // Ten in a receive's batch, the eleventh in the next.
      const ids = Array.from({ length: 11 }, () => crypto.randomUUID());
      for (const id of ids) await sendDead(id);
      // The second search starts while the first holds the first ten invisible.
      const first = store.remove(ids[10]);
      await waitFor("the first search's first batch", () => received >= 1);
      const second = store.remove(ids[0]);
      assert.deepEqual(await Promise.all([first, second]), [true, true]);
      // Each search showed again the messages it passed, the found one's batch included.
      assert.equal(await visible(`${queue}-dead`), 9);

      // One passed over first, whose showing again fails: it comes back after its look.
      const other = crypto.randomUUID();
      await sendDead(other);
      const found = crypto.randomUUID();
      await sendDead(found);
      failBatch.on = true;
      assert.equal(await store.revive(found), queue);
    } finally {
      store.close();
      await proxy.close();
    }
  });

  it("puts a job whose next message SQS refuses to dead, never sending it again for ever", () =>
    onStore("refused", async (store, queue) => {
      store.know([{ queue, timeoutMs: 3000, where: "a test" }]);
      // Due in an hour, with nine more attributes of its own: the message sent again for its
      // due time would carry thirteen, over SQS's ten.
      const attributes: Record<string, MessageAttributeValue> = {
        "thaw-due": numberAttribute(String(Date.now() + 3_600_000)),
      };
      for (let i = 0; i < 9; i++) {
        attributes[`thaw-extra-${i}`] = { DataType: "String", StringValue: "x" };
      }
      await raw.send(
        new SendMessageCommand({
          QueueUrl: await urlOf(queue),
          MessageBody: '{"n":1}',
          MessageAttributes: attributes,
        }),
      );
      await waitFor("the job dead", async () => {
        assert.deepEqual(await store.take(queue, 10, 3000), []);
        return (await store.dead(10)).length === 1;
      });
      const [dead] = await store.dead(10);
      assert.match(dead.error ?? "", /could not be sent again/);
      assert.equal(await visible(queue), 0);
    }));

  it("sends nothing for a run that ended past its lease: its message is another's", () =>
    onStore("late-end", async (store, queue) => {
      await store.enqueue(job(queue), undefined);
      const [taken] = await store.take(queue, 1, 3000);
      assert.ok(taken !== undefined);
      // Its lease (3 s) ended, then its last window: the message is visible again.
      await waitFor("the message visible again", async () => await visible(queue) === 1);
      for (const step of [{ state: "dead" }, { state: "released" }] as const) {
        assert.equal(await store.finish(taken, step, "late"), false);
      }
      assert.equal(await visible(`${queue}-dead`), 0);
      assert.equal(await visible(queue), 1);
    }));

  it("counts and sends again once a queue it knew was deleted", () =>
    onStore("deleted", async (store, queue) => {
      store.know([{ queue, timeoutMs: 3000, where: "a test" }]);
      await store.enqueue(job(queue), undefined);
      await raw.send(new DeleteQueueCommand({ QueueUrl: await urlOf(queue) }));
      await waitFor("the queue gone", async () => !await exists(queue));
      const counts = await store.counts();
      assert.deepEqual(counts.map(({ jobs }) => jobs), [0, 0, 0]);
      await store.enqueue(job(queue), undefined);
      assert.equal(await visible(queue), 1);
    }));

  it("lists a dead message another sender wrote, its id and time read safely", () =>
    onStore("foreign-dead", async (store, queue) => {
      store.know([{ queue, timeoutMs: 3000, where: "a test" }]);
      await raw.send(
        new SendMessageCommand({
          QueueUrl: await urlOf(`${queue}-dead`),
          MessageBody: "{}",
          MessageAttributes: {
            "thaw-id": { DataType: "String", StringValue: "forged\nline two, <b>not an id</b>" },
            "thaw-died": numberAttribute("1e20"),
            "thaw-runs": numberAttribute("-1"),
          },
        }),
      );
      const [dead] = await store.dead(10);
      assert.match(dead.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.ok(!Number.isNaN(Date.parse(dead.diedAt)));
      assert.ok(Date.parse(dead.diedAt) <= Date.now() + 60_000, dead.diedAt);
      assert.equal(dead.attempt, 0);
      assert.equal(await store.remove(dead.id), true);
    }));

  it("refuses a delay past the latest date, naming the queue, and sends nothing", () =>
    onStore("far", async (store, queue) => {
      await assert.rejects(
        store.enqueue({ ...job(queue), delayMs: Number.MAX_SAFE_INTEGER }, undefined),
        (error: Error) => error instanceof TypeError && error.message.includes(`"${queue}"`),
      );
      assert.equal(await exists(queue), false);
    }));
});
