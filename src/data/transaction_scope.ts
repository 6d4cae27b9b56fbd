// Where a transaction is bound to the async call that runs it: every SqlClient call of its
// datasource made inside it, in any bean, runs on its connection, and nothing outside it does.
// AsyncLocalStorage, which Deno, Bun, Node and workerd all have, carries it across awaits.
import { AsyncLocalStorage } from "node:async_hooks";
import type { DataConnection, DataPool } from "./data_pool.ts";
import { DataError } from "./data_error.ts";
import type { Aborted } from "./transaction_connection.ts";

/**
 * When a transactional event listener runs (Spring's `TransactionPhase`): just before the
 * transaction commits (inside it; a failure rolls it back), after it committed, after it rolled
 * back, or after either.
 */
export type TransactionPhase =
  | "BEFORE_COMMIT"
  | "AFTER_COMMIT"
  | "AFTER_ROLLBACK"
  | "AFTER_COMPLETION";

/** Work a transaction runs at one of its phases, in the order it was registered. */
export interface Synchronization {
  readonly phase: TransactionPhase;
  readonly run: () => Promise<void>;
}

/** A NESTED call's savepoint while it runs: its siblings wait for `done`. */
export interface Savepoint {
  readonly transaction: Transaction;
  /** The savepoint of the NESTED call it runs in, if any. */
  readonly parent: Savepoint | undefined;
  readonly done: Promise<void>;
}

/** One transaction of one pool, as the calls inside it share it. */
export interface Transaction {
  readonly pool: DataPool;
  readonly connection: DataConnection;
  /** When it must have ended (`performance.now()`), if it has a timeout. */
  readonly deadline: number | undefined;
  /** Savepoints made so far: each NESTED call's has a name of its own. */
  savepoints: number;
  /** A call inside it failed and asked for a rollback: the outer call cannot commit it. */
  rollbackOnly: boolean;
  /** Committed or rolled back: a statement now is one that outlived it. */
  ended: boolean;
  /** The failure at which the database ended it (a deadlock): a statement now is refused. */
  aborted: Aborted | undefined;
  /** What runs at its phases (the transactional event listeners of events published in it). */
  readonly synchronizations: Synchronization[];
  /** The innermost savepoint in use: one NESTED call at a time per level, on one connection. */
  activeSavepoint: Savepoint | undefined;
}

/** Where the current call runs: each pool's transaction, and the one begun last. */
interface Scope {
  /** `null`: suspended (NOT_SUPPORTED), so that the pool's calls run outside any. */
  readonly pools: ReadonlyMap<DataPool, Transaction | null>;
  /** The transaction an event published now belongs to (Spring's synchronization). */
  readonly innermost: Transaction | undefined;
  /** The savepoint of the NESTED call the current call runs in. */
  readonly savepoint?: Savepoint | undefined;
}

const scopes = new AsyncLocalStorage<Scope>();

/** The transaction of `pool` the current call runs in: `undefined` outside one, or suspended. */
export function currentTransaction(pool: DataPool): Transaction | undefined {
  return scopes.getStore()?.pools.get(pool) ?? undefined;
}

/** The transaction begun last around the current call, of whichever pool: `undefined` if none. */
export function innermostTransaction(): Transaction | undefined {
  const innermost = scopes.getStore()?.innermost;
  return innermost?.ended ? undefined : innermost;
}

/** The savepoint of `transaction` the current call runs in, if any. */
export function enclosingSavepoint(transaction: Transaction): Savepoint | undefined {
  let savepoint = scopes.getStore()?.savepoint;
  while (savepoint !== undefined && savepoint.transaction !== transaction) {
    savepoint = savepoint.parent;
  }
  return savepoint;
}

/** Runs `fn` inside `savepoint`. */
export function runInSavepoint<T>(savepoint: Savepoint, fn: () => Promise<T>): Promise<T> {
  const outer = scopes.getStore();
  return scopes.run(
    { pools: outer?.pools ?? new Map(), innermost: outer?.innermost, savepoint },
    fn,
  );
}

/** Runs `fn` with `pool` bound to `transaction` (`null`: to none, the caller's suspended). */
export function runBound<T>(
  pool: DataPool,
  transaction: Transaction | null,
  fn: () => Promise<T>,
): Promise<T> {
  const outer = scopes.getStore();
  const pools = new Map(outer?.pools);
  pools.set(pool, transaction);
  // While a transaction is suspended, an event published belongs to none (as in Spring).
  return scopes.run({ pools, innermost: transaction ?? undefined }, fn);
}

/**
 * The connection of the transaction of `pool` the current call runs in, if any. A statement
 * after the transaction ended, or past its timeout, fails (and, for the timeout, dooms it); one
 * after the database aborted it is refused by the connection itself (transaction_connection.ts).
 */
export function currentConnection(pool: DataPool): DataConnection | undefined {
  const transaction = currentTransaction(pool);
  if (transaction === undefined) return undefined;
  const fail = (message: string) =>
    new DataError({ datasource: pool.name, reason: "transaction", message });
  if (transaction.ended) {
    throw fail(
      "a statement came after its transaction ended (a promise the transactional call did not " +
        "await?): it is not run",
    );
  }
  if (transaction.deadline !== undefined && performance.now() > transaction.deadline) {
    transaction.rollbackOnly = true;
    throw fail("the transaction ran past its timeout: it is rolled back");
  }
  return transaction.connection;
}
