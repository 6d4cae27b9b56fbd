// integration test: the three-broker cluster (tools/kafka.sh start-cluster) and PostgreSQL
// (tools/databases.sh start)
// The producer through an ordinary broker incident, as the idempotent producer promises it: every
// broker stopped (SIGSTOP) under sends in flight, then woken, and one broker killed (SIGKILL) under
// 128 sends in flight. Each acknowledged record is on the topic once, each key's records in the
// order sent, and the producer and the outbox go on by themselves once the brokers answer again.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { SqlClient } from "../../src/data/sql_client.ts";
import { KafkaProducer } from "../../src/kafka/kafka_producer.ts";
import { KafkaTemplate } from "../../src/kafka/kafka_template.ts";
import { Outbox } from "../../src/kafka/outbox/outbox.ts";
import { testPools } from "../sql/pools.ts";
import { createTopic, type ReadRecord, readTopic, uniqueName } from "./broker.ts";
import {
  KAFKA_CLUSTER,
  killBroker,
  pauseBroker,
  restartBroker,
  resumeBroker,
  wholeCluster,
} from "./three_brokers.ts";
import {
  createOutboxTable,
  textRecord,
  topicSize,
  waitFor,
  writeInTransaction,
} from "./outbox/outbox_support.ts";

const PORTS = KAFKA_CLUSTER.map((address) => Number(address.split(":")[1]));
const quiet = { error() {}, warn() {}, info() {}, debug() {} };

