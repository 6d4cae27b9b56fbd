// A member's commits: one at a time, and what a lane finished while one was under way is
// committed after it, even when a new generation of the group took over meanwhile.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Consumer } from "@platformatic/kafka";
import { Generation } from "../../../src/kafka/listener/generation.ts";
import { OffsetCommits } from "../../../src/kafka/listener/offset_commits.ts";
import { PartitionLane } from "../../../src/kafka/listener/partition_lane.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";

type CommitRequest = { offsets: { topic: string; partition: number; offset: bigint }[] };

// A consumer whose commits wait until the test lets each one end.
class HeldConsumer {
  readonly requests: CommitRequest[] = [];
  readonly #waiting: (() => void)[] = [];
  #arrived: (() => void) | undefined;
  #holding = true;

  commit(request: CommitRequest): Promise<void> {
    this.requests.push(request);
    this.#arrived?.();
    if (!this.#holding) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  // Resolves once `count` commits were asked for.
  async asked(count: number): Promise<void> {
    while (this.requests.length < count) {
      await new Promise<void>((resolve) => this.#arrived = resolve);
    }
  }

  // Ends the commits held, and lets every later one end at once.
  releaseAll(): void {
    this.#holding = false;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}

// A lane of `generation` that finishes each record at once and then calls `finished`.
function laneOf(generation: Generation, partition: number, finished: () => void): PartitionLane {
  const lane = new PartitionLane(
    "orders",
    partition,
    () => Promise.resolve("done"),
    1,
    finished,
    () => {},
    0,
  );
  generation.lanes.set(`orders:${partition}`, lane);
  return lane;
}

const recordAt = (offset: bigint) => ({ offset }) as unknown as KafkaRecord;
const silent = { info() {}, warn() {}, error() {}, debug() {} };

describe("OffsetCommits", () => {
  it("commits what a new generation finished while the old one's commit ran", async () => {
    const consumer = new HeldConsumer();
    const commits = new OffsetCommits(
      { groupId: "g", where: "Orders.on", logger: silent },
      () => consumer as unknown as Consumer,
    );
    const first = new Generation(1);
    let current: Generation = first;
    const laneA = laneOf(first, 0, () => commits.request(first, () => current));
    laneA.push([recordAt(4n)]);
    await consumer.asked(1);

    const second = new Generation(2);
    current = second;
    first.end();
    const laneB = laneOf(second, 1, () => commits.request(second, () => current));
    laneB.push([recordAt(9n)]);
    await laneB.idle();
    consumer.releaseAll();
    await commits.settled();

    assert.deepEqual(
      consumer.requests.map((request) =>
        request.offsets.map(({ partition, offset }) => [partition, offset])
      ),
      [[[0, 5n]], [[1, 10n]]],
    );
    assert.equal(laneB.committed, 10n);
  });

  it("commits once more, after the commit under way, what finished meanwhile", async () => {
    const consumer = new HeldConsumer();
    const commits = new OffsetCommits(
      { groupId: "g", where: "Orders.on", logger: silent },
      () => consumer as unknown as Consumer,
    );
    const generation = new Generation(1);
    const lane = laneOf(generation, 0, () => commits.request(generation, () => generation));
    lane.push([recordAt(0n)]);
    await consumer.asked(1);
    lane.push([recordAt(1n), recordAt(2n)]);
    await lane.idle();
    consumer.releaseAll();
    await commits.settled();
    assert.deepEqual(
      consumer.requests.map((request) => request.offsets.map(({ offset }) => offset)),
      [[1n], [3n]],
    );
    assert.equal(lane.committed, 3n);
  });
});
