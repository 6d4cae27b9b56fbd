// The partitions one join of the group gave a member, each on a lane of its own: the next join
// makes another generation, and this one ends.
import type { PartitionLane } from "./partition_lane.ts";

/** One assignment of the group to a member: its lanes, until it ends. */
export class Generation {
  /** The group's generation id. */
  readonly id: number;
  /** The lanes, by `topic:partition`. */
  readonly lanes: Map<string, PartitionLane> = new Map();
  #active = true;
  // Ends the fetch loop's pause: a lane has room again, or the generation ended.
  #sleeper: (() => void) | undefined;

  constructor(id: number) {
    this.id = id;
  }

  /** Whether the generation still runs: its fetches and commits count. */
  get active(): boolean {
    return this.#active;
  }

  /** Ends the generation: a pause ends at once, a fetch's answer is dropped. */
  end(): void {
    this.#active = false;
    this.wake();
  }

  /** Ends the pause under way, if any. */
  wake(): void {
    const sleeper = this.#sleeper;
    this.#sleeper = undefined;
    sleeper?.();
  }

  /** Waits `ms`, or until the generation is woken; an ended one does not wait. */
  pause(ms: number): Promise<void> {
    // The fetch loop looks at `active` before an await: an end meanwhile must not cost a pause.
    if (!this.#active) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#sleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#sleeper = done;
    });
  }
}
