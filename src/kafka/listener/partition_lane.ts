// One partition's records on one member, in order: the next starts once the one before resolved,
// was dead-lettered, or was given up at a stop. Which offset may be committed is what the lane
// finished; it never runs two records at once, so a partition's order holds across retries.
import type { KafkaRecord } from "./kafka_record.ts";

/** How one record (or batch) went: done (commit past it) or abandoned (commit nothing). */
export type Outcome = "done" | "abandoned";

/** Runs a lane's records: one at a time, or, for a batch listener, what is queued. */
export type LaneWork = (records: readonly KafkaRecord[], lane: PartitionLane) => Promise<Outcome>;

// Fetched records, not started yet, in offset order.
class RecordQueue {
  // Taken from `#head` on: a shift per record would copy the queue each time.
  #records: KafkaRecord[] = [];
  #head = 0;

  get size(): number {
    return this.#records.length - this.#head;
  }

  push(records: readonly KafkaRecord[]): void {
    if (this.#head > 0 && this.#head * 2 >= this.#records.length) {
      this.#records = this.#records.slice(this.#head);
      this.#head = 0;
    }
    for (const record of records) this.#records.push(record);
  }

  // The next `n` records at most, taken off the queue.
  take(n: number): KafkaRecord[] {
    const records = this.#records.slice(this.#head, this.#head + n);
    this.#head += records.length;
    return records;
  }

  clear(): void {
    this.#records = [];
    this.#head = 0;
  }
}

/** One partition's queue and progress on one member, for one generation of the group. */
export class PartitionLane {
  readonly topic: string;
  readonly partition: number;
  #position: bigint | undefined;
  // The log no longer (or not yet) holds the position: the reset's offset, not the committed one.
  #resetting = false;
  #done: bigint | undefined;
  #committed: bigint | undefined;
  #running: KafkaRecord | undefined;
  #stopped = false;
  #revoked = false;
  readonly #queue = new RecordQueue();
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

  /** The next offset to fetch; `undefined` until the group's committed offset is known. */
  get position(): bigint | undefined {
    return this.#position;
  }

  /** The offset to commit: after the last record finished. */
  get done(): bigint | undefined {
    return this.#done;
  }

  /** The offset last committed. */
  get committed(): bigint | undefined {
    return this.#committed;
  }

  /** The record (or first of a batch) running, for the log lines of a stop. */
  get running(): KafkaRecord | undefined {
    return this.#running;
  }

  /** Whether the lane stopped taking records (a rebalance, the close). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Whether the partition is no longer the member's: nothing it finishes is committed. */
  get revoked(): boolean {
    return this.#revoked;
  }

  /** Fetches go on from `offset`. */
  fetchFrom(offset: bigint): void {
    this.#position = offset;
    this.#resetting = false;
  }

  /**
   * The partition's log does not hold the position (retention passed it, or a committed offset
   * past its end): fetches go on from where `auto-offset-reset` says, as Java's consumer does.
   */
  outOfRange(): void {
    this.#position = undefined;
    this.#resetting = true;
  }

  /** Whether the next position is the reset's, the committed offset being out of range. */
  get resetting(): boolean {
    return this.#resetting;
  }

  /** The group holds `offset` as committed (an older one than the last known changes nothing). */
  committedAt(offset: bigint): void {
    if (this.#committed === undefined || offset > this.#committed) this.#committed = offset;
  }

  /** The partition is no longer the member's. */
  revoke(): void {
    this.#revoked = true;
  }

  /** Records fetched, not yet started. */
  get queued(): number {
    return this.#queue.size;
  }

  /** Queues fetched records (in offset order) and starts them when the lane is idle. */
  push(records: readonly KafkaRecord[]): void {
    if (this.#stopped) return;
    this.#queue.push(records);
    this.#pump ??= this.#run();
  }

  /** Stops taking records: the queue is dropped, a wait between attempts ends at once. */
  stop(): void {
    this.#stopped = true;
    this.#queue.clear();
    for (const listener of this.#stopListeners) listener();
  }

  /** Calls `listener` when the lane stops; returns what removes it. */
  onStop(listener: () => void): () => void {
    if (this.#stopped) {
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
      while (!this.#stopped && this.queued > 0) {
        const records = this.#queue.take(this.#batch);
        // Room again: the fetches for this partition go on while these run.
        if (this.queued <= this.#lowWater) this.#drained();
        this.#running = records[0];
        const outcome = await this.#work(records, this);
        this.#running = undefined;
        if (outcome === "abandoned") return;
        if (!this.#revoked) {
          this.#done = records[records.length - 1].offset + 1n;
          this.#finished();
        }
      }
    } finally {
      this.#running = undefined;
      this.#pump = undefined;
      this.#drained();
    }
  }
}
