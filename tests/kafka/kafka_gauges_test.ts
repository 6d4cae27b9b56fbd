// The gauges' sources at a collection: each partition's lag by group, topic and partition, each
// outbox's backlog with its attributes, a source removed no longer read, and no read of the lag
// while no group is named.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Attributes, BatchObservableResult, Observable } from "@opentelemetry/api";
import { KafkaGauges, type PartitionLag } from "../../src/kafka/kafka_gauges.ts";

const LAG = { name: "lag" } as unknown as Observable;
const BACKLOG = { name: "backlog" } as unknown as Observable;

// What a collection observed: the gauge, the value, the attributes.
async function collect(gauges: KafkaGauges): Promise<[string, number, Attributes][]> {
  const seen: [string, number, Attributes][] = [];
  const result = {
    observe: (gauge: Observable, value: number, attributes: Attributes = {}) =>
      seen.push([(gauge as unknown as { name: string }).name, value, attributes]),
  } as BatchObservableResult;
  await gauges.observe(result, LAG, BACKLOG);
  // The sources are read together: the order they answer in is no one's to rely on.
  return seen.sort(([a], [b]) => a.localeCompare(b));
}

describe("KafkaGauges", () => {
  it("observes each partition's lag and each backlog, with their attributes", async () => {
    const gauges = new KafkaGauges();
    const asked: (readonly string[])[] = [];
    const lags: PartitionLag[] = [
      { group: "g", topic: "orders", partition: 0, lag: 4 },
      { group: "g", topic: "orders", partition: 1, lag: 0 },
    ];
    gauges.addLag(() => ["g"], (groups) => {
      asked.push(groups);
      return Promise.resolve(lags);
    }, 1000);
    gauges.addBacklog(() => Promise.resolve(12), { "db.namespace": "main" }, 1000);
    assert.deepEqual(await collect(gauges), [
      ["backlog", 12, { "messaging.system": "kafka", "db.namespace": "main" }],
      ["lag", 4, {
        "messaging.system": "kafka",
        "messaging.consumer.group.name": "g",
        "messaging.destination.name": "orders",
        "messaging.destination.partition.id": "0",
      }],
      ["lag", 0, {
        "messaging.system": "kafka",
        "messaging.consumer.group.name": "g",
        "messaging.destination.name": "orders",
        "messaging.destination.partition.id": "1",
      }],
    ]);
    assert.deepEqual(asked, [["g"]]);
  });

  it("reads no lag while no group is named, and nothing of a source removed", async () => {
    const gauges = new KafkaGauges();
    let reads = 0;
    gauges.addLag(() => [], () => {
      reads++;
      return Promise.resolve([]);
    }, 1000);
    const stop = gauges.addBacklog(() => Promise.resolve(1), {}, 1000);
    assert.equal((await collect(gauges)).length, 1);
    stop();
    assert.deepEqual(await collect(gauges), []);
    assert.equal(reads, 0);
  });

  it("observes no backlog before a read of it finished within the time", async () => {
    const gauges = new KafkaGauges();
    gauges.addBacklog(() => new Promise((resolve) => setTimeout(resolve, 50, 3)), {}, 5);
    assert.deepEqual(await collect(gauges), []);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(await collect(gauges), [["backlog", 3, { "messaging.system": "kafka" }]]);
  });
});
