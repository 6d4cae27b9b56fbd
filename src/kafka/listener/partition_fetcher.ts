// A member's fetch loop: the offset each new lane starts from, then fetches of the lanes with room
// from each partition's leader, their records handed to the lanes, until the generation ends.
import type { Consumer } from "@platformatic/kafka";
import type { ContextLogger } from "../../context/class_record.ts";
import { loggable } from "../../observe/loggable.ts";
import { Backoff } from "../../runtime/backoff.ts";
import { FailureStreak } from "./failure_streak.ts";
import type { KafkaClientModule } from "./kafka_client.ts";
import type { Generation } from "./generation.ts";
import { type KafkaRecord, kafkaRecord } from "./kafka_record.ts";
import type { PartitionLane } from "./partition_lane.ts";

// After failed fetches: 0.4 s, doubling, at most 5 s.
const FETCH_BACKOFF = /* @__PURE__ */ new Backoff({ delay: 400, multiplier: 2, maxDelay: 5000 });

/** A lane holds at most this many fetched records: one whose records wait is not fetched further. */
export const QUEUE_HIGH = 500;
// A fetch waits this long for records at most: the loop then sees a stop or a lane with room.
const FETCH_WAIT_MS = 500;
const PARTITION_MAX_BYTES = 1 << 20;
const IS_CONTROL = 1 << 5;
// A record batch's attribute bit: its timestamps are the broker's (LogAppendTime).
const LOG_APPEND_TIME = 1 << 3;
const OFFSET_OUT_OF_RANGE = 1;

/** What a member fetches, and what its log lines name. */
export interface FetchSettings {
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly autoOffsetReset: "earliest" | "latest" | "none";
  /** `Class.method`. */
  readonly where: string;
  readonly logger: ContextLogger;
}

type Pool = InstanceType<KafkaClientModule["ConnectionPool"]>;
type FetchResponse = Awaited<ReturnType<Consumer["fetch"]>>;
type Metadata = Awaited<ReturnType<Consumer["metadata"]>>;
type FetchedPartition = FetchResponse["responses"][number]["partitions"][number];

/** Fetches a member's partitions through its consumer of the moment, on a pool of its own. */
export class PartitionFetcher {
  readonly #settings: FetchSettings;
  readonly #consumer: () => Consumer;
  readonly #pool: Pool;

  constructor(settings: FetchSettings, consumer: () => Consumer, pool: Pool) {
    this.#settings = settings;
    this.#consumer = consumer;
    this.#pool = pool;
  }

  /**
   * Fetches for `generation` until it ends or `closing` says so; a failure waits (0.4 s doubling
   * to 5 s) and tries again, said in the log as {@linkcode FailureStreak} decides: the first of
   * each kind in a row, and every tenth.
   */
  async run(generation: Generation, closing: () => boolean): Promise<void> {
    const { logger, where, groupId } = this.#settings;
    const failures = new FailureStreak();
    while (generation.active && !closing()) {
      try {
        await this.#position(generation);
        const ready = [...generation.lanes.values()].filter((lane) =>
          lane.position !== undefined && lane.queued < QUEUE_HIGH
        );
        if (ready.length === 0) {
          // Every lane is full or waits for its offset: until one drains.
          await generation.pause(generation.lanes.size === 0 ? 60_000 : 1000);
          continue;
        }
        await this.#fetch(generation, ready);
        failures.succeeded();
      } catch (error) {
        if (!generation.active || closing()) break;
        const said = failures.failed(error);
        this.#consumer().clearMetadata();
        if (said) {
          (logger.warn ?? logger.error).call(
            logger,
            `${where}: fetching for group "${groupId}" failed (${failures.count} in a row); ` +
              "trying again",
            loggable(error),
          );
        }
        await generation.pause(FETCH_BACKOFF.delayOf(failures.count));
      }
    }
  }

