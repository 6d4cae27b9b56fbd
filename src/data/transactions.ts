// Runs a call in a transaction of a pool, as its options ask (Spring's propagation, read-only,
// timeout and rollback rules), with each database's own statements. A transaction holds one
// connection from its beginning to its end: concurrent transactions never share one.
import type { DatabaseKind } from "../migrate/sql/datasource.ts";
import type { DataPool } from "./data_pool.ts";
import { DataError } from "./data_error.ts";
import { rollsBack, type TransactionOptions } from "./transaction_options.ts";
import { abortedCommitError, transactionConnection } from "./transaction_connection.ts";
import {
  currentTransaction,
  enclosingSavepoint,
  leftByFailedCall,
  runBound,
  runInSavepoint,
  runJoined,
  type Savepoint,
  type Transaction,
  type TransactionPhase,
} from "./transaction_scope.ts";

/** Runs `fn` as `options` ask, in, beside or outside the transaction of `pool` it is called in. */
export function inTransaction<T>(
  pool: DataPool,
  options: TransactionOptions,
  fn: () => Promise<T>,
): Promise<T> {
  // A transaction that ended is none: a promise chain or a timer begun inside it carries it on,
  // and a transaction begun there must be one of its own. So is one whose call that began the
  // current work has returned: the work outlived it.
  const failedCall = leftByFailedCall(pool);
  if (failedCall !== undefined) return Promise.reject(failedCall);
  const found = currentTransaction(pool);
  const current = currentTransaction(pool, true);
  // Without a transaction: outside any, also where an ended one is still bound.
  const outside = () => found === undefined ? fn() : runBound(pool, null, fn);
  const fail = (message: string) =>
    Promise.reject(new DataError({ datasource: pool.name, reason: "transaction", message }));
  switch (options.propagation ?? "REQUIRED") {
    case "REQUIRED":
      return current ? joined(current, options, fn) : begun(pool, options, fn);
    case "SUPPORTS":
      return current ? joined(current, options, fn) : outside();
    case "MANDATORY":
      return current
        ? joined(current, options, fn)
        : fail("propagation MANDATORY needs a transaction to join, and the call runs in none");
    case "NEVER":
      return current
        ? fail("propagation NEVER runs outside any transaction, and the call runs in one")
        : outside();
    case "REQUIRES_NEW":
      return begun(pool, options, fn);
    case "NOT_SUPPORTED":
      return runBound(pool, null, fn);
    case "NESTED":
      return current ? nested(current, options, fn) : begun(pool, options, fn);
  }
}

// A call that joins the transaction it runs in: a failure that asks for a rollback dooms it,
// so that the outer call cannot commit what this one gave up.
async function joined<T>(
  transaction: Transaction,
  options: TransactionOptions,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await runJoined(fn);
  } catch (error) {
    if (rollsBack(options, error)) transaction.rollbackOnly = true;
    throw error;
  }
}