/** Resolves once `check()` holds, looking every 20 ms; gives up after `giveUpMs`, naming `what`. */
async function until(what: string, check: () => boolean, giveUpMs = 120_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > giveUpMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Senders that each send their own key's values in turn, each awaited: `w<i>` sends 0, 1, 2, ... */
class Senders {
  readonly acknowledged = new Map<string, number[]>();
  readonly failures: string[] = [];
  /** When each acknowledgement came (ms since the epoch), in order. */
  readonly acknowledgedAt: number[] = [];
  #stop = false;
  readonly #running: Promise<void>[];

  constructor(template: KafkaTemplate, topic: string, count: number) {
    this.#running = Array.from({ length: count }, (_, w) => this.#run(template, topic, `w${w}`));
  }

  get total(): number {
    return this.acknowledgedAt.length;
  }

  async #run(template: KafkaTemplate, topic: string, key: string): Promise<void> {
    const acked: number[] = [];
    this.acknowledged.set(key, acked);
    for (let n = 0; !this.#stop; n++) {
      try {
        await template.send(topic, `${key}:${n}`, { key });
        acked.push(n);
        this.acknowledgedAt.push(Date.now());
      } catch (error) {
        this.failures.push((error as Error).message);
      }
    }
  }

  async stop(): Promise<void> {
    this.#stop = true;
    await Promise.all(this.#running);
  }
}

/**
 * What `records` (a topic read whole) say of the sends: acknowledged values missing, values
 * written more than once, and values of a key behind a later value of that key.
 */
function audit(records: readonly ReadRecord[], acknowledged: ReadonlyMap<string, number[]>) {
  const byKey = new Map<string, number[]>();
  for (const record of records) {
    const [key, n] = String(record.value).replaceAll('"', "").split(":");
    byKey.set(key, [...byKey.get(key) ?? [], Number(n)]);
  }
  let lost = 0, doubled = 0, reordered = 0;
  for (const [key, acked] of acknowledged) {
    const seen = byKey.get(key) ?? [];
    const counts = new Map<number, number>();
    for (const n of seen) counts.set(n, (counts.get(n) ?? 0) + 1);
    lost += acked.filter((n) => !counts.has(n)).length;
    for (const times of counts.values()) doubled += times - 1;
    for (let i = 1; i < seen.length; i++) if (seen[i] < seen[i - 1]) reordered++;
  }
  return { lost, doubled, reordered };
}

describe("KafkaProducer through a broker incident, on three brokers", () => {
  const open = testPools();
  const closing: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const port of PORTS) await resumeBroker(port).catch(() => {});
    for (const close of closing.reverse()) await close().catch(() => {});
  });

  // The whole cluster up, a topic of 3 partitions on it, and a producer as kafka() makes one.
  const onWholeCluster = async (prefix: string) => {
    await wholeCluster();
    const topic = uniqueName(prefix);
    await createTopic(topic, 3, KAFKA_CLUSTER);
    const producer = new KafkaProducer(
      { clientId: "thaw-incident", bootstrapBrokers: [...KAFKA_CLUSTER] },
      -1,
      10,
    );
    closing.push(() => producer.close());
    return { topic, producer };
  };

  it("every broker stopped, then back: sends and the outbox go on, none lost or doubled", async () => {
    const { topic, producer } = await onWholeCluster("incident-outage");
    const template = new KafkaTemplate(producer);
    const { pool } = await open("postgres");
    const sql = new SqlClient(pool);
    await createOutboxTable(sql);
    const outbox = new Outbox(sql, producer, { pollIntervalMs: 100, logger: quiet });
    closing.push(() => outbox.close(10_000));
    await outbox.start();

    const senders = new Senders(template, topic, 16);
    // The outbox's rows: one transaction after another, each a row of key o<i % 4>, numbered.
    let rows = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const key = `o${rows % 4}`;
        await writeInTransaction(sql, outbox, [textRecord(topic, key, `${key}:${rows}`)]);
        rows++;
        // About 200 transactions a second: a steady app's load, not a flood the drain must catch up.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      await until("sends before the outage", () => senders.total >= 300 && rows >= 100);
      for (const port of PORTS) await pauseBroker(port);
      // The outage: 30 s with every broker stopped, sends in flight and rows committed meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 30_000));
      const atResume = senders.total;
      for (const port of PORTS) await resumeBroker(port);
      const resumed = Date.now();
      await until("sends after the outage", () => senders.total >= atResume + 600);
      const firstAck = senders.acknowledgedAt[atResume];
      writing = false;
      await writer;
      await waitFor("the outbox drained", async () => await outbox.backlog() === 0);
      const drained = Date.now();
      await senders.stop();

      const outOfOrder = senders.failures.filter((m) => /out of order sequence/i.test(m));
      console.log(
        `outage: first send acknowledged ${((firstAck - resumed) / 1000).toFixed(1)} s after the ` +
          `brokers' return, outbox (${rows} rows) drained after ${
            ((drained - resumed) / 1000).toFixed(1)
          } s; ${senders.failures.length} sends failed (${outOfOrder.length} out of order)`,
      );
      assert.deepEqual(outOfOrder, [], "no send refused as out of sequence");

      const size = await topicSize(topic, 3, KAFKA_CLUSTER);
      const records = await readTopic(topic, size, KAFKA_CLUSTER);
      const sends = audit(records.filter((r) => r.key?.startsWith("w")), senders.acknowledged);
      assert.deepEqual(sends, { lost: 0, doubled: 0, reordered: 0 }, "the template's sends");
      const committed = new Map<string, number[]>();
      for (let i = 0; i < rows; i++) {
        committed.set(`o${i % 4}`, [...committed.get(`o${i % 4}`) ?? [], i]);
      }
      const relayed = audit(records.filter((r) => r.key?.startsWith("o")), committed);
      console.log(`outbox: ${JSON.stringify(relayed)} of ${rows} rows`);
      // At least once is the outbox's promise, but nothing here sends a row twice: a send in
      // doubt that went is marked, not sent again.
      assert.deepEqual(relayed, { lost: 0, doubled: 0, reordered: 0 }, "the outbox's rows");
    } finally {
      writing = false;
      for (const port of PORTS) await resumeBroker(port);
      await writer.catch(() => {});
      await senders.stop();
    }
  });

  it("one broker killed under 128 sends in flight: each acknowledged record once, in order", async () => {
    const { topic, producer } = await onWholeCluster("incident-crash");
    const senders = new Senders(new KafkaTemplate(producer), topic, 128);
    const victim = PORTS[1];
    let killed = false;
    try {
      await until("sends before the crash", () => senders.total >= 3_000);
      await killBroker(victim);
      killed = true;
      const atKill = senders.total;
      await until("sends after the crash", () => senders.total >= atKill + 3_000);
      await senders.stop();
      const size = await topicSize(topic, 3, KAFKA_CLUSTER);
      const records = await readTopic(topic, size, KAFKA_CLUSTER);
      const result = audit(records, senders.acknowledged);
      console.log(
        `crash: ${senders.total} acknowledged, ${senders.failures.length} failed, ` +
          `${records.length} records on the topic: ${JSON.stringify(result)}`,
      );
      assert.deepEqual(result, { lost: 0, doubled: 0, reordered: 0 });
    } finally {
      await senders.stop();
      if (killed) await restartBroker(victim);
    }
  });
});
