// The error of a commit that became a rollback (Spring's UnexpectedRollbackException).
import { DataError } from "../sql/data_error.ts";

/**
 * A transaction whose call asked for a commit was rolled back instead (Spring's
 * `UnexpectedRollbackException`): a call joined to it failed, or set it rollback-only through its
 * {@linkcode TransactionStatus}, and the call that began it went on; or it ran past its timeout;
 * or the database itself rolled it back at a failure the call caught (an InnoDB deadlock). Nothing
 * of it is committed. Its message names the call whose commit was refused and, where known, the
 * call that doomed it. A `DataError` of `reason: "transaction"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { data, SqlClient, UnexpectedRollbackError } from "@thaw/thaw/data";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 * });
 * const sql = app.getBean(SqlClient);
 * const outcome = await sql.transaction(async () => {
 *   // A joined call failed, and the error was caught: the transaction cannot commit.
 *   await sql.transaction(() => Promise.reject(new Error("card declined"))).catch(() => {});
 * }).catch((error: unknown) => error);
 * assert.ok(outcome instanceof UnexpectedRollbackError);
 * assert.equal(outcome.reason, "transaction");
 * assert.match(outcome.message, /transaction\(\) rolled back: a call inside it failed/);
 * await app.close();
 * ```
 */
export class UnexpectedRollbackError extends DataError {
  /** Creates the error: `message` says what rolled it back, after the datasource's name. */
  constructor(
    details: { datasource: string; message: string; code?: string },
    options?: ErrorOptions,
  ) {
    super({ ...details, reason: "transaction" }, options);
    this.name = "UnexpectedRollbackError";
  }
}