async function begun<T>(
  pool: DataPool,
  options: TransactionOptions,
  fn: () => Promise<T>,
): Promise<T> {
  const connection = await pool.acquire();
  const readOnly = options.readOnly === true;
  let broken = false;
  // A transaction statement that fails leaves the connection in a state nobody knows: closed.
  // (A COMMIT PostgreSQL answered with ROLLBACK is known: the connection is fine.)
  const control = async (text: string, deadline?: number) => {
    try {
      await connection.control(text, deadline);
    } catch (error) {
      broken ||= !rolledBack(error);
      throw error;
    }
  };
  // Given back once the transaction ended, before its after-phase listeners run: they may use
  // the datasource, whose pool may have no other connection (`:memory:` has one).
  let given = false;
  const giveBack = async () => {
    if (given) return;
    given = true;
    // What the transaction set on the session, put back for the next user: SQLite's query_only
    // (read-only), MySQL's autocommit. One that cannot be put back closes the connection.
    if (!broken) {
      for (const text of RESET[pool.kind](readOnly)) await control(text).catch(() => {});
    }
    connection.release(broken);
  };
  // Counted from now: the timeout bounds the wait for BEGIN's answer too, as its statements'.
  const deadline = options.timeout === undefined
    ? undefined
    : performance.now() + options.timeout * 1000;
  try {
    for (const text of BEGIN[pool.kind](readOnly)) await control(text, deadline);
  } catch (error) {
    connection.release(true);
    throw error;
  }
  // It hears the failures after which the database ended the transaction itself.
  const watched = transactionConnection(pool, connection, () => transaction);
  // The COMMIT or ROLLBACK waits for the statements sent before it to settle: one beside a
  // failure (Promise.all) may still be on its way, and must not reach the server after the end.
  // Which of the two is chosen once they settled: one of them may have ended the transaction on
  // the database (a deadlock), and a COMMIT then commits nothing.
  const finish = async (how: () => "COMMIT" | "ROLLBACK") => {
    await watched.settled();
    await control(how());
  };
  // The caller's error when the transaction rolled back where the call asked for a commit.
  const rolledBackError = (): DataError => {
    const aborted = transaction.aborted;
    return aborted?.final ? abortedCommitError(pool, aborted) : new DataError({
      datasource: pool.name,
      reason: "transaction",
      message: "rolled back: a call inside it failed, which marked it for rollback, or it " +
        "ran past its timeout",
    });
  };
  const transaction: Transaction = {
    pool,
    connection: watched,
    deadline,
    savepoints: 0,
    rollbackOnly: false,
    ended: false,
    aborted: undefined,
    synchronizations: [],
    activeSavepoint: undefined,
  };
  try {
    let result: T;
    try {
      result = await runBound(pool, transaction, async () => {
        const value = await fn();
        // Inside the transaction still: what they write commits with it, and a failure rolls
        // it back.
        if (!transaction.rollbackOnly) await phase(transaction, ["BEFORE_COMMIT"]);
        return value;
      });
    } catch (error) {
      broken ||= lostHere(pool, error);
      const how = rollsBack(options, error) ? "ROLLBACK" : "COMMIT";
      // A failed COMMIT or ROLLBACK leaves the outcome unknown (the connection is closed).
      const ended = await end(transaction, how, finish, giveBack).then(() => true, () => false);
      throw await afterEnd(
        transaction,
        ended && (transaction.rollbackOnly ? "ROLLBACK" : how),
        error,
      );
    }
    // A statement in flight as the timeout passed ran on: the transaction is over its time.
    if (transaction.deadline !== undefined && performance.now() > transaction.deadline) {
      transaction.rollbackOnly = true;
    }
    if (transaction.rollbackOnly) {
      await end(transaction, "ROLLBACK", finish, giveBack);
      throw await afterEnd(transaction, "ROLLBACK", rolledBackError());
    }
    // A COMMIT the database refused (a deferred constraint): the caller gets its error, once the
    // listeners of AFTER_COMPLETION heard of it.
    await end(transaction, "COMMIT", finish, giveBack).catch(async (error: unknown) => {
      throw await afterEnd(transaction, rolledBack(error) && "ROLLBACK", error);
    });
    // A statement still on its way as the call returned doomed it (a deadlock): rolled back.
    if (transaction.rollbackOnly) throw await afterEnd(transaction, "ROLLBACK", rolledBackError());
    const failure = await afterEnd(transaction, "COMMIT", undefined);
    if (failure !== undefined) throw failure;
    return result;
  } catch (error) {
    broken ||= lostHere(pool, error);
    throw error;
  } finally {
    await giveBack();
  }
}

// A COMMIT the database turned into a rollback (PostgreSQL's, after a failed statement).
function rolledBack(error: unknown): boolean {
  return error instanceof DataError && error.reason === "transaction";
}

// Whether `error` says this pool's connection died (another datasource's says nothing of it).
function lostHere(pool: DataPool, error: unknown): boolean {
  return error instanceof DataError && error.reason === "connection" &&
    error.datasource === pool.name;
}

// Runs the work registered for `phases`, in order; the first failure rejects.
async function phase(transaction: Transaction, phases: TransactionPhase[]): Promise<void> {
  for (const { phase, run } of transaction.synchronizations) {
    if (phases.includes(phase)) await run();
  }
}

/**
 * Runs the listeners of what the transaction ended in (`false`: unknown, its COMMIT or ROLLBACK
 * failed: only AFTER_COMPLETION), outside it. Resolves to what the caller gets: the call's own
 * error, with a listener's failure beside it in an AggregateError, or the listener's failure
 * alone after a commit.
 */
async function afterEnd(
  transaction: Transaction,
  how: "COMMIT" | "ROLLBACK" | false,
  error: unknown,
): Promise<unknown> {
  const phases: TransactionPhase[] = how === "COMMIT"
    ? ["AFTER_COMMIT", "AFTER_COMPLETION"]
    : how === "ROLLBACK"
    ? ["AFTER_ROLLBACK", "AFTER_COMPLETION"]
    : ["AFTER_COMPLETION"];
  try {
    await phase(transaction, phases);
  } catch (failure) {
    if (error === undefined) return failure;
    return new AggregateError(
      [error, failure],
      `${(error as Error)?.message ?? String(error)}; then a transactional event listener failed: ${
        (failure as Error)?.message ?? String(failure)
      }`,
    );
  }
  return error;
}

