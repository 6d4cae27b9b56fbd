// The bound of one statement on a server database: a database that stops answering (frozen, a
// network that drops everything while the sockets stay open) answers no keepalive failure and
// no socket error, so only the caller's own clock ends the wait. The connection is then in a
// state nobody knows (a reply may still come): the pool closes it, and the next call gets another.
import { DataError } from "./data_error.ts";

/** What bounds a statement: the pool's `statement-timeout`, or its transaction's `timeout`. */
export interface StatementBound {
  /** Milliseconds from now. */
  readonly ms: number;
  /** The transaction's timeout bounds it (rather than the pool's `statement-timeout`). */
  readonly transaction: boolean;
  /**
   * The statement's query timeout bounds it, the client ending it where the database cannot
   * (MySQL, which has no limit on every statement).
   */
  readonly query?: boolean;
}

/**
 * How much longer than its query timeout the client waits for a statement the database is to
 * stop: the database's own answer (the statement's error, the connection kept) comes first.
 */
export const QUERY_TIMEOUT_GRACE_MS = 1_000;

/**
 * The bound of a statement the database stops at `queryTimeoutMs` (inside a transaction's time,
 * already the lesser of that and what is left of the transaction's, which may pass its end by
 * less than a second): that, with a grace past the database's own stop, so that it comes first;
 * inside a transaction's time, at least what is left of it; outside one, at least
 * `statement-timeout` (a query timeout of 2 minutes is not cut at the default 60 s).
 */
export function queryBound(
  statementTimeoutMs: number,
  deadline: number | undefined,
  queryTimeoutMs: number,
): StatementBound {
  if (deadline !== undefined) {
    // The bound counts from when the statement is queued, the database's timeout from when it
    // starts: one waiting behind the transaction's other statements (Promise.all) is not
    // running, and only the transaction's end may cut it.
    return {
      ms: Math.max(queryTimeoutMs + QUERY_TIMEOUT_GRACE_MS, deadline - performance.now()),
      transaction: true,
    };
  }
  return {
    ms: Math.max(statementTimeoutMs, queryTimeoutMs + QUERY_TIMEOUT_GRACE_MS),
    transaction: false,
  };
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

/** How often a pool looks at its statements in flight: how late past its bound one fails. */
export const WATCH_TICK_MS = 50;

/** A statement in flight: failed with `fail` once `due` passed, after `onLate` ran. */
export class InFlight {
  constructor(
    /** When it is late (`performance.now()`'s clock). */
    readonly due: number,
    readonly text: string,
    readonly bound: StatementBound,
    readonly onLate: () => void,
    readonly fail: (error: DataError) => void,
  ) {}
}

/**
 * A pool's statements in flight, each failed once its bound passed. One timer for them all,
 * armed while any runs, rather than one per statement: a statement costs a timer's setting and
 * clearing otherwise (a few µs on Deno, several percent of a local round trip).
 */
export class StatementWatch {
  readonly #datasource: string;
  readonly #inFlight = new Set<InFlight>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(datasource: string) {
    this.#datasource = datasource;
  }

  /**
   * `work`, or a DataError naming the datasource and `text` once `bound` passed (within
   * {@linkcode WATCH_TICK_MS}), after `onLate` ran (it marks the connection lost); what `work`
   * does later is dropped.
   */
  within<T>(text: string, bound: StatementBound, work: Promise<T>, onLate: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = this.start(text, bound, onLate, reject);
      work.then(
        (value) => {
          if (this.end(entry)) resolve(value);
        },
        (error) => {
          if (this.end(entry)) reject(error);
        },
      );
    });
  }

  /**
   * Watches a statement sent now, as {@linkcode StatementWatch.within} does, for a caller that
   * settles its own promise (one promise for the statement rather than two): `fail` gets the
   * DataError once `bound` passed, after `onLate` ran. The caller settles only if
   * {@linkcode StatementWatch.end} says the statement was still in flight.
   */
  start(
    text: string,
    bound: StatementBound,
    onLate: () => void,
    fail: (error: DataError) => void,
  ): InFlight {
    const entry = new InFlight(performance.now() + bound.ms, text, bound, onLate, fail);
    this.#inFlight.add(entry);
    this.#timer ??= this.#arm();
    return entry;
  }

  /** The statement answered: whether it was still in flight (false once it failed as late). */
  end(entry: InFlight): boolean {
    return this.#inFlight.delete(entry);
  }

  #arm(): ReturnType<typeof setInterval> {
    const timer = setInterval(() => {
      const now = performance.now();
      for (const entry of this.#inFlight) {
        if (entry.due > now) continue;
        this.#inFlight.delete(entry);
        entry.onLate();
        entry.fail(unansweredError(this.#datasource, entry.text, entry.bound));
      }
      // Nothing in flight: stopped, and armed again by the next statement.
      if (this.#inFlight.size === 0) {
        clearInterval(timer);
        this.#timer = undefined;
      }
    }, WATCH_TICK_MS);
    // Not unref'd: it runs only while a statement is in flight, which waits on it to end.
    return timer;
  }
}

/** The error of a statement the database did not answer within its bound. */
export function unansweredError(
  datasource: string,
  text: string,
  bound: StatementBound,
): DataError {
  if (bound.query) {
    return new DataError({
      datasource,
      reason: "timeout",
      statement: text,
      message: `ran past its query timeout (${Math.round(bound.ms)} ms), which MySQL cannot ` +
        "keep for every statement: the client ended it, its connection closed and its session " +
        "ended, and the next call gets another",
    });
  }
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
      message: `no answer within ${Math.round(bound.ms)} ms (pool.statement-timeout): ` +
        // The COMMIT may have been carried out with its answer lost: a retry could write twice.
        (COMMIT.test(text) ? "whether the transaction committed or not is unknown; " : "") +
        "the connection is closed, and the next call gets another",
    });
}

const COMMIT = /^\s*COMMIT\b/i;
