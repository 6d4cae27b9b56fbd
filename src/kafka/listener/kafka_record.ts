// The record a `@KafkaListener` method gets beside the value: where it came from, its key and
// headers as text (what most apps read), and the bytes as they came.

/** One record, as a `@KafkaListener` method gets it. */
export interface KafkaRecord {
  /** The topic it came from. */
  readonly topic: string;
  /** Its partition. */
  readonly partition: number;
  /** Its offset in the partition. */
  readonly offset: bigint;
  /** Milliseconds since the epoch: when the producer made it, or the broker appended it. */
  readonly timestamp: number;
  /** Whose the timestamp is: the producer's (`CreateTime`) or the broker's (`LogAppendTime`). */
  readonly timestampType: TimestampType;
  /** The key as UTF-8 text; `undefined` for none. */
  readonly key: string | undefined;
  /** The headers as UTF-8 text; a name given twice keeps its last value (all are in `raw`). */
  readonly headers: ReadonlyMap<string, string>;
  /** The record as it came: key, value and headers as bytes, headers in order. */
  readonly raw: RawRecord;
}

/** Kafka's two kinds of record timestamp, as Java names them. */
export type TimestampType = "CreateTime" | "LogAppendTime";

/** A record's bytes. */
export interface RawRecord {
  /** The key's bytes; `undefined` for none. */
  readonly key: Uint8Array | undefined;
  /** `undefined` is a null value (a tombstone). */
  readonly value: Uint8Array | undefined;
  /** The headers in order, a name as often as it came. */
  readonly headers: readonly (readonly [string, Uint8Array])[];
}

const decoder = new TextDecoder();

/** UTF-8 text of `bytes`. */
export function text(bytes: Uint8Array | undefined): string | undefined {
  return bytes === undefined ? undefined : decoder.decode(bytes);
}

/** A record from its place and bytes. */
export function kafkaRecord(
  topic: string,
  partition: number,
  offset: bigint,
  timestamp: number,
  raw: RawRecord,
  timestampType: TimestampType = "CreateTime",
): KafkaRecord {
  let headers: Map<string, string> | undefined;
  return {
    topic,
    partition,
    offset,
    timestamp,
    timestampType,
    key: text(raw.key),
    // Read when asked: most handlers never look.
    get headers(): ReadonlyMap<string, string> {
      headers ??= new Map(raw.headers.map(([name, value]) => [name, decoder.decode(value)]));
      return headers;
    },
    raw,
  };
}