// Ends it: whatever the outcome, no statement runs on it after this. A COMMIT or ROLLBACK that
// fails may leave it open (SQLite's COMMIT, refused while another handle reads): `control`
// marks the connection broken then, so that it is closed rather than reused.
async function end(
  transaction: Transaction,
  how: "COMMIT" | "ROLLBACK",
  finish: (how: () => "COMMIT" | "ROLLBACK") => Promise<void>,
  giveBack: () => Promise<void>,
): Promise<void> {
  transaction.ended = true;
  try {
    // A doomed transaction is never committed, whatever the call's own outcome.
    await finish(() => transaction.rollbackOnly ? "ROLLBACK" : how);
  } finally {
    await giveBack();
  }
}

// A savepoint in the transaction: rolled back alone when the call fails, the outer transaction
// going on. A savepoint that cannot be rolled back to dooms the whole transaction instead.
async function nested<T>(
  transaction: Transaction,
  options: TransactionOptions,
  fn: () => Promise<T>,
): Promise<T> {
  // Two NESTED calls side by side (Promise.all) would interleave their savepoints on the one
  // connection, and one's rollback would take the other's finished work with it: they take turns.
  const enclosing = enclosingSavepoint(transaction);
  while (
    transaction.activeSavepoint !== undefined && transaction.activeSavepoint !== enclosing
  ) {
    await transaction.activeSavepoint.done;
  }
  let finish!: () => void;
  const savepoint: Savepoint = {
    transaction,
    parent: enclosing,
    done: new Promise<void>((resolve) => finish = resolve),
  };
  transaction.activeSavepoint = savepoint;
  try {
    return await inSavepoint(transaction, savepoint, options, fn);
  } finally {
    transaction.activeSavepoint = enclosing;
    finish();
  }
}

async function inSavepoint<T>(
  transaction: Transaction,
  savepoint: Savepoint,
  options: TransactionOptions,
  fn: () => Promise<T>,
): Promise<T> {
  const name = `thaw_savepoint_${++transaction.savepoints}`;
  const { connection, deadline } = transaction;
  // Bounded by the transaction's timeout, as its statements are.
  await connection.control(`SAVEPOINT ${name}`, deadline);
  // A joined call inside that fails marks the whole transaction; rolled back to the savepoint,
  // its work is gone, and so is the mark (as Spring's rollbackToSavepoint clears it).
  const marked = transaction.rollbackOnly;
  let result: T;
  try {
    result = await runInSavepoint(savepoint, fn);
  } catch (error) {
    const undo = rollsBack(options, error);
    try {
      if (undo) await connection.control(`ROLLBACK TO SAVEPOINT ${name}`, deadline);
      await connection.control(`RELEASE SAVEPOINT ${name}`, deadline);
      if (undo) transaction.rollbackOnly = marked;
    } catch {
      transaction.rollbackOnly = true;
    }
    throw error;
  }
  await connection.control(`RELEASE SAVEPOINT ${name}`, deadline);
  return result;
}

// How each database begins a transaction. SQLite's takes the write lock at once (IMMEDIATE):
// two deferred ones that both go on to write would deadlock, one failing at once with BUSY.
// MySQL's session leaves autocommit for the transaction's life (as Spring's setAutoCommit(false)):
// once InnoDB rolled it back (a deadlock), a statement that still reached the server (one queued
// beside the failed one) opens a transaction the final ROLLBACK ends, rather than committing
// alone. A START TRANSACTION in autocommit would leave the session committing each statement.
const BEGIN: Readonly<Record<DatabaseKind, (readOnly: boolean) => string[]>> = {
  postgres: (readOnly) => [readOnly ? "BEGIN READ ONLY" : "BEGIN"],
  mysql: (readOnly) =>
    readOnly ? ["SET autocommit = 0", "START TRANSACTION READ ONLY"] : ["SET autocommit = 0"],
  sqlite: (readOnly) => readOnly ? ["PRAGMA query_only = ON", "BEGIN"] : ["BEGIN IMMEDIATE"],
};

// What puts a session back as the pool hands it out, once the transaction ended.
const RESET: Readonly<Record<DatabaseKind, (readOnly: boolean) => string[]>> = {
  postgres: () => [],
  mysql: () => ["SET autocommit = 1"],
  sqlite: (readOnly) => readOnly ? ["PRAGMA query_only = OFF"] : [],
};