  // The committed offset of each lane that has none yet, else the reset's.
  async #position(generation: Generation): Promise<void> {
    const unknown = [...generation.lanes.values()].filter((lane) => lane.position === undefined);
    if (unknown.length === 0) return;
    // A committed offset the log does not hold would be fetched, and refused, again and again.
    const missing = unknown.filter((lane) => lane.resetting);
    const lookUp = unknown.filter((lane) => !lane.resetting);
    const committed = lookUp.length === 0
      ? new Map()
      : await this.#consumer().listCommittedOffsets({
        topics: [...partitionsByTopic(lookUp)].map(([topic, partitions]) => ({
          topic,
          partitions,
        })),
      });
    for (const lane of lookUp) {
      const offset = committed.get(lane.topic)?.[lane.partition];
      if (offset !== undefined && offset >= 0n) {
        lane.fetchFrom(offset);
        lane.committedAt(offset);
      } else missing.push(lane);
    }
    if (missing.length === 0) return;
    const byTopic = partitionsByTopic(missing);
    const reset = this.#settings.autoOffsetReset;
    if (reset === "none") {
      throw new Error(
        `no committed offset (or one the log does not hold) for group "${this.#settings.groupId}" on ${
          [...byTopic].map(([t, ps]) => `${t} partitions ${ps.join(", ")}`).join("; ")
        }, and kafka.consumer.auto-offset-reset is none`,
      );
    }
    const offsets = await this.#consumer().listOffsets({
      topics: [...byTopic.keys()],
      partitions: Object.fromEntries(byTopic),
      timestamp: reset === "earliest" ? -2n : -1n,
    });
    for (const lane of missing) {
      const offset = offsets.get(lane.topic)?.[lane.partition];
      if (offset !== undefined) lane.fetchFrom(offset);
    }
  }

  // One fetch of the lanes with room, from each partition's leader.
  async #fetch(generation: Generation, lanes: readonly PartitionLane[]): Promise<void> {
    const metadata = await this.#consumer().metadata({ topics: [...this.#settings.topics] });
    const byLeader = new Map<number, PartitionLane[]>();
    for (const lane of lanes) {
      const leader = metadata.topics.get(lane.topic)?.partitions[lane.partition]?.leader;
      if (leader === undefined || leader < 0) continue;
      byLeader.set(leader, [...byLeader.get(leader) ?? [], lane]);
    }
    // Metadata from the client's cache comes at once: a pass with nothing to fetch, tried again at
    // once, would never let a timer or an answer in. It fails, and the next waits.
    if (byLeader.size === 0) {
      throw new Error(
        `no leader known for ${
          [...partitionsByTopic(lanes)].map(([t, ps]) => `${t} partitions ${ps.join(", ")}`)
            .join("; ")
        } (an election under way, or the brokers that lead them gone)`,
      );
    }
    await Promise.all(
      [...byLeader].map(([node, led]) => this.#fetchFrom(generation, metadata, node, led)),
    );
  }

  // One fetch from the leader `node` of `lanes`; the records to their lanes.
  async #fetchFrom(
    generation: Generation,
    metadata: Metadata,
    node: number,
    lanes: readonly PartitionLane[],
  ): Promise<void> {
    const topicOf = new Map<string, string>();
    const topics = new Map<string, { partition: number; fetchOffset: bigint }[]>();
    for (const lane of lanes) {
      const id = metadata.topics.get(lane.topic)?.id;
      if (id === undefined || lane.position === undefined) continue;
      topicOf.set(id, lane.topic);
      topics.set(id, [
        ...topics.get(id) ?? [],
        { partition: lane.partition, fetchOffset: lane.position },
      ]);
    }
    let response: FetchResponse;
    try {
      response = await this.#consumer().fetch({
        node,
        maxWaitTime: FETCH_WAIT_MS,
        connectionPool: this.#pool,
        topics: [...topics].map(([topicId, partitions]) => ({
          topicId,
          partitions: partitions.map(({ partition, fetchOffset }) => ({
            partition,
            fetchOffset,
            partitionMaxBytes: PARTITION_MAX_BYTES,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
          })),
        })),
      });
    } catch (error) {
      // An offset the log does not have (retention passed it, or past its end): reset as
      // configured.
      const partial = (error as { response?: FetchResponse }).response;
      for (const topic of partial?.responses ?? []) {
        for (const part of topic.partitions) {
          if (part.errorCode !== OFFSET_OUT_OF_RANGE) continue;
          generation.lanes.get(`${topicOf.get(topic.topicId)}:${part.partitionIndex}`)
            ?.outOfRange();
        }
      }
      throw error;
    }
    // A response to a fetch of an ended generation is dropped: the next one fetches again from
    // what was committed.
    if (!generation.active) return;
    for (const topic of response.responses) {
      const name = topicOf.get(topic.topicId);
      for (const part of topic.partitions) {
        const lane = generation.lanes.get(`${name}:${part.partitionIndex}`);
        if (lane?.position === undefined || part.records === undefined) continue;
        const { records, next } = fetchedRecords(
          lane.topic,
          lane.partition,
          lane.position,
          part.records,
        );
        lane.fetchFrom(next);
        if (records.length > 0) lane.push(records);
      }
    }
  }
}

// The partitions of `lanes`, by topic.
function partitionsByTopic(lanes: readonly PartitionLane[]): Map<string, number[]> {
  const byTopic = new Map<string, number[]>();
  for (const lane of lanes) {
    byTopic.set(lane.topic, [...byTopic.get(lane.topic) ?? [], lane.partition]);
  }
  return byTopic;
}

/** The record batches of one fetched partition, as the client reads them. */
export type FetchedBatches = NonNullable<FetchedPartition["records"]>;

/**
 * The records of `topic`'s `partition` in fetched `batches`, from `position` on (control batches,
 * and what comes before `position`, left out), and the offset the next fetch starts from: past
 * the last batch, control batches included.
 */
export function fetchedRecords(
  topic: string,
  partition: number,
  position: bigint,
  batches: FetchedBatches,
): { readonly records: KafkaRecord[]; readonly next: bigint } {
  const records: KafkaRecord[] = [];
  let next = position;
  for (const batch of batches) {
    const last = batch.firstOffset + BigInt(batch.lastOffsetDelta);
    if (last + 1n > next) next = last + 1n;
    if ((batch.attributes & IS_CONTROL) !== 0) continue;
    // A topic of LogAppendTime gives the broker's time, the batch's, to every record.
    const appended = (batch.attributes & LOG_APPEND_TIME) !== 0;
    for (const record of batch.records) {
      const offset = batch.firstOffset + BigInt(record.offsetDelta);
      if (offset < position) continue;
      records.push(kafkaRecord(
        topic,
        partition,
        offset,
        Number(appended ? batch.maxTimestamp : batch.firstTimestamp + record.timestampDelta),
        {
          key: record.key ?? undefined,
          value: record.value ?? undefined,
          headers: record.headers.map(([name, value]) => [
            name === null ? "" : name.toString("utf8"),
            value ?? new Uint8Array(0),
          ]),
        },
        appended ? "LogAppendTime" : "CreateTime",
      ));
    }
  }
  return { records, next };
}
