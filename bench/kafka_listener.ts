/**
 * Messages per second consumed by a `@KafkaListener` container against the bare
 * `@platformatic/kafka` consumer, in the same run, on the test broker (`tools/kafka.sh start`):
 *
 *   deno run -A bench/kafka_listener.ts [--records 50000] [--partitions 4] [--rounds 3]
 *
 * (`bun bench/kafka_listener.ts`, `node --import tsx bench/kafka_listener.ts` alike.) One topic of
 * `records` small JSON values is written once; each round reads all of it from the start, in a
 * group of its own, once with the bare consumer (`consume({ mode: "earliest" })`, its default
 * autocommit, `JSON.parse` of each value, a no-op handler) and once with the container (a no-op
 * `async` method, an offset committed once each record's method resolved, a lane per partition),
 * in turn A B then B A. Wall time from the start to the last record; per round the ratio of the
 * container's rate to the baseline's. Reported: each rate and the median ratio.
 *
 * @module
 */
import { parseArgs } from "node:util";
import * as client from "@platformatic/kafka";
import { Consumer, type Message } from "@platformatic/kafka";
import { KafkaListener } from "../src/kafka/listener/kafka_listener.ts";
import { kafkaListeners } from "../src/kafka/listener/listeners.ts";
import { createTopic, KAFKA_BOOTSTRAP, uniqueName } from "../tests/kafka/broker.ts";
import { producerSender } from "../tests/kafka/listener/listener_fixture.ts";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "50000" },
    partitions: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
  },
});
const RECORDS = Number(values.records);
const PARTITIONS = Number(values.partitions);
const ROUNDS = Number(values.rounds);
const brokers = [KAFKA_BOOTSTRAP];

const topic = uniqueName("bench-listener");
await createTopic(topic, PARTITIONS);
{
  const producer = new client.Producer({
    clientId: "thaw-bench",
    bootstrapBrokers: brokers,
    acks: client.ProduceAcks.LEADER,
  });
  const value = Buffer.from(JSON.stringify({ id: 12345, name: "a small order", amount: 42.5 }));
  for (let sent = 0; sent < RECORDS; sent += 500) {
    const n = Math.min(500, RECORDS - sent);
    await producer.send({
      messages: Array.from({ length: n }, (_, i) => ({
        topic,
        key: Buffer.from(`k${sent + i}`),
        value,
        partition: (sent + i) % PARTITIONS,
      })),
    });
  }
  await producer.close();
}

async function bare(): Promise<number> {
  const consumer = new Consumer({
    clientId: "thaw-bench",
    groupId: uniqueName("bench-bare"),
    bootstrapBrokers: brokers,
  });
  const started = performance.now();
  const stream = await consumer.consume({ topics: [topic], mode: "earliest" });
  let seen = 0;
  const handler = async (_value: unknown) => {};
  for await (const message of stream as AsyncIterable<Message>) {
    await handler(JSON.parse(message.value.toString("utf8")));
    if (++seen >= RECORDS) break;
  }
  const ms = performance.now() - started;
  await stream.close();
  await consumer.close();
  return RECORDS / (ms / 1000);
}

async function container(): Promise<number> {
  let seen = 0;
  let finish = () => {};
  const all = new Promise<void>((resolve) => finish = resolve);
  class Sink {
    @KafkaListener({ topics: topic, groupId: uniqueName("bench-thaw") })
    onRecord(_value: unknown): Promise<void> {
      if (++seen === RECORDS) finish();
      return Promise.resolve();
    }
  }
  const sender = producerSender();
  const listeners = kafkaListeners([{ instance: new Sink() }], {
    client,
    clientOptions: { clientId: "thaw-bench", bootstrapBrokers: brokers },
    defaults: { autoOffsetReset: "earliest" },
    deadLetters: sender,
    logger: console,
  });
  const started = performance.now();
  await listeners.start();
  await all;
  const ms = performance.now() - started;
  await listeners.close(10_000);
  await sender.close();
  return RECORDS / (ms / 1000);
}

const rows: { bare: number; thaw: number }[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    const b = await bare();
    rows.push({ bare: b, thaw: await container() });
  } else {
    const t = await container();
    rows.push({ bare: await bare(), thaw: t });
  }
  const { bare: b, thaw: t } = rows[rows.length - 1];
  console.log(
    `round ${round + 1}: bare consumer ${b.toFixed(0)} msg/s, @KafkaListener ${
      t.toFixed(0)
    } msg/s, ratio ${(t / b).toFixed(2)}`,
  );
}
const ratios = rows.map((r) => r.thaw / r.bare).sort((a, b) => a - b);
console.log(
  `${RECORDS} records, ${PARTITIONS} partitions: median ratio @KafkaListener / bare consumer ` +
    `${ratios[Math.floor(ratios.length / 2)].toFixed(2)}`,
);
