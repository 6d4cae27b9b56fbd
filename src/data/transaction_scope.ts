// Where a transaction is bound to the async call that runs it: every SqlClient call of its
// datasource made inside it, in any bean, runs on its connection, and nothing outside it does.
// AsyncLocalStorage, which Deno, Bun, Node and workerd all have, carries it across awaits.
import { AsyncLocalStorage } from "node:async_hooks";
import type { DataConnection, DataPool } from "../sql/data_pool.ts";
import { DataError } from "../sql/data_error.ts";
import { endedError } from "./transaction_connection.ts";
import { registerDetach } from "../events/detached_run.ts";
import type { Savepoint, Transaction } from "./transaction.ts";

/**
 * A transactional call (begun, joined or NESTED) while it runs. The work it begins carries it
 * on (a timer, an interval, a promise it does not await): once the call has returned, that work
 * is no part of its transaction any more, and runs outside any, as on another thread in Spring.
 * Once it failed, that work is the rest of what failed (Promise.all's other branches go on after
 * one rejected): run outside, it would commit part of what rolled back, so it runs nothing.
 */
interface Call {
  returned: boolean;
  failed: boolean;
}

/** Where the current call runs: each pool's transaction, and the one begun last. */
interface Scope {
  /** `null`: suspended (NOT_SUPPORTED), so that the pool's calls run outside any. */
  readonly pools: ReadonlyMap<DataPool, Transaction | null>;
  /** The transaction an event published now belongs to (Spring's synchronization). */
  readonly innermost: Transaction | undefined;
  /** The savepoint of the NESTED call the current call runs in. */
  readonly savepoint?: Savepoint | undefined;
  /** The innermost transactional call the current call runs in. */
  readonly call?: Call | undefined;
  /** The status of the innermost transactional call (of any pool), even one run outside any. */
  readonly status?: ScopedStatus | undefined;
}

/**
 * What the scope keeps of a transactional call's status: transaction_status.ts has the rest, and
 * is the only maker of one (it imports this file, which does not import it back).
 */
export interface ScopedStatus {
  /** The call has ended. */
  readonly completed: boolean;
}

const scopes = new AsyncLocalStorage<Scope>();

// Work detached from its call (an async event listener) runs in no transaction of it.
const DETACHED: Scope = { pools: new Map(), innermost: undefined };
registerDetach((fn) => scopes.run(DETACHED, fn));

// Runs `fn` in `scope` as a transactional call of its own, marked returned once it settles.
function runCall<T>(
  scope: Omit<Scope, "call" | "status">,
  status: ScopedStatus,
  fn: () => Promise<T>,
): Promise<T> {
  const call: Call = { returned: false, failed: false };
  return scopes.run({ ...scope, status, call }, async () => {
    try {
      const result = await fn();
      call.returned = true;
      return result;
    } catch (error) {
      call.failed = true;
      throw error;
    }
  });
}

/**
 * The transaction of `pool` the current call runs in: `undefined` outside one, or suspended.
 * `live`: only while it has not ended and the transactional call that began the current work
 * has not returned (else the work outlived it).
 */
export function currentTransaction(pool: DataPool, live = false): Transaction | undefined {
  const scope = scopes.getStore();
  const transaction = scope?.pools.get(pool) ?? undefined;
  if (live && (transaction?.ended || scope?.call?.returned)) return undefined;
  return transaction;
}

/**
 * The error for a transactional call or a statement of `pool` made by work a transactional call
 * left running when it failed, if the current work is such: `undefined` otherwise.
 */
export function leftByFailedCall(pool: DataPool): DataError | undefined {
  const scope = scopes.getStore();
  if (!scope?.call?.failed || !scope.pools.get(pool)) return undefined;
  return new DataError({
    datasource: pool.name,
    reason: "transaction",
    message: "not run: it comes from work that a transactional call that failed left running " +
      "(Promise.all's other branches go on after one failed): it is part of what was rolled " +
      "back (await every branch, e.g. with Promise.allSettled, before failing)",
  });
}

