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
