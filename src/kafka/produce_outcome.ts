// What a failed produce request says of each partition it carried, read from the client's error.
// The idempotent producer decides from it what may be sent again: a partition the broker wrote is
// never sent again (it would be written twice), one whose answer was lost is sent again as it was
// (the broker keeps the first and acknowledges the copy), and one the broker refused is not.
// Pure, and never throws: the error is whatever the client, or a hostile value, made.

/** What became of one partition's records in a failed request. */
export type PartitionOutcome =
  /**
   * The broker wrote them, the first at `offset` (-1: written, the offset not said). `counted`:
   * the client saw the answer and moved
   * its numbering on; a partition answered inside an error response was written, but the client
   * still numbers its next records as if it was not.
   */
  | { readonly kind: "written"; readonly offset: bigint; readonly counted: boolean }
  /** Refused for good (too large, not allowed, ...), not written: `reason` says why. */
  | { readonly kind: "refused"; readonly reason: string }
  /** Refused for the producer's numbering (out of sequence, unknown producer): not written. */
  | { readonly kind: "renumber" }
  /** Not known: the answer was lost, or the broker asked to try again. */
  | { readonly kind: "unknown" };

/** The key of a topic's partition in the map {@linkcode produceOutcomes} answers. */
export function partitionKey(topic: string, partition: number): string {
  return `${partition}\u0000${topic}`;
}

// OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH, UNKNOWN_PRODUCER_ID: what Java's producer
// mends with a new producer id or epoch (KIP-360).
const RENUMBER = new Set([45, 47, 59]);
// DUPLICATE_SEQUENCE_NUMBER: the broker has these records already (Java completes the batch).
const DUPLICATE = 46;
// The errors a walk reads at the most: a hostile error (a cycle, a huge tree) ends the walk.
const MOST = 10_000;

interface ProtocolErrorView {
  readonly path: unknown;
  readonly canRetry: unknown;
  readonly message: unknown;
}

/**
 * Each partition a failed request's `error` speaks of, keyed by {@linkcode partitionKey}: the
 * offsets the client counted (`error.produced`), and each partition of each produce response in
 * the error (one per try). A partition written in any try was written; one the error does not
 * name is unknown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { partitionKey, produceOutcomes } from "./produce_outcome.ts";
 *
 * const response = {
 *   responses: [{
 *     name: "orders",
 *     partitionResponses: [
 *       { index: 0, errorCode: 0, baseOffset: 41n },
 *       { index: 1, errorCode: 10, baseOffset: -1n },
 *     ],
 *   }],
 * };
 * const tooLarge = { path: "/responses/0/partition_responses/1", canRetry: false, message: "too large" };
 * const error = Object.assign(new AggregateError([tooLarge], "failed"), { response });
 * const outcomes = produceOutcomes(error);
 * assert.deepEqual(outcomes.get(partitionKey("orders", 0)), { kind: "written", offset: 41n, counted: false });
 * assert.deepEqual(outcomes.get(partitionKey("orders", 1)), { kind: "refused", reason: "too large" });
 * ```
 */
export function produceOutcomes(error: unknown): Map<string, PartitionOutcome> {
  const outcomes = new Map<string, PartitionOutcome>();
  try {
    walk(error, outcomes);
  } catch {
    // What was read before a throwing getter stands; the rest is unknown.
  }
  return outcomes;
}

function walk(root: unknown, outcomes: Map<string, PartitionOutcome>): void {
  const seen = new Set<unknown>();
  const stack: unknown[] = [root];
  while (stack.length > 0 && seen.size < MOST) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null || seen.has(node)) continue;
    seen.add(node);
    const record = node as Record<string, unknown>;
    readCounted(record.produced, outcomes);
    const inner = Array.isArray(record.errors) ? record.errors : [];
    readResponse(record.response, inner as ProtocolErrorView[], outcomes);
    stack.push(...inner, record.cause);
  }
}

// The offsets the client counted: what it acknowledged of the destinations that answered.
function readCounted(produced: unknown, outcomes: Map<string, PartitionOutcome>): void {
  const offsets = (produced as { offsets?: unknown } | undefined)?.offsets;
  if (!Array.isArray(offsets)) return;
  for (const entry of offsets) {
    const { topic, partition, offset } = (entry ?? {}) as Record<string, unknown>;
    if (typeof topic !== "string" || typeof partition !== "number") continue;
    if (typeof offset !== "bigint") continue;
    outcomes.set(partitionKey(topic, partition), { kind: "written", offset, counted: true });
  }
}

function readResponse(
  response: unknown,
  errors: readonly ProtocolErrorView[],
  outcomes: Map<string, PartitionOutcome>,
): void {
  const topics = (response as { responses?: unknown } | undefined)?.responses;
  if (!Array.isArray(topics)) return;
  topics.forEach((topic: unknown, i) => {
    const { name, partitionResponses } = (topic ?? {}) as Record<string, unknown>;
    if (typeof name !== "string" || !Array.isArray(partitionResponses)) return;
    partitionResponses.forEach((answer: unknown, j) => {
      const { index, errorCode, baseOffset } = (answer ?? {}) as Record<string, unknown>;
      if (typeof index !== "number" || typeof errorCode !== "number") return;
      const key = partitionKey(name, index);
      const known = outcomes.get(key);
      // A partition written (in this try or another) stays written.
      if (known?.kind === "written") return;
      if (errorCode === 0) {
        if (typeof baseOffset === "bigint") {
          outcomes.set(key, { kind: "written", offset: baseOffset, counted: false });
        }
        return;
      }
      if (errorCode === DUPLICATE) {
        // Written, at an offset the broker no longer says: -1, as Java answers it.
        outcomes.set(key, { kind: "written", offset: -1n, counted: false });
        return;
      }
      if (RENUMBER.has(errorCode)) {
        outcomes.set(key, { kind: "renumber" });
        return;
      }
      const said = errors.find((e) => e?.path === `/responses/${i}/partition_responses/${j}`);
      // The client's table says which codes may pass with a try (not enough replicas, no leader).
      if (said !== undefined && said.canRetry === false) {
        outcomes.set(key, { kind: "refused", reason: String(said.message) });
      } else if (known === undefined) {
        outcomes.set(key, { kind: "unknown" });
      }
    });
  });
}
