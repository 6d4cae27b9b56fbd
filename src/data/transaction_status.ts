// The status of one transactional call (Spring's TransactionStatus): what the call may ask of the
// transaction it runs in, and its own rollback-only mark. Given to sql.transaction's callback and
// returned by currentTransactionStatus() inside a @Transactional method.
import type { Isolation } from "./transaction_options.ts";
import { currentStatus } from "./transaction_scope.ts";
import type { Transaction } from "./transaction.ts";

/**
 * The status of the transactional call it is given to (Spring's `TransactionStatus`): whether it
 * began the transaction or joined it, and a way to roll the transaction back without an error.
 *
 * `setRollbackOnly()` in the call that began the transaction rolls it back at the call's end
 * instead of committing, and the call still resolves to its value (Spring's silent rollback). In
 * a call that joined it, the mark is the whole transaction's: the call that began it is then
 * refused its commit with an {@linkcode UnexpectedRollbackError}. In a `NESTED` call, only its
 * savepoint is rolled back (and a mark set by a call joined inside it rolls back the savepoint,
 * the `NESTED` call then failing with an `UnexpectedRollbackError`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { data, SqlClient } from "@thaw/thaw/data";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 * });
 * const sql = app.getBean(SqlClient);
 * await sql.execute`CREATE TABLE notes (body TEXT)`;
 * const preview = await sql.transaction(async (status) => {
 *   await sql.execute`INSERT INTO notes (body) VALUES (${"draft"})`;
 *   const count = await sql.one<{ n: number }>`SELECT COUNT(*) AS n FROM notes`;
 *   status.setRollbackOnly(); // a dry run: nothing is kept
 *   return count.n;
 * });
 * assert.equal(preview, 1);
 * assert.equal((await sql.one<{ n: number }>`SELECT COUNT(*) AS n FROM notes`).n, 0);
 * await app.close();
 * ```
 */
export interface TransactionStatus {
  /** The datasource's name in the configuration. */
  readonly datasource: string;
  /** The call: `Billing.charge()` for a `@Transactional` method, `transaction()` for `sql.transaction`. */
  readonly name: string;
  /** Whether the transaction it runs in is read-only (as its beginner made it). */
  readonly readOnly: boolean;
  /** The isolation level the transaction it runs in was begun at (`DEFAULT`: the database's). */
  readonly isolation: Isolation;
  /** Whether it runs in a transaction (not so with `SUPPORTS` outside one, `NOT_SUPPORTED`, `NEVER`). */
  hasTransaction(): boolean;
  /** Whether this call began the transaction (not so where it joined one, or is `NESTED` in one). */
  isNewTransaction(): boolean;
  /** Whether this call runs in a savepoint of its own (`NESTED` inside a transaction). */
  isNested(): boolean;
  /**
   * Marks the transaction to be rolled back at this call's end instead of committed (see
   * {@linkcode TransactionStatus}). Throws once the call has ended, or its commit or rollback is
   * under way (work it did not await comes too late to change the outcome).
   */
  setRollbackOnly(): void;
  /** Whether this call marked it, or (Spring's global rollback-only) a call inside it did. */
  isRollbackOnly(): boolean;
  /** Whether the call has ended (its transaction committed or rolled back, or it was left). */
  isCompleted(): boolean;
}

/** How a call relates to its transaction. */
export type CallKind = "new" | "joined" | "nested" | "none";

/** A transactional call's status, as the transactions keep it. */
export class CallStatus implements TransactionStatus {
  readonly datasource: string;
  readonly name: string;
  readonly readOnly: boolean;
  readonly isolation: Isolation;
  readonly #transaction: Transaction | undefined;
  readonly #kind: CallKind;
  /** Set by setRollbackOnly(): this call's own mark (Spring's local rollback-only). */
  local = false;
  /** The call has ended: its mark can no longer change anything. */
  completed = false;

  constructor(
    datasource: string,
    name: string,
    kind: CallKind,
    transaction: Transaction | undefined,
    readOnly: boolean,
    isolation: Isolation,
  ) {
    this.datasource = datasource;
    this.name = name;
    this.#kind = kind;
    this.#transaction = transaction;
    this.readOnly = transaction?.readOnly ?? readOnly;
    this.isolation = transaction?.isolation ?? isolation;
  }

  hasTransaction(): boolean {
    return this.#transaction !== undefined;
  }

  isNewTransaction(): boolean {
    return this.#kind === "new";
  }

  isNested(): boolean {
    return this.#kind === "nested";
  }

  setRollbackOnly(): void {
    if (this.completed) {
      throw new Error(
        `datasource "${this.datasource}": setRollbackOnly() on the status of ${this.name}, ` +
          "which has ended: its transaction's outcome is settled",
      );
    }
    this.local = true;
  }

  isRollbackOnly(): boolean {
    return this.local || (this.#transaction?.rollbackOnly ?? false);
  }

  isCompleted(): boolean {
    return this.completed;
  }
}

/**
 * The status of the innermost transactional call the caller runs in (a `@Transactional` method,
 * `sql.transaction`'s callback): Spring's `TransactionAspectSupport.currentTransactionStatus()`.
 * Throws outside any, and in work that outlived the call that began it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { currentTransactionStatus, data, SqlClient } from "@thaw/thaw/data";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 * });
 * const sql = app.getBean(SqlClient);
 * // As inside a @Transactional method: the innermost transactional call's status.
 * const began = await sql.transaction(() => currentTransactionStatus().isNewTransaction());
 * assert.equal(began, true);
 * assert.throws(() => currentTransactionStatus(), /outside any transactional call/);
 * await app.close();
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/data.md#the-transactions-status
 */
export function currentTransactionStatus(): TransactionStatus {
  // Every status a scope holds is a CallStatus: the transactions make no other.
  const status = currentStatus() as CallStatus | undefined;
  if (status === undefined) {
    throw new Error(
      "currentTransactionStatus() is called outside any transactional call: call it inside a " +
        "@Transactional method or sql.transaction's callback, and not from work left running " +
        "once that call returned",
    );
  }
  return status;
}
