/**
 * What Thaw's jobs on Cloudflare Queues cost on workerd, against a worker that calls the Queues
 * API itself for the same work (bench/queues/raw_worker.ts):
 *
 *   node --import tsx bench/jobs_workerd.ts [--jobs 2000] [--rounds 3]
 *
 * Each worker (bench/queues/thaw_worker.ts: `jobs.store: cloudflare`, a no-op `@JobHandler` of 10
 * runs at once) is served by workerd of its own, its producer binding sending to a queue served on
 * loopback by this process (tests/edge/queue_broker.ts), which delivers the messages by batches of
 * 10, one batch at a time, through a trigger worker (a service binding's `queue()`, as the edge
 * tests do). Two figures, jobs per second, each the median of `--rounds` rounds:
 *
 * - enqueue: `--jobs` jobs sent by requests of 50 each (the worker sends them in turn), one
 *   request at a time;
 * - consume: every message delivered and acknowledged.
 *
 * The queue and the trigger are the same for both workers: the ratio is what Thaw adds (its
 * envelope, the checks, the handler's run) to the Queues API calls themselves. What a message
 * costs Cloudflare's own queues is not measured here.
 *
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { type Delivered, QueueBroker, type QueueResult } from "../tests/edge/queue_broker.ts";
import { serveWithTrigger, type TriggeredWorker } from "../tests/edge/workerd.ts";

const { values } = parseArgs({
  options: { jobs: { type: "string", default: "2000" }, rounds: { type: "string", default: "3" } },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const PER_REQUEST = 50;

// POST / { queue, messages }: delivers them to the worker's queue handler, answers its result.
const TRIGGER = `export default {
  async fetch(request, env) {
    const { queue, messages } = await request.json();
    const given = messages.map((m) => ({ ...m, timestamp: new Date(m.timestamp) }));
    return Response.json(await env.APP.queue(queue, given));
  },
};
`;

const config = (name: string, port: number) =>
  `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "app", worker = .app),
    (name = "trigger", worker = .trigger),
    (name = "q-work", external = (address = "127.0.0.1:${port}", http = ())),
  ],
  sockets = [
    (name = "app", address = "127.0.0.1:0", http = (), service = "app"),
    (name = "trigger", address = "127.0.0.1:0", http = (), service = "trigger"),
  ],
);

const app :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "${name}.js")],
  compatibilityDate = "2026-10-23",
  bindings = [(name = "Q", queue = "q-work")],
);

const trigger :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "trigger.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = ["service_binding_extra_handlers"],
  bindings = [(name = "APP", service = "app")],
);
`;

/** One worker under test, its queue and its workerd. */
interface Contender {
  readonly name: string;
  readonly broker: QueueBroker;
  readonly served: TriggeredWorker;
  readonly dir: string;
}

async function start(name: string): Promise<Contender> {
  const broker = new QueueBroker();
  const port = await broker.serve("work");
  const dir = await mkdtemp(join(tmpdir(), `thaw-bench-queues-${name}-`));
  const served = await serveWithTrigger({
    fixture: fileURLToPath(new URL(`./queues/${name}.ts`, import.meta.url)),
    name,
    dir,
    trigger: TRIGGER,
    config: config(name, port),
    readyPath: "/ran",
  });
  return { name, broker, served, dir };
}

async function stop({ broker, served, dir }: Contender): Promise<void> {
  served.child.kill();
  await broker.close();
  await rm(dir, { recursive: true, force: true });
}

// Jobs per second of each phase of one round.
async function round({ broker, served }: Contender): Promise<{ enqueue: number; consume: number }> {
  const began = performance.now();
  for (let sent = 0; sent < JOBS; sent += PER_REQUEST) {
    const response = await fetch(`${served.app}/enqueue/${Math.min(PER_REQUEST, JOBS - sent)}`, {
      method: "POST",
    });
    if (!response.ok) throw new Error(`enqueue: ${response.status} ${await response.text()}`);
    await response.body?.cancel();
  }
  const enqueued = performance.now();
  if (broker.messages("work").length !== JOBS) {
    throw new Error(`the queue holds ${broker.messages("work").length} of ${JOBS} messages`);
  }
  const deliver = async (queue: string, messages: Delivered[]): Promise<QueueResult> => {
    const response = await fetch(served.trigger, {
      method: "POST",
      body: JSON.stringify({ queue, messages }),
    });
    if (!response.ok) throw new Error(`deliver: ${response.status} ${await response.text()}`);
    return await response.json();
  };
  while (await broker.deliver("work", deliver) !== undefined) {
    // Every batch acknowledged: the queue empties.
  }
  const consumed = performance.now();
  if (broker.messages("work").length !== 0) throw new Error("messages were not acknowledged");
  return {
    enqueue: JOBS / ((enqueued - began) / 1000),
    consume: JOBS / ((consumed - enqueued) / 1000),
  };
}

const median = (list: number[]) => list.toSorted((a, b) => a - b)[Math.floor(list.length / 2)];

const results: Record<string, { enqueue: number; consume: number }> = {};
for (const name of ["raw_worker", "thaw_worker"]) {
  const contender = await start(name);
  try {
    // A first round warms workerd up, and is not counted.
    await round(contender);
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(contender));
    results[name] = {
      enqueue: median(rounds.map((r) => r.enqueue)),
      consume: median(rounds.map((r) => r.consume)),
    };
  } finally {
    await stop(contender);
  }
}

const raw = results.raw_worker;
const thaw = results.thaw_worker;
console.log(
  `Jobs on Cloudflare Queues, on workerd: ${JOBS} jobs, median of ${ROUNDS} rounds (jobs/s)`,
);
console.log("| worker | enqueue | consume |");
console.log("|---|---|---|");
console.log(`| the Queues API alone | ${raw.enqueue.toFixed(0)} | ${raw.consume.toFixed(0)} |`);
console.log(
  `| Thaw, jobs.store: cloudflare | ${thaw.enqueue.toFixed(0)} (${
    (thaw.enqueue / raw.enqueue).toFixed(2)
  }x) | ${thaw.consume.toFixed(0)} (${(thaw.consume / raw.consume).toFixed(2)}x) |`,
);
