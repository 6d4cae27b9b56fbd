// Runs a call in a transaction of a pool, as its options ask (Spring's propagation, read-only,
// isolation, timeout and rollback rules, and its TransactionStatus), with each database's own
// statements (its SqlDialect). A transaction holds one connection from its beginning to
// its end: concurrent transactions never share one.
import type { DataPool } from "../sql/data_pool.ts";
import { DataError } from "../sql/data_error.ts";
import { rollsBack, type TransactionOptions } from "./transaction_options.ts";
import { abortedCommitError } from "./transaction_connection.ts";
import { CallStatus } from "./transaction_status.ts";
import { UnexpectedRollbackError } from "./unexpected_rollback_error.ts";
import {
  type RollbackMark,
  rolledBack,
  type Savepoint,
  TIMED_OUT,
  Transaction,
  type TransactionPhase,
} from "./transaction.ts";
import {
  currentTransaction,
  enclosingSavepoint,
  leftByFailedCall,
  runBound,
  runInSavepoint,
  runJoined,
  runOutside,
} from "./transaction_scope.ts";

/** The work of a transactional call: given its status. */
export type TransactionWork<T> = (status: CallStatus) => Promise<T>;

/**
 * Runs `fn` as `options` ask, in, beside or outside the transaction of `pool` it is called in.
 * `where`: the call, as errors and its status name it (`Billing.charge()`, `transaction()`).
 */
export function inTransaction<T>(
  pool: DataPool,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
): Promise<T> {
  // A transaction that ended is none: a promise chain or a timer begun inside it carries it on,
  // and a transaction begun there must be one of its own. So is one whose call that began the
  // current work has returned: the work outlived it.
  const failedCall = leftByFailedCall(pool);
  if (failedCall !== undefined) return Promise.reject(failedCall);
  const found = currentTransaction(pool);
  const current = currentTransaction(pool, true);
  // Without a transaction: outside any, also where an ended one is still bound.
  const outside = () => {
    const status = noneStatus(pool, options, where);
    const run = () => fn(status);
    return (found === undefined ? runOutside(status, run) : runBound(pool, null, status, run))
      .finally(() => status.completed = true);
  };
  const fail = (message: string) =>
    Promise.reject(new DataError({ datasource: pool.name, reason: "transaction", message }));
  switch (options.propagation ?? "REQUIRED") {
    case "REQUIRED":
      return current ? joined(current, options, fn, where) : begun(pool, options, fn, where);
    case "SUPPORTS":
      return current ? joined(current, options, fn, where) : outside();
    case "MANDATORY":
      return current
        ? joined(current, options, fn, where)
        : fail("propagation MANDATORY needs a transaction to join, and the call runs in none");
    case "NEVER":
      return current
        ? fail("propagation NEVER runs outside any transaction, and the call runs in one")
        : outside();
    case "REQUIRES_NEW":
      return begun(pool, options, fn, where);
    case "NOT_SUPPORTED": {
      const status = noneStatus(pool, options, where);
      return runBound(pool, null, status, () => fn(status))
        .finally(() => status.completed = true);
    }
    case "NESTED":
      return current ? nested(current, options, fn, where) : begun(pool, options, fn, where);
  }
}

// The status of a call that runs in no transaction of its pool.
function noneStatus(pool: DataPool, options: TransactionOptions, where: string): CallStatus {
  return new CallStatus(
    pool.name,
    where,
    "none",
    undefined,
    options.readOnly === true,
    options.isolation ?? "DEFAULT",
  );
}

// A call that joins the transaction it runs in: a failure that asks for a rollback dooms it, as
// its setRollbackOnly() does, so that the outer call cannot commit what this one gave up. One
// that would change what the transaction is (a write in a read-only one, another isolation
// level) is refused before it runs (Spring's validateExistingTransaction).
async function joined<T>(
  transaction: Transaction,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
): Promise<T> {
  const refusal = joinRefusal(transaction, options, where);
  if (refusal !== undefined) throw refusal;
  const status = new CallStatus(
    transaction.pool.name,
    where,
    "joined",
    transaction,
    false,
    "DEFAULT",
  );
  let result: T;
  try {
    result = await runJoined(status, () => fn(status));
  } catch (error) {
    if (rollsBack(options, error)) {
      transaction.markRollbackOnly(
        `a call inside it failed (${where}, joined to it), which marked it for rollback`,
      );
    } // A rule that commits on this error: a mark the call set still dooms the transaction.
    else if (status.local) doomBy(transaction, where);
    throw error;
  } finally {
    status.completed = true;
  }
  if (status.local) doomBy(transaction, where);
  return result;
}

