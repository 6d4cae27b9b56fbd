// Random trees of nested transactional calls, each with a propagation, a write of its own and
// maybe a failure, run against a real database and against a small model of Spring's rules: the
// rows that remain are the model's. On PostgreSQL and MariaDB, where a transaction beside another
// (REQUIRES_NEW, NOT_SUPPORTED) may write; SQLite's one writer is tested in transactions_test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SqlClient } from "../../src/data/sql_client.ts";
import type { Propagation } from "../../src/data/transaction_options.ts";
import { KINDS, testPools } from "../sql/pools.ts";
import { propertyOptions } from "../property.ts";

interface Call {
  readonly propagation: Propagation;
  readonly fail: boolean;
  readonly children: readonly Call[];
}

const PROPAGATIONS: readonly Propagation[] = [
  "REQUIRED",
  "REQUIRES_NEW",
  "NESTED",
  "SUPPORTS",
  "NOT_SUPPORTED",
  "MANDATORY",
  "NEVER",
];

const calls: fc.Arbitrary<Call> = fc.letrec<{ call: Call }>((tie) => ({
  call: fc.record({
    propagation: fc.constantFrom(...PROPAGATIONS),
    fail: fc.boolean(),
    children: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constant([]),
      fc.array(tie("call"), { maxLength: 3 }),
    ),
  }),
})).call;

interface ModelTx {
  readonly rows: string[];
  rollbackOnly: boolean;
}

/**
 * What remains once `call` ran in `current` (a transaction, or none): rows land in `committed`.
 * Returns whether the call failed. Each call writes one row before its children, which run one
 * after another, their failures caught.
 */
function model(
  call: Call,
  current: ModelTx | undefined,
  committed: string[],
  next: () => string,
): boolean {
  const p = call.propagation;
  if ((p === "MANDATORY" && !current) || (p === "NEVER" && current)) return true;
  const mode = p === "REQUIRES_NEW" || (!current && (p === "REQUIRED" || p === "NESTED"))
    ? "new"
    : p === "NOT_SUPPORTED" || p === "NEVER" || !current
    ? "none"
    : p === "NESTED"
    ? "savepoint"
    : "join";
  const tx = mode === "new"
    ? { rows: [], rollbackOnly: false }
    : mode === "none"
    ? undefined
    : current;
  const savepoint = tx?.rows.length ?? 0;
  // Rolling back to a savepoint also takes back the rollback mark a joined call set in it.
  const marked = tx?.rollbackOnly ?? false;
  const row = next();
  if (tx) tx.rows.push(row);
  else committed.push(row);
  for (const child of call.children) model(child, tx, committed, next);
  let failed = call.fail;
  if (mode === "new") {
    // A transaction marked for rollback refuses its commit: the call fails.
    if (failed || tx!.rollbackOnly) failed = true;
    else committed.push(...tx!.rows);
  } else if (mode === "join" && failed) tx!.rollbackOnly = true;
  else if (mode === "savepoint" && (failed || (tx!.rollbackOnly && !marked))) {
    // Its own failure, or a joined call inside it that marked the transaction: Spring's commit
    // of the savepoint's status finds the mark, rolls back to the savepoint (clearing the mark)
    // and fails with UnexpectedRollbackException; the caller goes on.
    tx!.rows.length = savepoint;
    tx!.rollbackOnly = marked;
    failed = true;
  }
  return failed;
}

for (const kind of KINDS.filter((k) => k !== "sqlite")) {
  describe(`nested transactional calls on ${kind}, against a model (property)`, () => {
    const open = testPools();

    it("leave exactly the rows the model says", async () => {
      const { pool } = await open(kind, { maxSize: 12 });
      const sql = new SqlClient(pool);
      await sql.execute`CREATE TABLE items (v VARCHAR(20) NOT NULL)`;
      const run = (call: Call, next: () => string): Promise<void> =>
        sql.transaction(async () => {
          await sql.execute`INSERT INTO items (v) VALUES (${next()})`;
          for (const child of call.children) await run(child, next).catch(() => {});
          if (call.fail) throw new Error("fails");
        }, { propagation: call.propagation });
      await fc.assert(
        fc.asyncProperty(calls, async (call) => {
          await sql.execute`DELETE FROM items`;
          let n = 0;
          await run(call, () => `r${++n}`).catch(() => {});
          const expected: string[] = [];
          let m = 0;
          model(call, undefined, expected, () => `r${++m}`);
          const rows = await sql.query<{ v: string }>`SELECT v FROM items`;
          assert.deepEqual(rows.map((r) => r.v).sort(), expected.sort());
        }),
        propertyOptions(200),
      );
    });
  });
}
