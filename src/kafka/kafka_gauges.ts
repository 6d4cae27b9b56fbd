// The gauges read when metrics are collected: the consumer lag of the listeners' groups and the
// backlog of each outbox, each source registered by what reads it and read within a bound, so that
// a broker or a database out of reach never holds a collection up.
import type { Attributes, BatchObservableResult, Observable } from "@opentelemetry/api";
import { LastReading } from "../observe/last_reading.ts";
import { SYSTEM } from "./messaging_attributes.ts";

/** The lag of one partition for one group: the partition's end offset less the committed one. */
export interface PartitionLag {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  readonly lag: number;
}

/** Reads the lag of `groups` (the client's Admin: `consumer_lag.ts`). */
export type LagReader = (groups: readonly string[]) => Promise<readonly PartitionLag[]>;

/** One registration of the lag of some groups. */
interface LagSource {
  readonly groups: () => readonly string[];
  readonly read: LagReader;
  readonly reading: LastReading<readonly PartitionLag[]>;
}

/** One registration of an outbox's backlog. */
interface BacklogSource {
  readonly backlog: () => Promise<number>;
  readonly attributes: Attributes;
  readonly reading: LastReading<number | undefined>;
}

/** The sources of the lag and backlog gauges, read at each collection. */
export class KafkaGauges {
  readonly #lags = new Set<LagSource>();
  readonly #backlogs = new Set<BacklogSource>();

  /**
   * Adds the lag of the groups `groups` answers (asked again at each collection), read by `read`
   * within `timeoutMs`. Returns what removes it.
   */
  addLag(groups: () => readonly string[], read: LagReader, timeoutMs: number): () => void {
    const source: LagSource = { groups, read, reading: new LastReading([], timeoutMs) };
    this.#lags.add(source);
    return () => void this.#lags.delete(source);
  }

  /**
   * Adds the backlog `backlog()` counts, reported with `attributes` (and `messaging.system`), read
   * within `timeoutMs`. Returns what removes it.
   */
  addBacklog(
    backlog: () => Promise<number>,
    attributes: Attributes,
    timeoutMs: number,
  ): () => void {
    const source: BacklogSource = {
      backlog,
      attributes: { "messaging.system": SYSTEM, ...attributes },
      reading: new LastReading<number | undefined>(undefined, timeoutMs),
    };
    this.#backlogs.add(source);
    return () => void this.#backlogs.delete(source);
  }

  /**
   * Observes every source into `result`: each partition's lag on `lag`, by group, topic and
   * partition; each backlog read so far on `backlog`. Waits for the sources together, each for
   * its bound at most.
   */
  async observe(
    result: BatchObservableResult,
    lag: Observable,
    backlog: Observable,
  ): Promise<void> {
    await Promise.all([
      ...[...this.#lags].map(async (source) => {
        for (const point of await lagOf(source)) {
          result.observe(lag, point.lag, {
            "messaging.system": SYSTEM,
            "messaging.consumer.group.name": point.group,
            "messaging.destination.name": point.topic,
            "messaging.destination.partition.id": String(point.partition),
          });
        }
      }),
      ...[...this.#backlogs].map(async (source) => {
        const value = await source.reading.value(() => source.backlog());
        if (value !== undefined) result.observe(backlog, value, source.attributes);
      }),
    ]);
  }
}

// The last lag read that finished within the source's time, or the one before; none while the
// source names no group (and no read is under way).
async function lagOf(source: LagSource): Promise<readonly PartitionLag[]> {
  let groups: readonly string[] = [];
  if (!source.reading.underway) {
    groups = source.groups();
    if (groups.length === 0) return [];
  }
  return await source.reading.value(() => source.read(groups));
}
