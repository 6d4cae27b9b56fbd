/**
 * Records per second sent by `KafkaTemplate.send` against the bare `@platformatic/kafka` Producer
 * doing the same, in the same run, against the test broker (`tools/kafka.sh start`), on the
 * runtime that runs this file:
 *
 *   deno run -A bench/kafka_produce.ts [--batches 12] [--sequential 400] [--in-flight 64]
 *     [--records 4000]
 *   bun bench/kafka_produce.ts
 *   node --import tsx bench/kafka_produce.ts
 *
 * Both send the same small JSON value with a text key to one topic of 3 partitions, `acks: all`
 * and the idempotent producer, Java's partitioner: the template from `bootstrap({ kafka:
 * kafka() })` (with OpenTelemetry's API installed and no provider registered, as an app that
 * has not set up tracing runs it), the bare producer made as the package's README makes one,
 * serializing the value with `JSON.stringify` itself. Two ways of sending: one record at a time,
 * each send awaited (`--sequential` records a batch), and `--in-flight` sends outstanding at once
 * (`--records` records a batch). Batches of the template and of the bare producer run in turn (A B,
 * then B A); per pair the ratio of their rates. Reported: the median rate of each and the median
 * ratio with the range of the middle half.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import process from "node:process";
import { parseArgs } from "node:util";
import { Admin, compatibilityPartitioner, Producer } from "@platformatic/kafka";
import { bootstrap } from "../mod.ts";
import { kafka, KafkaTemplate } from "../kafka.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "12" },
    sequential: { type: "string", default: "400" },
    "in-flight": { type: "string", default: "64" },
    records: { type: "string", default: "4000" },
    bootstrap: { type: "string", default: process.env.KAFKA_BOOTSTRAP ?? "127.0.0.1:9092" },
  },
});
const BATCHES = Number(values.batches);
const SEQUENTIAL = Number(values.sequential);
const IN_FLIGHT = Number(values["in-flight"]);
const RECORDS = Number(values.records);
const BROKER = values.bootstrap;

const topic = `bench-produce-${Date.now().toString(36)}-${process.pid}`;
const admin = new Admin({ clientId: "thaw-bench", bootstrapBrokers: [BROKER] });
try {
  await admin.createTopics({ topics: [topic], partitions: 3, replicas: 1 });
} catch (error) {
  console.error(
    `Kafka is not reachable at ${BROKER}: start it with tools/kafka.sh start ` +
      `(${(error as Error).message})`,
  );
  process.exit(1);
}

const app = await bootstrap({
  config: { kafka: { "bootstrap-servers": BROKER, "client-id": "bench-template" } },
  kafka: kafka(),
});
const template = app.getBean(KafkaTemplate);
const bare = new Producer({
  clientId: "bench-bare",
  bootstrapBrokers: [BROKER],
  acks: -1,
  idempotent: true,
  partitioner: compatibilityPartitioner,
  autocreateTopics: true,
});

const value = (i: number) => ({ id: i, customer: "c-42", total: 12.5, lines: [1, 2, 3] });
const key = (i: number) => `customer-${i % 97}`;

type Sender = (i: number) => Promise<unknown>;
const viaTemplate: Sender = (i) => template.send(topic, value(i), { key: key(i) });
const viaBare: Sender = (i) =>
  bare.send({
    messages: [{
      topic,
      key: Buffer.from(key(i), "utf8"),
      value: Buffer.from(JSON.stringify(value(i)), "utf8"),
    }],
  });

// Records per second of `count` sends, one awaited after the other.
async function sequential(send: Sender, count: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await send(i);
  return count / ((performance.now() - start) / 1000);
}

// Records per second of `count` sends, `window` of them outstanding at any time.
async function inFlight(send: Sender, count: number, window: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < count) await send(next++);
  };
  await Promise.all(Array.from({ length: window }, lane));
  return count / ((performance.now() - start) / 1000);
}

function quartiles(xs: number[]): [number, number, number] {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return [at(0.25), at(0.5), at(0.75)];
}

const runtime = "Deno" in globalThis
  ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
  : "Bun" in globalThis
  ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : `Node ${process.versions.node}`;

const modes = [
  {
    label: `one at a time (${SEQUENTIAL} awaited sends a batch)`,
    run: (send: Sender) => sequential(send, SEQUENTIAL),
  },
  {
    label: `${IN_FLIGHT} in flight (${RECORDS} records a batch)`,
    run: (send: Sender) => inFlight(send, RECORDS, IN_FLIGHT),
  },
];

try {
  // Warm up: connections, metadata, the producer ids, the JIT.
  for (const { run } of modes) {
    await run(viaTemplate);
    await run(viaBare);
  }
  console.log(`${runtime}: ${BATCHES} pairs of batches, topic ${topic} (3 partitions, acks all)`);
  for (const { label, run } of modes) {
    const ours: number[] = [];
    const theirs: number[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < BATCHES; i++) {
      let a: number;
      let b: number;
      if (i % 2 === 0) {
        a = await run(viaBare);
        b = await run(viaTemplate);
      } else {
        b = await run(viaTemplate);
        a = await run(viaBare);
      }
      theirs.push(a);
      ours.push(b);
      ratios.push(b / a);
    }
    const [, t2] = quartiles(ours);
    const [, b2] = quartiles(theirs);
    const [r1, r2, r3] = quartiles(ratios);
    console.log(
      `${label}: KafkaTemplate ${t2.toFixed(0)} records/s, bare Producer ${b2.toFixed(0)} ` +
        `records/s: ${r2.toFixed(3)}x the bare rate (${r1.toFixed(3)}..${r3.toFixed(3)})`,
    );
  }
} finally {
  await app.close();
  await bare.close();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.close();
}
