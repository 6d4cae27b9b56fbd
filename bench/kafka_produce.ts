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
 * (`--records` records a batch). In flight, the bare baseline is the package's producer without
 * idempotence (`acks: all` still): its idempotent producer acknowledges records sent while
 * another is in flight at one offset and keeps only the first (the template sends them together
 * as the next request instead). Batches of the template and of the bare producer run in turn (A B,
 * then B A); per pair the ratio of their rates and of the process's CPU time per record (the
 * steadier figure on a shared machine: the broker's own time is in neither). Reported: the median
 * of each and the median ratios with the range of the middle half.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import process from "node:process";
import { parseArgs } from "node:util";
import { Admin, compatibilityPartitioner, Producer } from "@platformatic/kafka";
import { bootstrap } from "../mod.ts";
import { kafka, KafkaTemplate } from "../kafka.ts";
import { quartiles, runtimeName } from "./measure.ts";

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
const bareProducer = (idempotent: boolean) =>
  new Producer({
    clientId: "bench-bare",
    bootstrapBrokers: [BROKER],
    acks: -1,
    idempotent,
    partitioner: compatibilityPartitioner,
    autocreateTopics: true,
  });
const bare = bareProducer(true);
// The package's idempotent producer loses records sent while another is in flight (they are
// acknowledged at one offset): in flight, the baseline is its producer without idempotence,
// `acks: all` still, which sends them correctly (up to 5 requests in flight).
const bareConcurrent = bareProducer(false);

const value = (i: number) => ({ id: i, customer: "c-42", total: 12.5, lines: [1, 2, 3] });
const key = (i: number) => `customer-${i % 97}`;

type Sender = (i: number) => Promise<unknown>;
const viaTemplate: Sender = (i) => template.send(topic, value(i), { key: key(i) });
const bareSender = (producer: Producer): Sender => (i) =>
  producer.send({
    messages: [{
      topic,
      key: Buffer.from(key(i), "utf8"),
      value: Buffer.from(JSON.stringify(value(i)), "utf8"),
    }],
  });
const viaBare = bareSender(bare);
const viaBareConcurrent = bareSender(bareConcurrent);

/** A batch's records per second, and the process's CPU time per record (µs). */
interface Measured {
  readonly rate: number;
  readonly cpu: number;
}

async function measure(count: number, sendAll: () => Promise<void>): Promise<Measured> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  await sendAll();
  const used = process.cpuUsage(cpu);
  return {
    rate: count / ((performance.now() - start) / 1000),
    cpu: (used.user + used.system) / count,
  };
}

// `count` sends, one awaited after the other.
function sequential(send: Sender, count: number): Promise<Measured> {
  return measure(count, async () => {
    for (let i = 0; i < count; i++) await send(i);
  });
}

// `count` sends, `window` of them outstanding at any time.
function inFlight(send: Sender, count: number, window: number): Promise<Measured> {
  let next = 0;
  const lane = async () => {
    while (next < count) await send(next++);
  };
  return measure(count, async () => {
    await Promise.all(Array.from({ length: window }, lane));
  });
}

const runtime = runtimeName();

const modes = [
  {
    label: `one at a time (${SEQUENTIAL} awaited sends a batch)`,
    baseline: viaBare,
    baselineName: "bare Producer (idempotent)",
    run: (send: Sender) => sequential(send, SEQUENTIAL),
  },
  {
    label: `${IN_FLIGHT} in flight (${RECORDS} records a batch)`,
    baseline: viaBareConcurrent,
    baselineName: "bare Producer (not idempotent)",
    run: (send: Sender) => inFlight(send, RECORDS, IN_FLIGHT),
  },
];

try {
  // Warm up: connections, metadata, the producer ids, the JIT.
  for (const { run, baseline } of modes) {
    await run(viaTemplate);
    await run(baseline);
  }
  console.log(`${runtime}: ${BATCHES} pairs of batches, topic ${topic} (3 partitions, acks all)`);
  for (const { label, run, baseline, baselineName } of modes) {
    const ours: number[] = [];
    const theirs: number[] = [];
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const ourCpu: number[] = [];
    const theirCpu: number[] = [];
    for (let i = 0; i < BATCHES; i++) {
      let a: Measured;
      let b: Measured;
      if (i % 2 === 0) {
        a = await run(baseline);
        b = await run(viaTemplate);
      } else {
        b = await run(viaTemplate);
        a = await run(baseline);
      }
      theirs.push(a.rate);
      ours.push(b.rate);
      ratios.push(b.rate / a.rate);
      theirCpu.push(a.cpu);
      ourCpu.push(b.cpu);
      cpuRatios.push(b.cpu / a.cpu);
    }
    const [, t2] = quartiles(ours);
    const [, b2] = quartiles(theirs);
    const [r1, r2, r3] = quartiles(ratios);
    const [, tc] = quartiles(ourCpu);
    const [, bc] = quartiles(theirCpu);
    const [c1, c2, c3] = quartiles(cpuRatios);
    console.log(
      `${label}: KafkaTemplate ${t2.toFixed(0)} records/s, ${baselineName} ${b2.toFixed(0)} ` +
        `records/s: ${r2.toFixed(3)}x the bare rate (${r1.toFixed(3)}..${r3.toFixed(3)}); ` +
        `CPU ${tc.toFixed(1)} µs against ${bc.toFixed(1)} µs a record: ${c2.toFixed(3)}x ` +
        `(${c1.toFixed(3)}..${c3.toFixed(3)})`,
    );
  }
} finally {
  await app.close();
  await bare.close();
  await bareConcurrent.close();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.close();
}
