// Where a transaction is bound to the async call that runs it: every SqlClient call of its
// datasource made inside it, in any bean, runs on its connection, and nothing outside it does.
// AsyncLocalStorage, which Deno, Bun, Node and workerd all have, carries it across awaits.
import { AsyncLocalStorage } from "node:async_hooks";
import type { DataConnection, DataPool } from "./data_pool.ts";
import { DataError } from "./data_error.ts";

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
}

/**
 * The transaction of each pool the current call runs in; `null`: suspended (NOT_SUPPORTED), so
 * that its calls run outside any.
 */
type Scope = ReadonlyMap<DataPool, Transaction | null>;

const scopes = new AsyncLocalStorage<Scope>();

/** The transaction of `pool` the current call runs in: `undefined` outside one, or suspended. */
export function currentTransaction(pool: DataPool): Transaction | undefined {
  return scopes.getStore()?.get(pool) ?? undefined;
}

/** Runs `fn` with `pool` bound to `transaction` (`null`: to none, the caller's suspended). */
export function runBound<T>(
  pool: DataPool,
  transaction: Transaction | null,
  fn: () => Promise<T>,
): Promise<T> {
  const scope = new Map(scopes.getStore());
  scope.set(pool, transaction);
  return scopes.run(scope, fn);
}

/**
 * The connection of the transaction of `pool` the current call runs in, if any. A statement
 * after the transaction ended, or past its timeout, fails (and, for the timeout, dooms it).
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
