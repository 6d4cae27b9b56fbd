// Jobs on Cloudflare Queues, on real workerd: a worker (tests/fixtures/jobs/cloudflare_worker.ts),
// bundled as tools/bundle_worker.ts bundles the sample app and exported as `export default app`,
// enqueues through its producer bindings, and its `queue` export runs the handlers.
//
// workerd serves a producer binding by sending each message to a service (tests/edge/
// queue_broker.ts: one loopback server of this process per queue, which keeps the messages), and
// has no queue consumer of its own: a trigger worker delivers the broker's messages through a
// service binding, `env.APP.queue(queue, messages)`, which resolves to what the worker's handler
// did with each (acknowledged, retried, with what delay). That method exists only with the
// compatibility flag `service_binding_extra_handlers`, which is experimental: `workerd serve
// --experimental`. The flag is the trigger worker's alone; the worker under test has none.
import { after, before, describe, it } from "node:test";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Delivered, QueueBroker, type QueueResult } from "./queue_broker.ts";
import { serveWithTrigger } from "./workerd.ts";
import { suiteTempDirs } from "../temp_dir.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/jobs/cloudflare_worker.ts", import.meta.url));

// POST / { queue, messages }: delivers them to the worker's queue handler, answers its result. A
// message's \`bytes\` (base64) is its body as bytes, which JSON cannot carry here.
const TRIGGER = `export default {
  async fetch(request, env) {
    const { queue, messages } = await request.json();
    const given = messages.map(({ bytes, ...m }) => ({
      ...m,
      timestamp: new Date(m.timestamp),
      ...bytes === undefined ? {} : { body: Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0)) },
    }));
    return Response.json(await env.APP.queue(queue, given));
  },
};
`;

// Every queue the worker sends to, by the binding it has for it (`mail`'s is named by the
// app's jobs.cloudflare.bindings; `once` has no dead queue).
const BINDINGS: Readonly<Record<string, string>> = {
  MAIL: "mail",
  "mail-dead": "mail-dead",
  strict: "strict",
  "strict-dead": "strict-dead",
  pair: "pair",
  slow: "slow",
  "slow-dead": "slow-dead",
  once: "once",
};

const config = (ports: Readonly<Record<string, number>>) =>
  `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "app", worker = .app),
    (name = "trigger", worker = .trigger),
${
    Object.entries(ports).map(([queue, port]) =>
      `    (name = "q-${queue}", external = (address = "127.0.0.1:${port}", http = ())),`
    ).join("\n")
  }
  ],
  sockets = [
    (name = "app", address = "127.0.0.1:0", http = (), service = "app"),
    (name = "trigger", address = "127.0.0.1:0", http = (), service = "trigger"),
  ],
);

const app :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "cloudflare_worker.js")],
  compatibilityDate = "2026-10-23",
  bindings = [
${
    Object.entries(BINDINGS).map(([binding, queue]) =>
      `    (name = "${binding}", queue = "q-${queue}"),`
    ).join("\n")
  }
  ],
);

const trigger :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "trigger.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = ["service_binding_extra_handlers"],
  bindings = [(name = "APP", service = "app")],
);
`;

interface Run {
  queue: string;
  id: string;
  attempt: number;
  payload: unknown;
  enqueuedAt: string;
}

interface Envelope {
  thaw: { id: string; enqueuedAt: number; due?: number; runs?: number; error?: string };
  payload: unknown;
}

