// The partition each record of a send goes to, chosen before the request goes, so that each
// record's offset is known from its partition's answer: Java's partitioner for a key, round robin
// without one. Pure: the partition counts are given.
import { compatibilityPartitioner } from "@platformatic/kafka";
import type { OutgoingRecord } from "./outgoing_record.ts";
import { asBuffer } from "./produce_message.ts";

/** Places records on partitions, keeping each topic's turn for the records without a key. */
export class RecordPlacement {
  // The next partition of each topic for a record without a key.
  readonly #turns = new Map<string, number>();

  /**
   * The partition of each of `records`, given the partitions of each topic (`partitionsOf`, 0 for
   * a topic the broker does not know): the one asked for, checked (the client folds a partition
   * past the topic's count into it: 7 of 3 partitions is 1), else the one Java's partitioner gives
   * its key, else the topic's next turn. Throws for an unknown topic and a partition past the
   * topic's, the records before it placed.
   */
  place(
    partitionsOf: (topic: string) => number,
    records: readonly OutgoingRecord[],
  ): number[] {
    return records.map((record) => {
      const count = partitionsOf(record.topic);
      if (count === 0) {
        throw new Error(`send(${JSON.stringify(record.topic)}): the broker knows no such topic`);
      }
      if (record.partition !== undefined) {
        if (record.partition >= count) {
          throw new RangeError(
            `send(${JSON.stringify(record.topic)}): partition ${record.partition} does not ` +
              `exist; the topic has ${count} partition${count === 1 ? "" : "s"}`,
          );
        }
        return record.partition;
      }
      if (record.key !== undefined) {
        return compatibilityPartitioner({ topic: record.topic }, asBuffer(record.key)) % count;
      }
      const turn = this.#turns.get(record.topic) ?? 0;
      this.#turns.set(record.topic, turn + 1);
      return turn % count;
    });
  }
}
