// Runs a call in a transaction of a pool, as its options ask (Spring's propagation, read-only,
// isolation, timeout and rollback rules, and its TransactionStatus), with each database's own
// statements (its SqlDialect). A transaction holds one connection from its beginning to
// its end: concurrent transactions never share one.
import type { DataPool } from "../sql/data_pool.ts";
import { DataError } from "../sql/data_error.ts";
import { rollsBack, type TransactionOptions } from "./transaction_options.ts";
import {
  abortedCommitError,
  type TransactionConnection,
  transactionConnection,
} from "./transaction_connection.ts";
import { DIALECTS } from "../sql/dialects.ts";
import { CallStatus } from "./transaction_status.ts";
import { UnexpectedRollbackError } from "./unexpected_rollback_error.ts";
import {
  currentTransaction,
  enclosingSavepoint,
  leftByFailedCall,
  runBound,
  runInSavepoint,
  runJoined,
  runOutside,
  type Savepoint,
  TIMED_OUT,
  type Transaction,
  type TransactionPhase,
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
      transaction.rollbackOnly = true;
      transaction.doom ??= `a call inside it failed (${where}, joined to it), which marked it ` +
        "for rollback";
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
  transaction.rollbackOnly = true;
  transaction.doom ??= `a call inside it (${where}, joined to it) marked it rollback-only ` +
    "(setRollbackOnly())";
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

async function begun<T>(
  pool: DataPool,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
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
      for (const text of DIALECTS[pool.kind].reset(readOnly)) {
        await control(text).catch(() => broken = true);
      }
    }
    connection.release(broken);
  };
  // Counted from now: the timeout bounds the wait for BEGIN's answer too, as its statements'.
  const deadline = options.timeout === undefined
    ? undefined
    : performance.now() + options.timeout * 1000;
  try {
    for (const text of DIALECTS[pool.kind].begin(readOnly, options.isolation)) {
      await control(text, deadline);
    }
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
  const transaction = newTransaction(pool, watched, deadline, options, where);
  const status = new CallStatus(pool.name, where, "new", transaction, readOnly, "DEFAULT");
  // Whether it must roll back whatever the call asks: a call inside marked it, or this call did.
  const doomed = () => transaction.rollbackOnly || status.local;
  // The end's statement, chosen once the statements sent before it settled: from then on the
  // outcome is settled, and a mark set later (by work the call did not await) is refused rather
  // than lost, and changes neither what the caller is told nor the listeners' phase.
  let chosenRollback = false;
  const decide = () => {
    chosenRollback = doomed();
    status.completed = true;
    return chosenRollback;
  };
  try {
    let result: T;
    try {
      result = await runBound(pool, transaction, status, async () => {
        const value = await fn(status);
        // Inside the transaction still: what they write commits with it, and a failure rolls
        // it back.
        if (!doomed()) await phase(transaction, ["BEFORE_COMMIT"]);
        return value;
      });
    } catch (error) {
      broken ||= lostHere(pool, error);
      const how = rollsBack(options, error) ? "ROLLBACK" : "COMMIT";
      // A failed COMMIT or ROLLBACK leaves the outcome unknown (the connection is closed).
      const ended = await end(transaction, how, decide, finish, giveBack)
        .then(() => true, () => false);
      throw await afterEnd(transaction, ended && (chosenRollback ? "ROLLBACK" : how), error);
    }
    // Its own setRollbackOnly(): rolled back, and the call's value comes back, whatever a call
    // inside marked (Spring's processCommit looks at the local mark first).
    if (status.local) {
      await end(transaction, "ROLLBACK", decide, finish, giveBack);
      return await heard(transaction, "ROLLBACK", result);
    }
    // A statement in flight as the timeout passed ran on: the transaction is over its time.
    if (transaction.deadline !== undefined && performance.now() > transaction.deadline) {
      transaction.rollbackOnly = true;
      transaction.doom ??= TIMED_OUT;
    }
    if (transaction.rollbackOnly) {
      await end(transaction, "ROLLBACK", decide, finish, giveBack);
      throw await afterEnd(transaction, "ROLLBACK", rolledBackError(transaction));
    }
    // A COMMIT the database refused (a deferred constraint): the caller gets its error, once the
    // listeners of AFTER_COMPLETION heard of it.
    await end(transaction, "COMMIT", decide, finish, giveBack).catch(async (error: unknown) => {
      throw await afterEnd(transaction, rolledBack(error) && "ROLLBACK", error);
    });
    // A statement still on its way as the call returned doomed it (a deadlock), or marked it
    // (its own setRollbackOnly(): silent, as above): rolled back.
    if (chosenRollback && status.local) return await heard(transaction, "ROLLBACK", result);
    if (chosenRollback) throw await afterEnd(transaction, "ROLLBACK", rolledBackError(transaction));
    return await heard(transaction, "COMMIT", result);
  } catch (error) {
    broken ||= lostHere(pool, error);
    throw error;
  } finally {
    status.completed = true;
    await giveBack();
  }
}