describe("jobs on Cloudflare Queues, on workerd", () => {
  const broker = new QueueBroker();
  let app: string;
  let trigger: string;
  let child: ChildProcess | undefined;
  let output: () => string = () => "";
  after(async () => {
    child?.kill();
    await broker.close();
  });
  // Registered after workerd's stop, so that its folder goes after it.
  const suiteDir = suiteTempDirs();

  const runs = async (id?: string): Promise<Run[]> => {
    const all: Run[] = await (await fetch(`${app}/runs`)).json();
    return id === undefined ? all : all.filter((run) => run.id === id);
  };
  const logs = async (): Promise<string[]> => await (await fetch(`${app}/logs`)).json();
  const enqueue = async (
    queue: string,
    payload: unknown,
    options?: Record<string, unknown>,
  ): Promise<{ status: number; body: { id?: string; created?: boolean; error?: string } }> => {
    const response = await fetch(`${app}/enqueue/${queue}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ payload, options }),
    });
    return { status: response.status, body: await response.json() };
  };
  const toWorker = async (queue: string, messages: Delivered[]): Promise<QueueResult> => {
    const carried = messages.map((m) =>
      m.body instanceof Uint8Array
        ? { ...m, body: null, bytes: Buffer.from(m.body).toString("base64") }
        : m
    );
    const response = await fetch(trigger, {
      method: "POST",
      body: JSON.stringify({ queue, messages: carried }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, `the trigger worker failed: ${text}\n${output()}`);
    return JSON.parse(text);
  };
  const deliver = (queue: string) => broker.deliver(queue, toWorker);
  // The one message `queue` holds, as its envelope.
  const only = (queue: string) => {
    const messages = broker.messages(queue);
    assert.equal(messages.length, 1, `${queue} holds ${messages.length} messages`);
    return messages[0];
  };

  before(async () => {
    const ports: Record<string, number> = {};
    for (const queue of new Set(Object.values(BINDINGS))) ports[queue] = await broker.serve(queue);
    const served = await serveWithTrigger({
      fixture: FIXTURE,
      name: "cloudflare_worker",
      dir: await suiteDir("thaw-workerd-jobs-"),
      trigger: TRIGGER,
      config: config(ports),
      readyPath: "/runs",
    });
    ({ child, output, app, trigger } = served);
  });

  it("sends a job through its producer binding, and runs it once when it is delivered", async () => {
    const { status, body } = await enqueue("mail", { to: "ada@example.com" });
    assert.equal(status, 200, body.error);
    assert.equal(body.created, true);
    const message = only("mail");
    assert.equal(message.contentType, "json");
    const envelope = message.body as Envelope;
    assert.deepEqual(envelope.payload, { to: "ada@example.com" });
    assert.equal(envelope.thaw.id, body.id);
    const delivery = await deliver("mail");
    assert.deepEqual(delivery?.result, {
      outcome: "ok",
      ackAll: false,
      retryBatch: { retry: false },
      explicitAcks: [message.id],
      retryMessages: [],
    });
    const [run, ...more] = await runs(body.id);
    assert.deepEqual(more, []);
    assert.deepEqual(run, {
      queue: "mail",
      id: body.id,
      attempt: 1,
      payload: { to: "ada@example.com" },
      enqueuedAt: new Date(envelope.thaw.enqueuedAt).toISOString(),
    });
    assert.deepEqual(broker.messages("mail"), []);
  });

  it("retries a failed run after the backoff: failing twice then passing, it runs 3 times", async () => {
    const { body } = await enqueue("mail", { fail: 2 });
    const message = only("mail");
    assert.deepEqual((await deliver("mail"))?.result.retryMessages, [
      { msgId: message.id, delaySeconds: 1 },
    ]);
    // Not due before its delay.
    assert.equal(await deliver("mail"), undefined);
    broker.advance(1000);
    assert.deepEqual((await deliver("mail"))?.result.retryMessages, [
      { msgId: message.id, delaySeconds: 2 },
    ]);
    broker.advance(2000);
    assert.deepEqual((await deliver("mail"))?.result.explicitAcks, [message.id]);
    assert.deepEqual((await runs(body.id)).map((run) => run.attempt), [1, 2, 3]);
    assert.deepEqual(broker.messages("mail"), []);
  });

  it("sends a job past its attempts to the dead queue, with its last error", async () => {
    const { body } = await enqueue("mail", { fail: 5 });
    for (let delivery = 1; delivery <= 3; delivery++) {
      assert.notEqual(await deliver("mail"), undefined, `delivery ${delivery}`);
      broker.advance(10_000);
    }
    assert.deepEqual(broker.messages("mail"), []);
    assert.deepEqual((await runs(body.id)).map((run) => run.attempt), [1, 2, 3]);
    const dead = only("mail-dead").body as Envelope;
    assert.equal(dead.thaw.id, body.id);
    assert.equal(dead.thaw.runs, 3);
    assert.match(dead.thaw.error ?? "", /failing on purpose, run 3/);
    assert.deepEqual(dead.payload, { fail: 5 });
    assert.ok(
      (await logs()).some((line) =>
        line.startsWith(`error @JobHandler("mail") (Handlers.mail()): job ${body.id} is dead`)
      ),
    );
  });

  it("gives a payload its handler's schema refuses to the dead queue, untried", async () => {
    const { body } = await enqueue("strict", { to: 42 });
    await deliver("strict");
    assert.deepEqual(await runs(body.id), []);
    assert.deepEqual(broker.messages("strict"), []);
    const dead = only("strict-dead").body as Envelope;
    assert.equal(dead.thaw.id, body.id);
    assert.match(dead.thaw.error ?? "", /schema refused its payload: to: to is text/);
  });

  it("runs the jobs of a batch `concurrency` at a time", async () => {
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await enqueue("pair", { n })).body.id as string);
    const delivery = await deliver("pair");
    assert.equal(delivery?.delivered.length, 5);
    assert.equal(delivery?.result.explicitAcks.length, 5);
    for (const id of ids) assert.equal((await runs(id)).length, 1);
    assert.deepEqual(await (await fetch(`${app}/pair`)).json(), { running: 0, most: 2 });
  });

  it("aborts a run's signal at its timeout, and counts the run as failed", async () => {
    const { body } = await enqueue("slow", {});
    await deliver("slow");
    assert.equal((await runs(body.id)).length, 1);
    const dead = only("slow-dead").body as Envelope;
    assert.match(dead.thaw.error ?? "", /outlasted its lease \(timeout 100 ms\)/);
  });

  it("gives a delay within 12 hours to the message; past it, sends it again for the rest", async () => {
    const { body: soon } = await enqueue("mail", { to: "soon" }, { delay: "5m" });
    assert.equal(broker.sent.at(-1)?.delaySeconds, 300);
    broker.advance(300_000);
    await deliver("mail");
    assert.equal((await runs(soon.id)).length, 1);

    const { body: late } = await enqueue("mail", { to: "late" }, { delay: "13h" });
    const first = only("mail");
    assert.equal(broker.sent.at(-1)?.delaySeconds, 43_200);
    const due = (first.body as Envelope).thaw.due as number;
    assert.ok(due - (first.body as Envelope).thaw.enqueuedAt === 13 * 3_600_000);
    broker.advance(43_200_000);
    // Delivered 12 hours on, an hour early: sent again for the rest, acknowledged, not run.
    assert.deepEqual((await deliver("mail"))?.result.explicitAcks, [first.id]);
    assert.deepEqual(await runs(late.id), []);
    // The worker's clock did not move as the broker's did: the rest is 13 hours still, sent
    // with the longest delay again, the due time kept.
    const again = only("mail");
    assert.notEqual(again.id, first.id);
    assert.deepEqual(again.body, first.body);
    assert.equal(broker.sent.at(-1)?.delaySeconds, 43_200);
    broker.purge("mail");
  });

  it("refuses a unique key and a priority before anything is sent", async () => {
    const sent = broker.sent.length;
    const keyed = await enqueue("mail", {}, { key: "k" });
    assert.equal(keyed.status, 400);
    assert.match(keyed.body.error ?? "", /a unique key needs a store .* Cloudflare Queues cannot/);
    const ranked = await enqueue("mail", {}, { priority: 1 });
    assert.equal(ranked.status, 400);
    assert.match(ranked.body.error ?? "", /a priority needs a store/);
    assert.equal(broker.sent.length, sent);
  });

  it("names the queue and its binding when the send fails, and keeps nothing", async () => {
    broker.failSends("mail", 1);
    const failed = await enqueue("mail", { to: "nobody" });
    assert.equal(failed.status, 500);
    assert.match(
      failed.body.error ?? "",
      /could not send a job to queue "mail" \(binding MAIL\): .*failing on purpose/,
    );
    const unbound = await enqueue("nowhere", {});
    assert.equal(unbound.status, 500);
    assert.match(unbound.body.error ?? "", /queue "nowhere" has no producer binding "nowhere"/);
    assert.match(unbound.body.error ?? "", /the worker's queue bindings: MAIL, mail-dead, /);
    assert.deepEqual(broker.messages("mail"), []);
  });

  it("retries a message whose dead job could not be sent, and never runs it again", async () => {
    const { body } = await enqueue("mail", { fail: 9 });
    for (let delivery = 1; delivery <= 2; delivery++) {
      await deliver("mail");
      broker.advance(10_000);
    }
    broker.failSends("mail-dead", 1);
    const third = await deliver("mail");
    // Its dead message not sent: delivered again after a wait (10 s, doubling with each
    // delivery), not at once.
    assert.deepEqual(third?.result.retryMessages, [{ msgId: only("mail").id, delaySeconds: 40 }]);
    assert.equal(only("mail").attempts, 3);
    broker.advance(39_000);
    assert.equal(await deliver("mail"), undefined);
    broker.advance(1000);
    // Delivered a fourth time: past its attempts, it goes to the dead queue, not run.
    await deliver("mail");
    assert.deepEqual((await runs(body.id)).map((run) => run.attempt), [1, 2, 3]);
    assert.deepEqual(broker.messages("mail"), []);
    const dead = broker.messages("mail-dead").map((m) => m.body as Envelope)
      .filter((envelope) => envelope.thaw.id === body.id);
    assert.equal(dead.length, 1);
    assert.equal(dead[0].thaw.runs, 3);
    assert.match(
      dead[0].thaw.error ?? "",
      /^its runs were used up: the end of its last was not recorded/,
    );
  });

  it("leaves a dead job with no dead queue to the queue's max_retries, never run again", async () => {
    const { body } = await enqueue("once", { fail: 1 });
    const message = only("once");
    for (let delivery = 1; delivery <= 4; delivery++) {
      assert.deepEqual((await deliver("once"))?.result.retryMessages, [{ msgId: message.id }]);
    }
    assert.equal((await runs(body.id)).length, 1);
    assert.deepEqual(broker.messages("once"), []);
    assert.equal(broker.dead.at(-1)?.id, message.id);
    assert.ok(
      (await logs()).some((line) =>
        line.includes(
          `job ${body.id} has no dead queue to go to (no producer binding for "once-dead")`,
        )
      ),
    );
  });

  it("runs another producer's message with its body as the payload", async () => {
    const message = broker.put("mail", { to: "grace@example.com" });
    assert.deepEqual((await deliver("mail"))?.result.explicitAcks, [message.id]);
    const [run] = await runs(message.id);
    assert.deepEqual(run.payload, { to: "grace@example.com" });
    assert.equal(run.attempt, 1);
  });

  it("reads a hostile envelope under the message's id, and a body JSON cannot hold as dead", async () => {
    const before = (await runs()).length;
    const forged = broker.put("mail", {
      thaw: { id: "x\r\nerror forged line", trace: "\u0000", attempts: -1, due: "soon" },
      payload: { to: "eve" },
    });
    const bytes = broker.put("mail", new Uint8Array([0, 255, 10]), "bytes");
    const delivery = await deliver("mail");
    assert.deepEqual(delivery?.result.explicitAcks, [forged.id, bytes.id]);
    const ran = (await runs()).slice(before);
    assert.deepEqual(ran.map(({ id, payload, attempt }) => ({ id, payload, attempt })), [
      { id: forged.id, payload: { to: "eve" }, attempt: 1 },
    ]);
    const dead = broker.messages("mail-dead").map((m) => m.body as Envelope)
      .find((body) => body.thaw.id === bytes.id);
    assert.equal(dead?.payload, null);
    assert.match(
      dead?.thaw.error ?? "",
      /^its body is not JSON \(the message: the payload must be JSON: payload is a Uint8Array/,
    );
    // What a handler refuses is logged under the message's id, not the envelope's.
    const refused = broker.put("strict", { thaw: { id: "y\nforged" }, payload: { to: 1 } });
    await deliver("strict");
    const lines = await logs();
    assert.ok(lines.some((line) => line.includes(`job ${refused.id} is dead after run 1`)));
    assert.ok(lines.every((line) => !line.includes("forged")));
  });

  it("fails a batch of a queue no handler runs: its messages are delivered again", async () => {
    const message = broker.put("nobody", { to: "no one" });
    const delivery = await deliver("nobody");
    assert.equal(delivery?.result.outcome, "exception");
    assert.deepEqual(delivery?.result.explicitAcks, []);
    assert.equal(only("nobody").id, message.id);
    assert.equal(only("nobody").attempts, 1);
  });
});
