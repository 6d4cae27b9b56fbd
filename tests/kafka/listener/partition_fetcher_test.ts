// The records a fetch hands to a lane, against a small reference model of a partition's log:
// control batches and what lies before the lane's position left out, the next position past the
// last batch.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import type { Consumer } from "@platformatic/kafka";
import {
  type FetchedBatches,
  fetchedRecords,
  PartitionFetcher,
} from "../../../src/kafka/listener/partition_fetcher.ts";
import { Generation } from "../../../src/kafka/listener/generation.ts";
import { PartitionLane } from "../../../src/kafka/listener/partition_lane.ts";
import { propertyOptions } from "../../property.ts";

const IS_CONTROL = 1 << 5;
const LOG_APPEND_TIME = 1 << 3;

interface ModelBatch {
  readonly first: number;
  readonly count: number;
  readonly control: boolean;
  readonly appended: boolean;
}

// Consecutive batches from offset `start`: what a broker answers for one partition.
const logs = fc.record({
  start: fc.nat(1_000),
  batches: fc.array(
    fc.record({
      count: fc.integer({ min: 1, max: 5 }),
      control: fc.boolean(),
      appended: fc.boolean(),
    }),
    { maxLength: 6 },
  ),
}).map(({ start, batches }) => {
  let at = start;
  return batches.map((b): ModelBatch => {
    const batch = { ...b, first: at };
    at += b.count;
    return batch;
  });
});

function wire(batches: readonly ModelBatch[]): FetchedBatches {
  return batches.map((b) => ({
    firstOffset: BigInt(b.first),
    lastOffsetDelta: b.count - 1,
    attributes: (b.control ? IS_CONTROL : 0) | (b.appended ? LOG_APPEND_TIME : 0),
    firstTimestamp: 1_000_000n + BigInt(b.first),
    maxTimestamp: 9_000_000n,
    records: Array.from({ length: b.count }, (_, i) => ({
      offsetDelta: i,
      timestampDelta: BigInt(10 * i),
      key: Buffer.from(`k${b.first + i}`),
      value: null,
      headers: [[Buffer.from("h"), null]],
    })),
  })) as unknown as FetchedBatches;
}

describe("fetchedRecords", () => {
  it("gives the records at or past the position, in order, and the offset past the last batch", () => {
    fc.assert(
      fc.property(logs, fc.nat(1_100), (batches, from) => {
        const position = BigInt(from);
        const { records, next } = fetchedRecords("orders", 3, position, wire(batches));
        const expected = batches.flatMap((b) =>
          b.control ? [] : Array.from({ length: b.count }, (_, i) => b.first + i)
        ).filter((offset) => offset >= from);
        assert.deepEqual(records.map((r) => Number(r.offset)), expected);
        const end = batches.length === 0 ? 0 : batches.at(-1)!.first + batches.at(-1)!.count;
        assert.equal(next, BigInt(Math.max(from, end)));
        for (const record of records) {
          assert.equal(record.topic, "orders");
          assert.equal(record.partition, 3);
          assert.equal(record.key, `k${record.offset}`);
          assert.equal(record.headers.get("h"), "");
          const batch = batches.find((b) => Number(record.offset) < b.first + b.count)!;
          assert.equal(record.timestampType, batch.appended ? "LogAppendTime" : "CreateTime");
          assert.equal(
            record.timestamp,
            batch.appended
              ? 9_000_000
              : 1_000_000 + batch.first + 10 * (Number(record.offset) - batch.first),
          );
        }
      }),
      propertyOptions(),
    );
  });
});

describe("PartitionFetcher.run", () => {
  it("waits when no partition it fetches has a leader, rather than asking again at once", async () => {
    // A consumer whose metadata comes from its cache, at once, while the partition's leader is
    // being elected (-1): a loop that asked again at once would never let a timer run.
    const generation = new Generation(1);
    let asked = 0;
    let cleared = 0;
    let spun = false;
    const consumer = {
      metadata: () => {
        if (++asked > 10_000) {
          spun = true;
          generation.end();
        }
        return Promise.resolve({
          topics: new Map([["orders", { id: "t1", partitions: [{ leader: -1 }] }]]),
        });
      },
      listCommittedOffsets: () => Promise.resolve(new Map([["orders", [0n]]])),
      clearMetadata: () => void cleared++,
      fetch: () => Promise.reject(new Error("no fetch without a leader")),
    };
    const lane = new PartitionLane(
      "orders",
      0,
      () => Promise.resolve("done"),
      1,
      () => {},
      () => {},
      0,
    );
    generation.lanes.set("orders:0", lane);
    const lines: string[] = [];
    const fetcher = new PartitionFetcher(
      {
        groupId: "g",
        topics: ["orders"],
        autoOffsetReset: "earliest",
        where: "Sink.onRecord",
        logger: { error: (line: string) => void lines.push(line) },
      },
      () => consumer as unknown as Consumer,
      undefined as never,
    );
    const running = fetcher.run(generation, () => false);
    // A timer runs while the loop waits: then the generation ends, and the loop with it.
    await new Promise((resolve) => setTimeout(resolve, 0));
    generation.end();
    await running;
    assert.equal(spun, false, `asked for metadata ${asked} times before a timer ran`);
    // The cache that said so is dropped, so that the next pass asks the brokers.
    assert.ok(cleared >= 1);
  });
});
