// A transaction's connection as the calls inside it use it: it hears the failures after which the
// database itself has ended the transaction, and refuses what comes after, naming that failure.
// InnoDB (MariaDB, MySQL) rolls the whole transaction back at a deadlock, and at a lock wait
// timeout where the server runs with innodb_rollback_on_timeout, while the call that caught the
// error goes on: what it ran next would start a transaction of its own and be kept. PostgreSQL
// aborts a transaction at any failed statement, until a rollback (to a savepoint, or whole).
import { DIALECTS } from "../sql/dialects.ts";
import type { DataConnection, DataPool, RowCursor, StatementResult } from "../sql/data_pool.ts";
import { DataError } from "../sql/data_error.ts";
import { UnexpectedRollbackError } from "./unexpected_rollback_error.ts";

/** The failure after which the database refuses a transaction's statements. */
export interface Aborted {
  /** The statement's failure, as the call got it. */
  readonly failure: DataError;
  /**
   * The database rolled the whole transaction back (InnoDB): nothing can revive it. Otherwise
   * (PostgreSQL) a rollback to a savepoint made before the failure does.
   */
  readonly final: boolean;
}

/** What the connection reads of its transaction, and tells it. */
export interface AbortState {
  /** Committed or rolled back: its connection may be another caller's by now. */
  readonly ended: boolean;
  readonly aborted: Aborted | undefined;
  /** The database ended the transaction at `aborted` (for good, if final: it is doomed). */
  abortAt(aborted: Aborted): void;
  /** A rollback to a savepoint took the abort back (PostgreSQL). */
  revive(): void;
}

/** The error of a statement refused because its transaction was aborted by `aborted`. */
export function abortedError(pool: DataPool, aborted: Aborted, statement?: string): DataError {
  const failure = aborted.failure;
  const prefix = `datasource "${failure.datasource}": `;
  const cause = failure.message.startsWith(prefix)
    ? failure.message.slice(prefix.length)
    : failure.message;
  return new DataError({
    datasource: pool.name,
    reason: "transaction",
    ...(statement === undefined ? {} : { statement }),
    ...(failure.code === undefined ? {} : { code: failure.code }),
    message: aborted.final
      ? `not run: the database rolled back the whole transaction at an earlier failure the ` +
        `call caught (${cause}); nothing of it is committed`
      : `not run: the database aborted the transaction at an earlier failure the call caught ` +
        `(${cause}); it runs nothing more until it rolls back (a NESTED call's savepoint, or ` +
        `the whole transaction)`,
  });
}

/** The error of a statement that came after its transaction ended. */
export function endedError(pool: DataPool, statement?: string): DataError {
  return new DataError({
    datasource: pool.name,
    reason: "transaction",
    ...(statement === undefined ? {} : { statement }),
    message: "a statement came after its transaction ended, from a transactional call still " +
      "running (one the transaction's code did not await?): it is not run",
  });
}

/**
 * The error the commit of `where` (the call that began the transaction) fails with once the
 * database rolled it back.
 */
export function abortedCommitError(
  pool: DataPool,
  aborted: Aborted,
  where: string,
): UnexpectedRollbackError {
  const refused = abortedError(pool, aborted);
  return new UnexpectedRollbackError({
    datasource: pool.name,
    ...(refused.code === undefined ? {} : { code: refused.code }),
    message: `${where} rolled back, not committed: ${
      refused.message.slice(`datasource "${pool.name}": not run: `.length)
    }`,
  });
}

/** A transaction's connection, and a wait for the statements in flight on it. */
export interface TransactionConnection extends DataConnection {
  /**
   * Resolves once every statement sent so far has settled (at once when none is in flight) and
   * the streams still open on it are closed: the transaction ends, and their reads after it are
   * refused.
   */
  settled(): Promise<void>;
}

/**
 * `connection` for the transaction whose state is `state()`: a failure that ended the
 * transaction on the database marks it (and for good, on InnoDB, dooms it), and every statement
 * after such an end is refused, naming the failure.
 */
export function transactionConnection(
  pool: DataPool,
  connection: DataConnection,
  state: () => AbortState,
): TransactionConnection {
  return new GuardedConnection(pool, connection, state);
}

