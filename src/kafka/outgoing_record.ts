// A record on its way to Kafka, already serialized: what `KafkaTemplate.send` hands the producer,
// or, inside a transaction, the outbox, which keeps it in a table until the commit and sends it
// after. One shape for both, so that a record relayed from the outbox is the record the template
// would have sent.

/** A record on its way to Kafka: its key, value and header values as bytes. */
export interface OutgoingRecord {
  /** The topic it goes to. */
  readonly topic: string;
  /** Records of one key go to one partition (unless `partition` says which), in order. */
  readonly key: Uint8Array | undefined;
  /** `undefined` is a null value: a tombstone on a compacted topic. */
  readonly value: Uint8Array | undefined;
  /** In the order given; a name may repeat, as Kafka allows. */
  readonly headers: readonly (readonly [string, Uint8Array])[];
  /** The partition asked for; the producer's partitioner chooses when it is `undefined`. */
  readonly partition: number | undefined;
}

/** Where a record went, once the broker acknowledged it. */
export interface RecordMetadata {
  /** The topic it went to. */
  readonly topic: string;
  /** The partition it went to. */
  readonly partition: number;
  /** Its offset in the partition. */
  readonly offset: bigint;
}

/** What sends records and resolves once the broker acknowledged each (the producer). */
export interface RecordSender {
  /** Sends `records` in order; resolves with where each went, in the same order. */
  send(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]>;
}

// Where a failed send's error keeps what of it was written: a symbol, so that no error class of
// the client's or the app's can hold it by chance.
const WRITTEN: unique symbol = Symbol.for("thaw.kafka.written");

/**
 * `error`, saying which records of the failed send were written after all (`sent`, by index, a
 * sparse array): a sender that failed in part tells its caller what not to send again. An error
 * that is not an object is wrapped in one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withWritten, writtenOf } from "./outgoing_record.ts";
 *
 * const sent = [undefined, { topic: "t", partition: 1, offset: 7n }];
 * const error = withWritten(new Error("the broker refused the record"), sent);
 * assert.deepEqual([...writtenOf(error)], [1]);
 * assert.deepEqual([...writtenOf(new Error("x"))], []);
 * ```
 */
export function withWritten(
  error: unknown,
  sent: readonly (RecordMetadata | undefined)[],
): unknown {
  const indexes = sent.flatMap((metadata, i) => metadata === undefined ? [] : [i]);
  if (indexes.length === 0) return error;
  const carrier = typeof error === "object" && error !== null
    ? error
    : new Error(String(error), { cause: error });
  try {
    Object.defineProperty(carrier, WRITTEN, { value: new Set(indexes), configurable: true });
  } catch {
    // A frozen error: its caller sends the whole again, at least once.
  }
  return carrier;
}

/** The indexes of the records of a failed send that were written, as {@linkcode withWritten} put them. */
export function writtenOf(error: unknown): ReadonlySet<number> {
  try {
    const found = (error as { [WRITTEN]?: unknown } | null)?.[WRITTEN];
    return found instanceof Set ? found : new Set();
  } catch {
    return new Set();
  }
}
