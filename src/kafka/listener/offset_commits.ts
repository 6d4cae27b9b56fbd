// The offsets a member commits: for each lane, the offset after what it finished, one commit at a
// time, another after it when lanes finished meanwhile.
import type { Consumer } from "@platformatic/kafka";
import type { ContextLogger } from "../../context/class_record.ts";
import { loggable } from "../../observe/loggable.ts";
import type { Generation } from "./generation.ts";
import type { PartitionLane } from "./partition_lane.ts";

/** What the log lines of a commit name. */
export interface CommitSettings {
  readonly groupId: string;
  /** `Class.method`. */
  readonly where: string;
  readonly logger: ContextLogger;
}

/** A member's commits, through its consumer of the moment. */
export class OffsetCommits {
  readonly #settings: CommitSettings;
  readonly #consumer: () => Consumer;
  #committing: Promise<void> | undefined;
  // The generation whose lanes finished while a commit was under way: a new generation's, when
  // the group moved on meanwhile.
  #again: Generation | undefined;

  constructor(settings: CommitSettings, consumer: () => Consumer) {
    this.#settings = settings;
    this.#consumer = consumer;
  }

  /**
   * A lane of `generation` finished a record: commits, or commits again after the commit under
   * way, while `generation` is the member's (`current`).
   */
  request(generation: Generation, current: () => Generation | undefined): void {
    if (generation !== current()) return;
    if (this.#committing !== undefined) {
      this.#again = generation;
      return;
    }
    this.#committing = (async () => {
      try {
        for (
          let next: Generation | undefined = generation;
          next !== undefined && next === current();
          next = this.#again
        ) {
          this.#again = undefined;
          await this.commit([...next.lanes.values()], false);
        }
      } finally {
        this.#committing = undefined;
        this.#again = undefined;
      }
    })();
  }

  /** Resolves once no commit asked for by `request` is under way. */
  async settled(): Promise<void> {
    while (this.#committing !== undefined) await this.#committing;
  }

  /**
   * Commits, for each lane, the offset after what it finished, unless committed already; a
   * failure is logged (an error when `final`: those records come again). The client refuses
   * (group_guard.ts) a partition the member no longer holds.
   */
  async commit(lanes: readonly PartitionLane[], final: boolean): Promise<void> {
    const offsets = lanes.flatMap((lane) => {
      const { done, committed } = lane;
      return !lane.revoked && done !== undefined && (committed === undefined || done > committed)
        ? [{ lane, offset: done }]
        : [];
    });
    if (offsets.length === 0) return;
    try {
      await this.#consumer().commit({
        offsets: offsets.map(({ lane, offset }) => ({
          topic: lane.topic,
          partition: lane.partition,
          offset,
          leaderEpoch: -1,
        })),
      });
      for (const { lane, offset } of offsets) lane.committedAt(offset);
    } catch (error) {
      const { logger, where, groupId } = this.#settings;
      const which = offsets.map(({ lane, offset }) =>
        `${lane.topic} partition ${lane.partition} at ${offset}`
      ).join(", ");
      (final ? logger.error : (logger.warn ?? logger.error)).call(
        logger,
        `${where}: committing offsets for group "${groupId}" failed (${which})${
          final ? ": those records will be delivered again" : "; the next commit tries again"
        }`,
        loggable(error),
      );
    }
  }
}
