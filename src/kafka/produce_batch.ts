// One produce request, read off the broker's answers: each record placed on its partition, what
// each partition's outcome makes of its records and of their sends, and where each record went
// from its partition's first offset. Pure: the producer tries the request and answers by it.
import { type OutgoingRecord, type RecordMetadata, withWritten } from "./outgoing_record.ts";
import type { PendingSend } from "./pending_send.ts";
import { partitionKey, type PartitionOutcome } from "./produce_outcome.ts";

/** One record of a request, placed: the partition it goes to, and the send it is of. */
export interface Entry {
  readonly record: OutgoingRecord;
  readonly partition: number;
  readonly send: PendingSend;
  /** Its place among its send's records. */
  readonly at: number;
}

/** What the tries of a request learnt, send by send. */
export interface Tally {
  /** Each send's records written so far, by place (sparse until each is written). */
  readonly found: Map<PendingSend, RecordMetadata[]>;
  /** The sends the broker refused, with why. */
  readonly refused: Map<PendingSend, unknown>;
  /** Entries refused for their numbering: sent again under a new producer id. */
  readonly renumbered: Entry[];
  /** The sends to try again one by one. */
  readonly alone: PendingSend[];
}

/** How {@linkcode sortOutcomes} sorted a try's entries. */
export interface Sorted {
  /** The entries whose outcome is not known: to try again. */
  readonly unknown: Entry[];
  /** A partition was written that the client did not count: its numbering must start again. */
  readonly uncounted: boolean;
}

/**
 * Sorts the outcome of each partition of `open` (from `outcomes`, keyed by `partitionKey`; a
 * partition not there is unknown) into `tally`: written (each record's offset in `found`, the
 * partition's first offset and one more for each record after), refused (a send alone fails, with
 * `failure` as the cause; the sends sharing the partition go again one by one), refused for its
 * numbering; answers the entries whose outcome is not known.
 */
export function sortOutcomes(
  open: readonly Entry[],
  outcomes: ReadonlyMap<string, PartitionOutcome>,
  failure: unknown,
  { found, refused, renumbered, alone }: Tally,
): Sorted {
  const unknown: Entry[] = [];
  let uncounted = false;
  for (const group of byPartition(open)) {
    const [first] = group;
    const outcome = outcomes.get(partitionKey(first.record.topic, first.partition)) ??
      { kind: "unknown" };
    if (outcome.kind === "written") {
      // The client numbers this partition's next records as if these were not written.
      if (!outcome.counted) uncounted = true;
      group.forEach((entry, i) =>
        noteWritten(found, entry, outcome.offset < 0n ? -1n : outcome.offset + BigInt(i))
      );
    } else if (outcome.kind === "refused") {
      const owners = [...new Set(group.map((entry) => entry.send))];
      if (owners.length === 1) {
        const topic = JSON.stringify(first.record.topic);
        refused.set(
          first.send,
          new Error(`send(${topic}): the broker refused the record: ${outcome.reason}`, {
            cause: failure,
          }),
        );
      } else alone.push(...owners.filter((send) => !alone.includes(send)));
    } else if (outcome.kind === "renumber") {
      renumbered.push(...group);
    } else {
      unknown.push(...group);
    }
  }
  return { unknown, uncounted };
}

/** The entries of `send` among `entries` whose record is not written yet. */
export function unwritten(
  entries: readonly Entry[],
  send: PendingSend,
  found: ReadonlyMap<PendingSend, readonly RecordMetadata[]>,
): Entry[] {
  return entries.filter((e) => e.send === send && found.get(send)?.[e.at] === undefined);
}

/**
 * Answers each of `sends` by what the request's tries learnt: a send refused rejects, saying which
 * of its records went (for a caller that sends again); a send whose every record was written
 * resolves; any other is left to its bound.
 */
export function answerSends(
  sends: readonly PendingSend[],
  found: ReadonlyMap<PendingSend, readonly RecordMetadata[]>,
  refused: ReadonlyMap<PendingSend, unknown>,
): void {
  for (const send of sends) {
    const sent = found.get(send) ?? [];
    if (refused.has(send)) send.reject(withWritten(refused.get(send), sent));
    // Sparse until each record's partition was written: `filter` skips the holes.
    else if (sent.filter(Boolean).length === send.records.length) send.resolve(sent);
  }
}

/**
 * Where each of `records` went, sent together to `partitions` (by index), given each partition's
 * first offset as the broker answered it (keyed by `partitionKey`): a partition's records follow
 * its first in the order sent; a partition with no offset answered (acks 0) gives -1.
 */
export function recordsAt(
  records: readonly OutgoingRecord[],
  partitions: readonly number[],
  firstOffsets: ReadonlyMap<string, bigint>,
): RecordMetadata[] {
  const next = new Map(firstOffsets);
  return records.map((record, i) => {
    const key = partitionKey(record.topic, partitions[i]);
    const offset = next.get(key);
    if (offset === undefined) {
      return { topic: record.topic, partition: partitions[i], offset: -1n };
    }
    next.set(key, offset + 1n);
    return { topic: record.topic, partition: partitions[i], offset };
  });
}

// The entries of each partition, each partition's in the order sent.
function byPartition(entries: readonly Entry[]): Entry[][] {
  const groups = new Map<string, Entry[]>();
  for (const entry of entries) {
    const key = partitionKey(entry.record.topic, entry.partition);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [entry]);
    else group.push(entry);
  }
  return [...groups.values()];
}

// Notes where `entry` went among its send's records.
function noteWritten(
  found: Map<PendingSend, RecordMetadata[]>,
  entry: Entry,
  offset: bigint,
): void {
  let sent = found.get(entry.send);
  if (sent === undefined) found.set(entry.send, sent = []);
  sent[entry.at] = { topic: entry.record.topic, partition: entry.partition, offset };
}