/** The transaction begun last around the current call, of whichever pool: `undefined` if none. */
export function innermostTransaction(): Transaction | undefined {
  const scope = scopes.getStore();
  const innermost = scope?.innermost;
  return innermost?.ended || scope?.call?.returned ? undefined : innermost;
}

/** Runs `fn`, a call that joins the transaction it runs in, as a transactional call. */
export function runJoined<T>(status: ScopedStatus, fn: () => Promise<T>): Promise<T> {
  const outer = scopes.getStore();
  return runCall(outer ?? { pools: new Map(), innermost: undefined }, status, fn);
}

/** Runs `fn`, a transactional call in no transaction of its pool, with its `status`. */
export function runOutside<T>(status: ScopedStatus, fn: () => Promise<T>): Promise<T> {
  const outer = scopes.getStore();
  return scopes.run({ ...(outer ?? { pools: new Map(), innermost: undefined }), status }, fn);
}

/**
 * The status of the innermost transactional call the caller runs in: `undefined` outside any,
 * and in work that outlived it.
 */
export function currentStatus(): ScopedStatus | undefined {
  const scope = scopes.getStore();
  const status = scope?.status;
  return status === undefined || status.completed || scope?.call?.returned ? undefined : status;
}

/** The savepoint of `transaction` the current call runs in, if any. */
export function enclosingSavepoint(transaction: Transaction): Savepoint | undefined {
  let savepoint = scopes.getStore()?.savepoint;
  while (savepoint !== undefined && savepoint.transaction !== transaction) {
    savepoint = savepoint.parent;
  }
  return savepoint;
}

/** Runs `fn` inside `savepoint`, as a transactional call. */
export function runInSavepoint<T>(
  savepoint: Savepoint,
  status: ScopedStatus,
  fn: () => Promise<T>,
): Promise<T> {
  const outer = scopes.getStore();
  return runCall(
    { pools: outer?.pools ?? new Map(), innermost: outer?.innermost, savepoint },
    status,
    fn,
  );
}

/**
 * Runs `fn` with `pool` bound to `transaction`, as the call that began it (`null`: to none, the
 * caller's suspended).
 */
export function runBound<T>(
  pool: DataPool,
  transaction: Transaction | null,
  status: ScopedStatus,
  fn: () => Promise<T>,
): Promise<T> {
  const outer = scopes.getStore();
  const pools = new Map(outer?.pools);
  pools.set(pool, transaction);
  // While a transaction is suspended, an event published belongs to none (as in Spring).
  if (transaction !== null) return runCall({ pools, innermost: transaction }, status, fn);
  return scopes.run({ pools, innermost: undefined, call: outer?.call, status }, fn);
}

/**
 * The connection of the transaction of `pool` the current call runs in, if any. A statement of
 * a transactional call still running after its transaction ended (one the transaction's code did
 * not await), or past the timeout, fails (and, for the timeout, dooms it); one after the database
 * aborted it is refused by the connection itself (transaction_connection.ts).
 */
export function currentConnection(pool: DataPool): DataConnection | undefined {
  const scope = scopes.getStore();
  const transaction = scope?.pools.get(pool) ?? undefined;
  // Work that outlived the transactional call that began it (a timer, an interval, a promise
  // left running): outside any transaction, as on another thread in Spring.
  if (transaction === undefined) return undefined;
  const failedCall = leftByFailedCall(pool);
  if (failedCall !== undefined) throw failedCall;
  if (scope?.call?.returned) return undefined;
  if (transaction.ended) throw endedError(pool);
  if (transaction.markIfTimedOut()) {
    throw new DataError({
      datasource: pool.name,
      reason: "transaction",
      message: "the transaction ran past its timeout: it is rolled back",
    });
  }
  return transaction.connection;
}