// A participant's own rollback-only mark is the transaction's (Spring's doSetRollbackOnly).
function doomBy(transaction: Transaction, where: string): void {
  transaction.markRollbackOnly(
    `a call inside it (${where}, joined to it) marked it rollback-only (setRollbackOnly())`,
  );
}

// Why a call cannot join `transaction`, if it cannot: Spring's validateExistingTransaction (which
// Spring runs only where it is switched on; here always): a read-write call in a read-only
// transaction, or a call asking an isolation level other than the one it was begun at (DEFAULT,
// the database's own, counts as none asked: Spring refuses a level asked of it too).
function joinRefusal(
  transaction: Transaction,
  options: TransactionOptions,
  where: string,
): DataError | undefined {
  const fail = (message: string) =>
    new DataError({ datasource: transaction.pool.name, reason: "transaction", message });
  if (transaction.readOnly && options.readOnly !== true) {
    return fail(
      `${where} is read-write (readOnly: false) and cannot join the read-only transaction of ` +
        `${transaction.name}: declare it readOnly: true, or give it a transaction of its own ` +
        "(propagation REQUIRES_NEW)",
    );
  }
  const isolation = options.isolation;
  if (
    isolation !== undefined && isolation !== "DEFAULT" && isolation !== transaction.isolation
  ) {
    return fail(
      `${where} asks isolation ${isolation} and cannot join the transaction of ` +
        `${transaction.name}, begun at ${transaction.isolation}: begin that one at ${isolation}, ` +
        "or give this call a transaction of its own (propagation REQUIRES_NEW)",
    );
  }
  return undefined;
}

// A call that begins a transaction of its own: it ends as the call's outcome and the marks ask.
async function begun<T>(
  pool: DataPool,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
): Promise<T> {
  const transaction = await Transaction.begin(pool, options, where);
  const status = new CallStatus(
    pool.name,
    where,
    "new",
    transaction,
    transaction.readOnly,
    "DEFAULT",
  );
  try {
    return await runBegun(transaction, status, options, fn);
  } catch (error) {
    transaction.failedWith(error);
    throw error;
  } finally {
    status.completed = true;
    await transaction.giveBack();
  }
}

async function runBegun<T>(
  transaction: Transaction,
  status: CallStatus,
  options: TransactionOptions,
  fn: TransactionWork<T>,
): Promise<T> {
  // Whether it must roll back whatever the call asks: asked once the statements sent before the
  // end settled. From then on the outcome is settled, and a mark set later (by work the call did
  // not await) is refused rather than lost, and changes neither what the caller is told nor the
  // listeners' phase.
  const decide = () => {
    status.completed = true;
    return transaction.rollbackOnly || status.local;
  };
  let result: T;
  try {
    result = await runBound(transaction.pool, transaction, status, async () => {
      const value = await fn(status);
      // Inside the transaction still: what they write commits with it, and a failure rolls it
      // back. Not where a call inside marked it, or this call did.
      if (!transaction.rollbackOnly && !status.local) {
        await transaction.runPhases(["BEFORE_COMMIT"]);
      }
      return value;
    });
  } catch (error) {
    transaction.failedWith(error);
    const how = rollsBack(options, error) ? "ROLLBACK" : "COMMIT";
    // A failed COMMIT or ROLLBACK leaves the outcome unknown (the connection is closed).
    const ended = await transaction.end(how, decide).catch(() => false as const);
    throw await afterEnd(transaction, ended, error);
  }
  return await endReturned(transaction, status, result, decide);
}

// Ends the transaction whose call returned `result`: committed, unless a mark dooms it.
async function endReturned<T>(
  transaction: Transaction,
  status: CallStatus,
  result: T,
  decide: () => boolean,
): Promise<T> {
  // Its own setRollbackOnly(): rolled back, and the call's value comes back, whatever a call
  // inside marked (Spring's processCommit looks at the local mark first).
  if (status.local) {
    await transaction.end("ROLLBACK", decide);
    return await heard(transaction, "ROLLBACK", result);
  }
  // A statement in flight as the timeout passed ran on: the transaction is over its time.
  transaction.markIfTimedOut();
  if (transaction.rollbackOnly) {
    await transaction.end("ROLLBACK", decide);
    throw await afterEnd(transaction, "ROLLBACK", rolledBackError(transaction));
  }
  // A COMMIT the database refused (a deferred constraint): the caller gets its error, once the
  // listeners of AFTER_COMPLETION heard of it.
  const how = await transaction.end("COMMIT", decide).catch(async (error: unknown) => {
    throw await afterEnd(transaction, rolledBack(error) && "ROLLBACK", error);
  });
  // A statement still on its way as the call returned doomed it (a deadlock), or marked it
  // (its own setRollbackOnly(): silent, as above): rolled back.
  if (how === "ROLLBACK" && status.local) return await heard(transaction, "ROLLBACK", result);
  if (how === "ROLLBACK") {
    throw await afterEnd(transaction, "ROLLBACK", rolledBackError(transaction));
  }
  return await heard(transaction, "COMMIT", result);
}

