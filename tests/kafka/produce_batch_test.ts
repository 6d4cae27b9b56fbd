// A produce request's records sorted by each partition's outcome, against a model: written records
// placed at their partition's first offset and on, a refusal failing a send alone (or sending the
// sends that shared the partition again one by one), the rest tried again; and the callers
// answered by what the tries learnt.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { writtenOf } from "../../src/kafka/outgoing_record.ts";
import type { OutgoingRecord, RecordMetadata } from "../../src/kafka/outgoing_record.ts";
import { PendingSend } from "../../src/kafka/pending_send.ts";
import {
  answerSends,
  type Entry,
  recordsAt,
  sortOutcomes,
  type Tally,
  unwritten,
} from "../../src/kafka/produce_batch.ts";
import { partitionKey, type PartitionOutcome } from "../../src/kafka/produce_outcome.ts";
import { propertyOptions } from "../property.ts";

const record = (topic: string): OutgoingRecord => ({
  topic,
  key: undefined,
  value: undefined,
  headers: [],
  partition: undefined,
});
const sendOf = (records: readonly OutgoingRecord[]) => new PendingSend(records, (e) => e);
const emptyTally = (): Tally => ({
  found: new Map(),
  refused: new Map(),
  renumbered: [],
  alone: [],
});

// Sends of records to a few partitions, each send's records placed, in the order sent.
const request = fc.array(
  fc.array(fc.tuple(fc.constantFrom("a", "b"), fc.nat(2)), { minLength: 1, maxLength: 4 }),
  { minLength: 1, maxLength: 4 },
).map((sends) => {
  const entries: Entry[] = [];
  for (const places of sends) {
    const send = sendOf(places.map(([topic]) => record(topic)));
    places.forEach(([, partition], at) =>
      entries.push({ record: send.records[at], partition, send, at })
    );
  }
  return entries;
});

const outcome: fc.Arbitrary<PartitionOutcome | undefined> = fc.oneof(
  fc.record({
    kind: fc.constant("written" as const),
    offset: fc.oneof(fc.constant(-1n), fc.bigInt(0n, 1000n)),
    counted: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("refused" as const), reason: fc.constantFrom("too large") }),
  fc.constant({ kind: "renumber" as const }),
  fc.constant({ kind: "unknown" as const }),
  fc.constant(undefined),
);
const outcomes = fc.array(outcome, { minLength: 6, maxLength: 6 }).map((list) => {
  const map = new Map<string, PartitionOutcome>();
  ["a", "b"].forEach((topic, t) =>
    [0, 1, 2].forEach((partition) => {
      const found = list[t * 3 + partition];
      if (found !== undefined) map.set(partitionKey(topic, partition), found);
    })
  );
  return map;
});

describe("sortOutcomes", () => {
  it("sorts each entry by its partition's outcome, as the model does", () => {
    fc.assert(
      fc.property(request, outcomes, (entries, outcomes) => {
        const failure = new Error("the try failed");
        const tally = emptyTally();
        const sorted = sortOutcomes(entries, outcomes, failure, tally);
        const outcomeOf = (e: Entry) =>
          outcomes.get(partitionKey(e.record.topic, e.partition)) ?? { kind: "unknown" };
        const samePartition = (e: Entry, f: Entry) =>
          e.record.topic === f.record.topic && e.partition === f.partition;
        // The entries of a partition, in the order sent; the partitions in the order first sent.
        const partitions: Entry[][] = [];
        for (const entry of entries) {
          const group = partitions.find((g) => samePartition(g[0], entry));
          if (group === undefined) partitions.push([entry]);
          else group.push(entry);
        }
        const ofKind = (kind: string) =>
          partitions.filter((g) => outcomeOf(g[0]).kind === kind).flat();
        assert.deepEqual(sorted.unknown, ofKind("unknown"));
        assert.deepEqual(tally.renumbered, ofKind("renumber"));
        assert.equal(
          sorted.uncounted,
          entries.some((e) => {
            const o = outcomeOf(e);
            return o.kind === "written" && !o.counted;
          }),
        );
        for (const group of partitions) {
          const o = outcomeOf(group[0]);
          if (o.kind === "written") {
            group.forEach((entry, i) =>
              assert.deepEqual(tally.found.get(entry.send)?.[entry.at], {
                topic: entry.record.topic,
                partition: entry.partition,
                offset: o.offset < 0n ? -1n : o.offset + BigInt(i),
              })
            );
          }
        }
        const refusedGroups = partitions.filter((g) => outcomeOf(g[0]).kind === "refused");
        const owners = (g: Entry[]) => [...new Set(g.map((e) => e.send))];
        const aloneModel = [
          ...new Set(refusedGroups.filter((g) => owners(g).length > 1).flatMap(owners)),
        ];
        assert.deepEqual(new Set(tally.alone), new Set(aloneModel));
        assert.equal(tally.alone.length, aloneModel.length);
        const refusedModel = new Set(
          refusedGroups.filter((g) => owners(g).length === 1).map((g) => g[0].send),
        );
        assert.deepEqual(new Set(tally.refused.keys()), refusedModel);
        for (const error of tally.refused.values()) {
          assert.match((error as Error).message, /: the broker refused the record: too large$/);
          assert.equal((error as Error).cause, failure);
        }
      }),
      propertyOptions(),
    );
  });
});

