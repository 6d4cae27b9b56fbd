// Which transactions of the outbox's kill test roll back: about half, mixed over the keys, the same
// in the writer (tests/fixtures/kafka/outbox_writer.ts) and in the test that checks it.

/** Whether transaction `i` of the plan rolls back. */
export function rolledBackInPlan(i: number): boolean {
  return ((Math.imul(i + 1, 2654435761) >>> 16) & 1) === 1;
}
