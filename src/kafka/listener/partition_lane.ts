// One partition's records on one member, in order: the next starts once the one before resolved,
// was dead-lettered, or was given up at a stop. Which offset may be committed is what the lane
// finished; it never runs two records at once, so a partition's order holds across retries.
import type { KafkaRecord } from "./kafka_record.ts";

/** How one record (or batch) went: done (commit past it) or abandoned (commit nothing). */
export type Outcome = "done" | "abandoned";

/** Runs a lane's records: one at a time, or, for a batch listener, what is queued. */
export type LaneWork = (records: readonly KafkaRecord[], lane: PartitionLane) => Promise<Outcome>;

/** One partition's queue and progress on one member, for one generation of the group. */
export class PartitionLane {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to fetch; `undefined` until the group's committed offset is known. */
  position: bigint | undefined;
  /** The offset to commit: after the last record finished. */
  done: bigint | undefined;
  /** The offset last committed. */
  committed: bigint | undefined;
  /** The record (or first of a batch) running, for the log lines of a stop. */
  running: KafkaRecord | undefined;
  /** Set once the lane stops taking records (a rebalance, the close). */
  stopped = false;
  /** Set once the partition is no longer the member's: nothing it finishes is committed. */
  revoked = false;
  // Taken from `#head` on: a shift per record would copy the queue each time.
  #queue: KafkaRecord[] = [];
  #head = 0;
  readonly #work: LaneWork;
  readonly #batch: number;
  readonly #finished: () => void;
  readonly #drained: () => void;
  readonly #lowWater: number;
  #pump: Promise<void> | undefined;
  readonly #stopListeners = new Set<() => void>();

  constructor(
    topic: string,
    partition: number,
    work: LaneWork,
    batch: number,
    finished: () => void,
    drained: () => void,
    lowWater: number,
  ) {
    this.topic = topic;
    this.partition = partition;
    this.#work = work;
    this.#batch = batch;
    this.#finished = finished;
    this.#drained = drained;
    this.#lowWater = lowWater;
  }

  /** Records fetched, not yet started. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Queues fetched records (in offset order) and starts them when the lane is idle. */
  push(records: readonly KafkaRecord[]): void {
    if (this.stopped) return;
    if (this.#head > 0 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    for (const record of records) this.#queue.push(record);
    this.#pump ??= this.#run();
  }

  /** Stops taking records: the queue is dropped, a wait between attempts ends at once. */
  stop(): void {
    this.stopped = true;
    this.#queue = [];
    this.#head = 0;
    for (const listener of this.#stopListeners) listener();
  }

  /** Calls `listener` when the lane stops; returns what removes it. */
  onStop(listener: () => void): () => void {
    if (this.stopped) {
      listener();
      return () => {};
    }
    this.#stopListeners.add(listener);
    return () => this.#stopListeners.delete(listener);
  }

  /** Resolves once the record running (if any) finished. */
  idle(): Promise<void> {
    return this.#pump ?? Promise.resolve();
  }

  async #run(): Promise<void> {
    try {
      while (!this.stopped && this.queued > 0) {
        const records = this.#queue.slice(this.#head, this.#head + this.#batch);
        this.#head += records.length;
        // Room again: the fetches for this partition go on while these run.
        if (this.queued <= this.#lowWater) this.#drained();
        this.running = records[0];
        const outcome = await this.#work(records, this);
        this.running = undefined;
        if (outcome === "abandoned") return;
        if (!this.revoked) {
          this.done = records[records.length - 1].offset + 1n;
          this.#finished();
        }
      }
    } finally {
      this.running = undefined;
      this.#pump = undefined;
      this.#drained();
    }
  }
}
