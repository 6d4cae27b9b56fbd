// A statement's query timeout: the one its call asked (withTimeout), else the pool's; inside a
// transaction's time, what is left of that where it is shorter (Spring's rule: a statement's
// timeout is the lesser of the two), so that the database stops the statement at the
// transaction's end too, its connection kept, rather than the client cutting the connection.
// What is left goes up to a whole second, as Spring gives it to JDBC (setQueryTimeout takes
// seconds): the limit changes once a second, not at each statement, so a loop's statements share
// MariaDB's text (SET STATEMENT ... FOR, prepared once per text) and PostgreSQL's SET LOCAL.
import { DataError } from "./data_error.ts";

/** Where a statement's query timeout came from, as its error names it. */
export const TRANSACTION_TIMEOUT = "the transaction's timeout";

/** How long the database lets a statement run, and what set that. */
export interface QueryTimeout {
  /** Whole milliseconds, at least 1. */
  readonly ms: number;
  readonly by: "withTimeout" | "pool.query-timeout" | typeof TRANSACTION_TIMEOUT;
}

/** The step what is left of a transaction's time goes up to, as a statement's limit. */
export const TRANSACTION_STEP_MS = 1_000;

/**
 * The query timeout of a statement: `call`'s (withTimeout) or `pool`'s, the lesser of it and
 * what is left before `deadline` (`performance.now()`'s clock, up to a whole
 * {@linkcode TRANSACTION_STEP_MS}) where it has one; none where neither is set (the
 * transaction's timeout alone is the client's bound, as it was).
 */
export function queryTimeout(
  call: number | undefined,
  pool: number | undefined,
  deadline: number | undefined,
): QueryTimeout | undefined {
  const asked: QueryTimeout | undefined = call !== undefined
    ? { ms: Math.ceil(call), by: "withTimeout" }
    : pool !== undefined
    ? { ms: pool, by: "pool.query-timeout" }
    : undefined;
  if (asked === undefined || deadline === undefined) return asked;
  const steps = Math.max(1, Math.ceil((deadline - performance.now()) / TRANSACTION_STEP_MS));
  const left = steps * TRANSACTION_STEP_MS;
  return left < asked.ms ? { ms: left, by: TRANSACTION_TIMEOUT } : asked;
}

/** The error of a statement the database stopped at `timeout` (its `code` the database's). */
export function timeoutError(
  datasource: string,
  statement: string,
  code: string,
  timeout: QueryTimeout,
): DataError {
  return timeout.by === TRANSACTION_TIMEOUT
    ? new DataError({
      datasource,
      reason: "transaction",
      statement,
      code,
      message: `stopped by the database at the transaction's timeout (what was left of it, ` +
        `up to a whole second: ${timeout.ms / 1000} s): the transaction rolls back, and the ` +
        "connection is kept",
    })
    : new DataError({
      datasource,
      reason: "timeout",
      statement,
      code,
      message: `stopped by the database at its query timeout (${timeout.ms} ms, ${timeout.by}); ` +
        "the connection is kept",
    });
}
