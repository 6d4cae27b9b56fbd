// The consumer lag of groups, read from the broker with the client's Admin: each group's committed
// offsets, and the end offsets of the partitions it committed to. Loaded, like the producer, only
// by `kafka()`, and only where the app has OpenTelemetry's API.
import { Admin } from "@platformatic/kafka";
import type { KafkaClientOptions } from "./kafka_settings.ts";
import type { KafkaTelemetry, PartitionLag } from "./kafka_telemetry.ts";

// ListOffsets' timestamp for "the next offset to be written".
const LATEST = -1n;

/** Reads the lag of consumer groups; one Admin, opened at the first read. */
export class ConsumerLag {
  readonly #client: KafkaClientOptions;
  #admin: Admin | undefined;

  constructor(client: KafkaClientOptions) {
    this.#client = client;
  }

  /** The lag of each partition `groups` committed an offset to (none: no lag reported). */
  async read(groups: readonly string[]): Promise<readonly PartitionLag[]> {
    this.#admin ??= new Admin({
      ...this.#client,
      bootstrapBrokers: [...this.#client.bootstrapBrokers],
      // A scrape is not the place to wait: one try, and the next scrape tries again.
      retries: 0,
    });
    const admin = this.#admin;
    const committed = await admin.listConsumerGroupOffsets({ groups: [...groups] });
    const wanted = new Map<string, Set<number>>();
    for (const group of committed) {
      for (const topic of group.topics) {
        const partitions = wanted.get(topic.name) ?? new Set<number>();
        for (const p of topic.partitions) {
          if (p.committedOffset >= 0n) partitions.add(p.partitionIndex);
        }
        wanted.set(topic.name, partitions);
      }
    }
    const topics = [...wanted].filter(([, partitions]) => partitions.size > 0);
    if (topics.length === 0) return [];
    const listed = await admin.listOffsets({
      topics: topics.map(([name, partitions]) => ({
        name,
        partitions: [...partitions].map((partitionIndex) => ({
          partitionIndex,
          timestamp: LATEST,
        })),
      })),
    });
    const ends = new Map<string, bigint>();
    for (const topic of listed) {
      for (const p of topic.partitions) {
        ends.set(`${p.partitionIndex}\u0000${topic.name}`, p.offset);
      }
    }
    const lags: PartitionLag[] = [];
    for (const group of committed) {
      for (const topic of group.topics) {
        for (const p of topic.partitions) {
          const end = ends.get(`${p.partitionIndex}\u0000${topic.name}`);
          if (end === undefined || p.committedOffset < 0n) continue;
          const lag = end - p.committedOffset;
          lags.push({
            group: group.groupId,
            topic: topic.name,
            partition: p.partitionIndex,
            lag: Number(lag < 0n ? 0n : lag),
          });
        }
      }
    }
    return lags;
  }

  /** Closes the Admin, where one was opened. */
  async close(): Promise<void> {
    const admin = this.#admin;
    this.#admin = undefined;
    await admin?.close();
  }
}

/**
 * Reports the lag of the groups `groups` answers (the listeners') through `telemetry`, read with
 * an Admin of `client` when metrics are collected, waiting at most `timeoutMs` each time. Returns
 * what stops it and closes the Admin (at the app's close).
 */
export function observeConsumerLag(
  telemetry: KafkaTelemetry,
  client: KafkaClientOptions,
  groups: () => readonly string[],
  timeoutMs?: number,
): () => Promise<void> {
  const lag = new ConsumerLag(client);
  const stop = telemetry.observeLag(groups, (names) => lag.read(names), timeoutMs);
  return () => {
    stop();
    return lag.close();
  };
}