// A transaction just begun on `connection`, by the call `where`.
function newTransaction(
  pool: DataPool,
  connection: TransactionConnection,
  deadline: number | undefined,
  options: TransactionOptions,
  where: string,
): Transaction {
  return {
    pool,
    name: where,
    readOnly: options.readOnly === true,
    isolation: options.isolation ?? "DEFAULT",
    doom: undefined,
    connection,
    deadline,
    savepoints: 0,
    rollbackOnly: false,
    ended: false,
    aborted: undefined,
    synchronizations: [],
    activeSavepoint: undefined,
  };
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

// A COMMIT the database turned into a rollback (PostgreSQL's, after a failed statement, or at a
// serialization failure).
function rolledBack(error: unknown): boolean {
  return error instanceof DataError &&
    (error.reason === "transaction" || error.reason === "conflict");
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
  doomed: () => boolean,
  finish: (how: () => "COMMIT" | "ROLLBACK") => Promise<void>,
  giveBack: () => Promise<void>,
): Promise<void> {
  transaction.ended = true;
  try {
    // A doomed transaction is never committed, whatever the call's own outcome.
    await finish(() => doomed() ? "ROLLBACK" : how);
  } finally {
    await giveBack();
  }
}

// A savepoint in the transaction: rolled back alone when the call fails, the outer transaction
// going on. A savepoint that cannot be rolled back to dooms the whole transaction instead.
async function nested<T>(
  transaction: Transaction,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
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
    return await inSavepoint(transaction, savepoint, options, fn, where);
  } finally {
    transaction.activeSavepoint = enclosing;
    finish();
  }
}

async function inSavepoint<T>(
  transaction: Transaction,
  savepoint: Savepoint,
  options: TransactionOptions,
  fn: TransactionWork<T>,
  where: string,
): Promise<T> {
  const name = `thaw_savepoint_${++transaction.savepoints}`;
  const { connection, deadline } = transaction;
  // Bounded by the transaction's timeout, as its statements are.
  await connection.control(`SAVEPOINT ${name}`, deadline);
  // A joined call inside that fails marks the whole transaction; rolled back to the savepoint,
  // its work is gone, and so is the mark (as Spring's rollbackToSavepoint clears it).
  const marked = transaction.rollbackOnly;
  const markedBy = transaction.doom;
  const status = new CallStatus(
    transaction.pool.name,
    where,
    "nested",
    transaction,
    false,
    "DEFAULT",
  );
  // Rolled back to the savepoint: this call's failure, or its setRollbackOnly() (Spring's
  // rollbackToHeldSavepoint); a savepoint that cannot be rolled back to dooms the transaction.
  const undoSavepoint = async (undo: boolean) => {
    try {
      if (undo) await connection.control(`ROLLBACK TO SAVEPOINT ${name}`, deadline);
      await connection.control(`RELEASE SAVEPOINT ${name}`, deadline);
      if (undo) {
        transaction.rollbackOnly = marked;
        transaction.doom = markedBy;
      }
    } catch (error) {
      transaction.rollbackOnly = true;
      return error;
    }
    return undefined;
  };
  let result: T;
  try {
    result = await runInSavepoint(savepoint, status, () => fn(status));
  } catch (error) {
    await undoSavepoint(rollsBack(options, error) || status.local);
    throw error;
  } finally {
    status.completed = true;
  }
  if (status.local) {
    const failure = await undoSavepoint(true);
    if (failure !== undefined) throw failure;
    return result;
  }
  // A call joined inside it marked the transaction (Spring's processCommit of a savepoint's
  // status): rolled back to the savepoint, which clears the mark, and this call fails with
  // UnexpectedRollbackError. Not where the database rolled the whole transaction back, nor past
  // the timeout: no savepoint can take those back.
  const doom = transaction.doom;
  if (
    transaction.rollbackOnly && !marked && transaction.aborted?.final !== true &&
    doom !== undefined && doom !== TIMED_OUT
  ) {
    const failure = await undoSavepoint(true);
    if (failure !== undefined) throw failure;
    throw new UnexpectedRollbackError({
      datasource: transaction.pool.name,
      message: `${where} rolled back to its savepoint: ${doom}`,
    });
  }
  await connection.control(`RELEASE SAVEPOINT ${name}`, deadline);
  return result;
}
