// produceOutcomes reads what a failed produce request wrote from the client's own error classes,
// against a reference of what each partition's answer was, however deep the client's tries bury
// the answers; and it never throws on a hostile error.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MultipleErrors, ResponseError, TimeoutError } from "@platformatic/kafka";
import {
  partitionKey,
  type PartitionOutcome,
  produceOutcomes,
} from "../../src/kafka/produce_outcome.ts";
import { propertyOptions } from "../property.ts";

// Produce (API key 0) error codes by what they mean to the producer.
const WRITTEN = 0;
const RETRIABLE = [6, 7, 19, 20]; // not leader, request timed out, not enough replicas (after append)
const REFUSED = [10, 18, 87]; // message too large, record list too large, invalid record
const RENUMBER = [45, 47, 59]; // out of order sequence, invalid producer epoch, unknown producer id

interface Answer {
  readonly topic: string;
  readonly partition: number;
  readonly code: number;
  readonly offset: bigint;
}

// A produce response as the client parses it, and the error it throws for it.
function responseError(answers: readonly Answer[]): ResponseError {
  const topics = [...new Set(answers.map((a) => a.topic))];
  const responses = topics.map((name) => ({
    name,
    partitionResponses: answers.filter((a) => a.topic === name).map((a) => ({
      index: a.partition,
      errorCode: a.code,
      baseOffset: a.code === 0 ? a.offset : -1n,
      logAppendTimeMs: -1n,
      logStartOffset: 0n,
      recordErrors: [],
      errorMessage: null,
    })),
  }));
  const errors: Record<string, [number, null]> = {};
  responses.forEach((topic, i) =>
    topic.partitionResponses.forEach((p, j) => {
      if (p.errorCode !== 0) {
        errors[`/responses/${i}/partition_responses/${j}`] = [p.errorCode, null];
      }
    })
  );
  return new ResponseError(0, 11, errors, { responses, throttleTimeMs: 0 });
}

const answer = fc.record({
  topic: fc.constantFrom("orders", "payments"),
  partition: fc.nat(5),
  code: fc.constantFrom(WRITTEN, ...RETRIABLE, ...REFUSED, ...RENUMBER),
  offset: fc.bigInt(0n, 1n << 40n),
});

describe("produceOutcomes", () => {
  it("reads each partition's answer from the client's errors, however deep", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(answer, {
          selector: (a) => partitionKey(a.topic, a.partition),
          maxLength: 8,
        }),
        fc.uniqueArray(answer, {
          selector: (a) => partitionKey(a.topic, a.partition),
          maxLength: 4,
        }),
        fc.nat(3),
        (answered, counted, depth) => {
          // `counted`: destinations that answered whole, which the client counted; the rest of the
          // partitions answered inside an error response, buried under `depth` rounds of tries.
          const countedKeys = new Set(counted.map((a) => partitionKey(a.topic, a.partition)));
          const inError = answered.filter((a) =>
            !countedKeys.has(partitionKey(a.topic, a.partition))
          );
          let buried: Error = responseError(inError);
          for (let i = 0; i < depth; i++) {
            buried = new MultipleErrors(`produce failed ${i + 2} times.`, [
              new TimeoutError("Request timed out"),
              buried,
            ]);
          }
          const top = new MultipleErrors("Producing messages failed.", [buried]);
          Object.assign(top, {
            produced: {
              offsets: counted.map((a) => ({
                topic: a.topic,
                partition: a.partition,
                offset: a.offset,
              })),
            },
          });
          const expected = new Map<string, PartitionOutcome>();
          for (const a of counted) {
            expected.set(partitionKey(a.topic, a.partition), {
              kind: "written",
              offset: a.offset,
              counted: true,
            });
          }
          for (const a of inError) {
            const key = partitionKey(a.topic, a.partition);
            if (a.code === WRITTEN) {
              expected.set(key, { kind: "written", offset: a.offset, counted: false });
            } else if (RENUMBER.includes(a.code)) expected.set(key, { kind: "renumber" });
            else if (RETRIABLE.includes(a.code)) expected.set(key, { kind: "unknown" });
          }
          const outcomes = produceOutcomes(top);
          for (const a of inError.filter((a) => REFUSED.includes(a.code))) {
            const found = outcomes.get(partitionKey(a.topic, a.partition));
            assert.equal(found?.kind, "refused");
            assert.ok(found.reason.length > 0);
            outcomes.delete(partitionKey(a.topic, a.partition));
          }
          assert.deepEqual(outcomes, expected);
        },
      ),
      propertyOptions(),
    );
  });

  it("knows nothing of an error with no answer in it: a lost connection, a time-out", () => {
    assert.equal(produceOutcomes(new TimeoutError("Request timed out")).size, 0);
    assert.equal(produceOutcomes(new Error("socket hang up")).size, 0);
    assert.equal(produceOutcomes(undefined).size, 0);
    assert.equal(produceOutcomes("text").size, 0);
  });

  it("a partition written in one try stays written when a later try is refused", () => {
    const first = responseError([{ topic: "t", partition: 0, code: 0, offset: 7n }]);
    const second = responseError([{ topic: "t", partition: 0, code: 45, offset: 0n }]);
    const outcomes = produceOutcomes(
      new MultipleErrors("produce failed 2 times.", [first, second]),
    );
    assert.deepEqual(outcomes.get(partitionKey("t", 0)), {
      kind: "written",
      offset: 7n,
      counted: false,
    });
  });

  it("never throws on a hostile error: a cycle, a throwing getter, a revoked proxy", () => {
    const cycle = new AggregateError([], "cycle");
    (cycle as unknown as { errors: unknown[] }).errors.push(cycle);
    Object.assign(cycle, { cause: cycle });
    assert.equal(produceOutcomes(cycle).size, 0);
    const throwing = Object.defineProperty(new Error("x"), "response", {
      get() {
        throw new Error("no");
      },
    });
    assert.equal(produceOutcomes(throwing).size, 0);
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(produceOutcomes(proxy).size, 0);
    const junk = {
      produced: { offsets: [null, { topic: 1 }, { topic: "t", partition: 0, offset: 1 }] },
    };
    assert.equal(produceOutcomes(junk).size, 0);
  });
});