// A class: its methods are made once, not as closures for each transaction.
class GuardedConnection implements TransactionConnection {
  readonly #pool: DataPool;
  readonly #connection: DataConnection;
  readonly #state: () => AbortState;
  // The statements sent and not settled yet, and the end's wait for them.
  #inFlight = 0;
  #idle: (() => void) | undefined;
  // The streams begun on it and not closed yet: closed as it ends, before its COMMIT or ROLLBACK
  // (a MariaDB result still being sent would hold the connection from taking either). Made by
  // the first stream: a transaction without one costs nothing more.
  #open: Set<RowCursor> | undefined;

  constructor(pool: DataPool, connection: DataConnection, state: () => AbortState) {
    this.#pool = pool;
    this.#connection = connection;
    this.#state = state;
  }

  run(
    text: string,
    params: readonly unknown[],
    deadline?: number,
    queryTimeoutMs?: number,
  ): Promise<StatementResult> {
    return this.#statement(
      text,
      () => this.#connection.run(text, params, deadline, queryTimeoutMs),
    );
  }

  control(text: string, deadline?: number): Promise<void> {
    return this.#statement(text, () => this.#connection.control(text, deadline));
  }

  async cursor(
    text: string,
    params: readonly unknown[],
    alone: boolean,
    deadline?: number,
  ): Promise<RowCursor> {
    const rows = await this.#statement(
      text,
      () => this.#connection.cursor(text, params, alone, deadline),
    );
    const open = this.#open ??= new Set();
    open.add(rows);
    return {
      // Past the end, refused as any statement is (the cursor was closed as the transaction ended).
      next: (bound?: number) => this.#statement(text, () => rows.next(bound)),
      close: () => {
        if (this.#state().ended) return Promise.resolve();
        open.delete(rows);
        return this.#statement(text, () => rows.close());
      },
    };
  }

  release(broken?: boolean): void {
    this.#connection.release(broken);
  }

  settled(): Promise<void> {
    const open = this.#open;
    return open === undefined || open.size === 0
      ? this.#inFlightSettled()
      : this.#inFlightSettled().then(() => closeStreams(open));
  }

  async #statement<T>(text: string, send: () => Promise<T>): Promise<T> {
    // A NESTED call left running past the end sends its savepoint's statements here, not through
    // the scope's check: on a connection the pool may have handed to another transaction.
    if (this.#state().ended) throw endedError(this.#pool, text);
    const before = this.#state().aborted;
    if (before?.final) throw abortedError(this.#pool, before, text);
    this.#inFlight++;
    try {
      const result = await send();
      // A savepoint rolled back to on PostgreSQL takes the abort back with the failed work.
      const transaction = this.#state();
      if (transaction.aborted?.final === false && /^\s*ROLLBACK\s+TO\b/i.test(text)) {
        transaction.revive();
      }
      return result;
    } catch (error) {
      const transaction = this.#state();
      // PostgreSQL's own refusal of a statement in an aborted transaction: named as ours is.
      if (transaction.aborted !== undefined && isDataError(error) && error.code === "25P02") {
        throw abortedError(this.#pool, transaction.aborted, text);
      }
      if (transaction.aborted === undefined && isDataError(error)) {
        await this.#noteEnd(transaction, error);
      }
      throw error;
    } finally {
      if (--this.#inFlight === 0 && this.#idle !== undefined) {
        const wake = this.#idle;
        this.#idle = undefined;
        wake();
      }
    }
  }

  // Marks the transaction aborted where `error` ended it on the database.
  async #noteEnd(transaction: AbortState, error: DataError): Promise<void> {
    const final = await DIALECTS[this.#pool.kind].endedAt(
      error,
      (t) => this.#connection.run(t, []).then((r) => r.rows),
    );
    if (final !== undefined) transaction.abortAt({ failure: error, final });
  }

  #inFlightSettled(): Promise<void> {
    return this.#inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => {
      const waiting = this.#idle;
      this.#idle = () => {
        waiting?.();
        resolve();
      };
    });
  }
}

// A stream that cannot be closed leaves its statement to the transaction's end, whose failure
// then says so.
async function closeStreams(streams: Set<RowCursor>): Promise<void> {
  for (const rows of streams) {
    streams.delete(rows);
    await rows.close().catch(() => {});
  }
}

function isDataError(error: unknown): error is DataError {
  return error instanceof DataError;
}
