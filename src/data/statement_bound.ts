// The bound of one statement on a server database: a database that stops answering (frozen, a
// network that drops everything while the sockets stay open) answers no keepalive failure and
// no socket error, so only the caller's own clock ends the wait. The connection is then in a
// state nobody knows (a reply may still come): the pool closes it, and the next call gets another.
import { DataError } from "./data_error.ts";

/** The longest timer, in ms: a signed 32-bit count; beyond it a timer fires at once. */
const MAX_TIMER = 2 ** 31 - 1;

/** What bounds a statement: the pool's `statement-timeout`, or its transaction's `timeout`. */
export interface StatementBound {
  /** Milliseconds from now. */
  readonly ms: number;
  /** The transaction's timeout bounds it (rather than the pool's `statement-timeout`). */
  readonly transaction: boolean;
}

/**
 * The bound of a statement sent now: what is left of its transaction's time where it has one
 * (`deadline`, on `performance.now()`'s clock), else the pool's `statementTimeoutMs`.
 */
export function statementBound(
  statementTimeoutMs: number,
  deadline: number | undefined,
): StatementBound {
  if (deadline === undefined) return { ms: statementTimeoutMs, transaction: false };
  return { ms: Math.max(1, deadline - performance.now()), transaction: true };
}

/**
 * `work`, or a DataError naming `datasource` and `text` once `bound` passed, after `onLate` ran
 * (it marks the connection lost); what `work` does later is dropped.
 */
export function answeredWithin<T>(
  datasource: string,
  text: string,
  bound: StatementBound,
  work: Promise<T>,
  onLate: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      onLate();
      reject(unansweredError(datasource, text, bound));
    }, Math.min(Math.ceil(bound.ms), MAX_TIMER));
    work.then(
      (value) => {
        clearTimeout(timer);
        if (!late) resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}

/** The error of a statement the database did not answer within its bound. */
export function unansweredError(
  datasource: string,
  text: string,
  bound: StatementBound,
): DataError {
  return bound.transaction
    ? new DataError({
      datasource,
      reason: "transaction",
      statement: text,
      message: "no answer before the transaction's timeout passed: the connection is closed " +
        "and the transaction rolled back",
    })
    : new DataError({
      datasource,
      reason: "timeout",
      statement: text,
      message:
        `no answer within ${Math.round(bound.ms)} ms (statement-timeout): the connection is ` +
        "closed, and the next call gets another",
    });
}