// The caller's error when the transaction rolled back where the call asked for a commit
// (Spring's UnexpectedRollbackException), naming what doomed it where known.
function rolledBackError(transaction: Transaction): UnexpectedRollbackError {
  const { pool, aborted, name } = transaction;
  return aborted?.final ? abortedCommitError(pool, aborted, name) : new UnexpectedRollbackError({
    datasource: pool.name,
    message: `${name} rolled back: ${
      transaction.doom ??
        "a call inside it failed, which marked it for rollback, or it ran past its timeout"
    }; nothing of it is committed`,
  });
}

// `result`, once the listeners of the end `how` heard of it; what they threw, if they did.
async function heard<T>(
  transaction: Transaction,
  how: "COMMIT" | "ROLLBACK",
  result: T,
): Promise<T> {
  const failure = await afterEnd(transaction, how, undefined);
  if (failure !== undefined) throw failure;
  return result;
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
    await transaction.runPhases(phases);
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

// A savepoint in the transaction: rolled back alone when the call fails, the outer transaction
// going on. A savepoint that cannot be rolled back to dooms the whole transaction instead.
async function nested<T>(
  transaction: Transaction,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
): Promise<T> {
  // Two NESTED calls side by side (Promise.all) take turns (Transaction.enterSavepoint).
  const savepoint = await transaction.enterSavepoint(enclosingSavepoint(transaction));
  try {
    return await inSavepoint(savepoint, options, fn, where);
  } finally {
    transaction.leaveSavepoint(savepoint);
  }
}

async function inSavepoint<T>(
  savepoint: Savepoint,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
): Promise<T> {
  const { transaction, name } = savepoint;
  // Bounded by the transaction's timeout, as its statements are.
  await transaction.connection.control(`SAVEPOINT ${name}`, transaction.deadline);
  // A joined call inside that fails marks the whole transaction; rolled back to the savepoint,
  // its work is gone, and so is the mark (as Spring's rollbackToSavepoint clears it).
  const mark = transaction.mark();
  const status = new CallStatus(
    transaction.pool.name,
    where,
    "nested",
    transaction,
    false,
    "DEFAULT",
  );
  let result: T;
  try {
    result = await runInSavepoint(savepoint, status, () => fn(status));
  } catch (error) {
    await undoSavepoint(savepoint, mark, rollsBack(options, error) || status.local);
    throw error;
  } finally {
    status.completed = true;
  }
  if (status.local) {
    const failure = await undoSavepoint(savepoint, mark, true);
    if (failure !== undefined) throw failure;
    return result;
  }
  await releaseSavepoint(savepoint, mark, where);
  return result;
}

// Rolled back to the savepoint (`undo`: this call's failure, or its setRollbackOnly(): Spring's
// rollbackToHeldSavepoint), then released. One that cannot be rolled back to dooms the
// transaction: resolves to that failure.
async function undoSavepoint(
  { transaction, name }: Savepoint,
  mark: RollbackMark,
  undo: boolean,
): Promise<unknown> {
  const { connection, deadline } = transaction;
  try {
    if (undo) await connection.control(`ROLLBACK TO SAVEPOINT ${name}`, deadline);
    await connection.control(`RELEASE SAVEPOINT ${name}`, deadline);
    if (undo) transaction.restoreMark(mark);
  } catch (error) {
    transaction.markRollbackOnly();
    return error;
  }
  return undefined;
}

// The NESTED call returned: its savepoint released. A call joined inside it marked the
// transaction (Spring's processCommit of a savepoint's status): rolled back to the savepoint,
// which clears the mark, and this call fails with UnexpectedRollbackError. Not where the database
// rolled the whole transaction back, nor past the timeout: no savepoint can take those back.
async function releaseSavepoint(
  savepoint: Savepoint,
  mark: RollbackMark,
  where: string,
): Promise<void> {
  const { transaction, name } = savepoint;
  const doom = transaction.doom;
  if (
    transaction.rollbackOnly && !mark.rollbackOnly && transaction.aborted?.final !== true &&
    doom !== undefined && doom !== TIMED_OUT
  ) {
    const failure = await undoSavepoint(savepoint, mark, true);
    if (failure !== undefined) throw failure;
    throw new UnexpectedRollbackError({
      datasource: transaction.pool.name,
      message: `${where} rolled back to its savepoint: ${doom}`,
    });
  }
  await transaction.connection.control(`RELEASE SAVEPOINT ${name}`, transaction.deadline);
}