describe("answerSends", () => {
  it("resolves a send written whole, rejects one refused saying what went, leaves the rest", async () => {
    const whole = sendOf([record("a"), record("a")]);
    const part = sendOf([record("a"), record("b")]);
    const refused = sendOf([record("a"), record("b")]);
    const at = (offset: bigint): RecordMetadata => ({ topic: "a", partition: 0, offset });
    const found = new Map<PendingSend, RecordMetadata[]>([
      [whole, [at(1n), at(2n)]],
      [part, [at(3n)]],
      [refused, [at(4n)]],
    ]);
    const refusal = new Error("refused");
    answerSends([whole, part, refused], found, new Map([[refused, refusal]]));
    assert.deepEqual(await whole.answer, [at(1n), at(2n)]);
    assert.equal(part.settled, false);
    await assert.rejects(refused.answer, (error) => {
      assert.equal(error, refusal);
      assert.deepEqual([...writtenOf(error)], [0]);
      return true;
    });
    // Holes in what was found: nothing answered until each record was written.
    const holes = sendOf([record("a"), record("a")]);
    const sparse: RecordMetadata[] = [];
    sparse[1] = at(9n);
    answerSends([holes], new Map([[holes, sparse]]), new Map());
    assert.equal(holes.settled, false);
  });
});

describe("unwritten", () => {
  it("answers a send's entries whose record has no place yet", () => {
    const send = sendOf([record("a"), record("a"), record("b")]);
    const other = sendOf([record("a")]);
    const entries: Entry[] = [
      ...send.records.map((r, at) => ({ record: r, partition: 0, send, at })),
      { record: other.records[0], partition: 0, send: other, at: 0 },
    ];
    const found = new Map([[send, [{ topic: "a", partition: 0, offset: 1n }]]]);
    assert.deepEqual(unwritten(entries, send, found), entries.slice(1, 3));
    assert.deepEqual(unwritten(entries, other, found), entries.slice(3));
  });
});

describe("recordsAt", () => {
  it("places each partition's records at its first offset and on, -1 where none was answered", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("a", "b"), fc.nat(2)), { maxLength: 10 }),
        fc.dictionary(fc.constantFrom("a:0", "a:1", "b:2"), fc.bigInt(0n, 100n)),
        (places, firsts) => {
          const records = places.map(([topic]) => record(topic));
          const partitions = places.map(([, partition]) => partition);
          const first = new Map(
            Object.entries(firsts).map(([at, offset]) => {
              const [topic, partition] = at.split(":");
              return [partitionKey(topic, Number(partition)), offset];
            }),
          );
          const answered = recordsAt(records, partitions, first);
          places.forEach(([topic, partition], i) => {
            const before = places.slice(0, i).filter(([t, p]) => t === topic && p === partition);
            const start = firsts[`${topic}:${partition}`];
            assert.deepEqual(answered[i], {
              topic,
              partition,
              offset: start === undefined ? -1n : start + BigInt(before.length),
            });
          });
        },
      ),
      propertyOptions(),
    );
  });
});
