// A connection of PostgreSQL's pool (postgres_pool.ts): its client handed out to one caller, its
// statements bounded and queued in order, and the session it keeps for as long as the client lives.
import pg from "pg";
import type { DataConnection, RowCursor } from "./data_pool.ts";
import { type StatementResult, STREAM_BATCH_ROWS } from "./data_pool.ts";
import { DataError, messageOf } from "./data_error.ts";
import type { DriverError, ServerPool } from "./server_pool.ts";
import { queryBound, type StatementBound, statementBound } from "./statement_bound.ts";
import { type QueryTimeout, queryTimeout } from "./query_timeout.ts";
import { PreparedStatements } from "./prepared_statements.ts";
import { isCursorQuery } from "./leading_keyword.ts";

/** pg's error: a SQLSTATE code where the server sent one. */
export type PgError = DriverError;

/** What a connection asks of the pool it came from (postgres_pool.ts). */
export interface SessionPool extends ServerPool<PgError> {
  /** What is kept of `client`'s session, listened to from its first call on. */
  sessionOf(client: pg.Client): Session;
  /** `client` given back: idle from now, or closed where `broken`. */
  giveBack(client: pg.Client, broken: boolean): void;
}

/** Names each cursor apart from the others its connection may have open (in one transaction). */
// Module-level: one counter for every pool of the process, so that no two cursors share a name
// whatever connection they run on.
let cursors = 0;

/**
 * One client's session as long as it lives: the statements it keeps prepared, and what ended it.
 * A client whose session was lost is closed when given back, never handed out again.
 */
export class Session {
  readonly prepared = new PreparedStatements();
  /** The error that ended the session, or the statement it did not answer in time. */
  lost: PgError | undefined;
  /** A statement went unanswered past its bound: the session is lost, and ended on the server. */
  late: () => void = () => {};
  /**
   * Its own `statement_timeout` where a call outside a transaction changed it from the pool's
   * (`withTimeout`): only such a call sets it (inside a transaction, `SET LOCAL`), committed as
   * it is sent, no rollback undoes it.
   */
  timeoutMs: number | undefined;
  /** The connection that has it out now, whose held queries fail with the session. */
  holder: PostgresConnection | undefined;
}

export class PostgresConnection implements DataConnection {
  readonly #pool: SessionPool;
  readonly #client: pg.Client;
  readonly #session: Session;
  readonly #prepared: PreparedStatements;
  #released = false;
  /**
   * The `statement_timeout` a `SET LOCAL` of the transaction under way made, in the order the
   * statements are sent; none since it began, or NaN where a rollback to a savepoint may have
   * undone one.
   */
  #local: number | undefined;
  /**
   * Queries held back, in their order, while one already waits in pg's queue; none while
   * nothing is held. pg queues a query sent while another runs, but prints a deprecation
   * warning on the app's stderr for one sent while another already waits: a transaction's calls
   * side by side (`Promise.all`), a statement with its `SET LOCAL` or a prepared statement's
   * Close. Handed on one at a time, as pg's queue empties: the same order, sent as soon.
   */
  #held: Held[] | undefined;
  readonly #handOn = (): void => {
    const held = this.#held;
    // pg heard the answer first: its next query, if any, runs, and its queue may take one.
    while (held !== undefined && held.length > 0 && this.#roomInQueue()) held.shift()?.send();
    if (held !== undefined && held.length === 0) this.#stopHolding();
  };

  constructor(pool: SessionPool, client: pg.Client) {
    this.#pool = pool;
    this.#client = client;
    const session = this.#session = pool.sessionOf(client);
    this.#prepared = session.prepared;
    session.holder = this;
  }

  async run(
    text: string,
    params: readonly unknown[],
    deadline?: number,
    queryTimeoutMs?: number,
  ): Promise<StatementResult> {
    const timeout = queryTimeout(queryTimeoutMs, this.#pool.queryTimeoutMs, deadline);
    const last = await this.#query(text, params, deadline, text, params, timeout, true, true);
    const reads = last.command === "SELECT" || last.command === null;
    return { rows: last.rows, rowsAffected: reads ? 0 : last.rowCount ?? 0 };
  }

  async control(text: string, deadline?: number): Promise<void> {
    // A transaction's SET LOCAL ends with it; a rollback to a savepoint undoes those sent since.
    if (/^\s*ROLLBACK\s+TO\b/i.test(text)) this.#local = Number.NaN;
    else if (/^\s*(BEGIN|COMMIT|ROLLBACK)\b/i.test(text)) this.#local = undefined;
    const { command } = await this.#query(text, [], deadline);
    // PostgreSQL aborts a transaction at its first failed statement, and answers its COMMIT with
    // ROLLBACK, not an error: a call that caught that failure and went on must not resolve as
    // if its writes were kept.
    if (command === "ROLLBACK" && /^\s*COMMIT\b/i.test(text)) {
      throw this.#pool.refused(
        text,
        "rolled back, not committed: a statement in the transaction failed, and PostgreSQL " +
          "aborts a transaction at its first error, though the call caught it and went on",
      );
    }
  }

  // A cursor (DECLARE ... CURSOR, then FETCH a batch at a time) rather than pg's row-limited
  // portal: each FETCH is a statement as any other (bounded, its errors classified and masked,
  // the connection free between batches for the transaction's other statements and other
  // cursors), and the cursor is the transaction's, ended with it. Outside a transaction it lives
  // in a read-only one of its own, as a cursor must.
  async cursor(
    text: string,
    params: readonly unknown[],
    alone: boolean,
    deadline?: number,
  ): Promise<RowCursor> {
    if (!isCursorQuery(text)) return this.#whole(text, params, deadline);
    const name = `thaw_cursor_${++cursors}`;
    const pool = this.#pool;
    // The pool's timeout (or what is left of the transaction's time), whatever a withTimeout
    // call before left in the session, as for `run`.
    const timeout = queryTimeout(undefined, pool.queryTimeoutMs, deadline);
    if (alone) await this.control("BEGIN READ ONLY", deadline);
    let failed = false;
    let done = false;
    let closed = false;
    try {
      await this.#query(
        `DECLARE ${name} NO SCROLL CURSOR FOR ${text}`,
        params,
        deadline,
        text,
        params,
        timeout,
        false,
        true,
      );
    } catch (error) {
      if (alone) await this.control("ROLLBACK").catch(() => this.release(true));
      throw error;
    }
    const fetch = `FETCH ${STREAM_BATCH_ROWS} FROM ${name}`;
    return {
      next: async (next?: number) => {
        if (done || closed) return [];
        // A batch is a statement: past the transaction's timeout it is not sent, as no statement
        // is (its limit would be the whole second what is left goes up to, so a stream of quick
        // batches would read on to its end).
        if (next !== undefined && performance.now() > next) {
          throw pool.refused(text, "the transaction ran past its timeout: it is rolled back");
        }
        let result: pg.QueryResult;
        try {
          // Each batch under its own timeout, whatever a statement of the loop ran under since
          // (a withTimeout call in the same transaction), as a call of its own would.
          const now = queryTimeout(undefined, pool.queryTimeoutMs, next);
          // Its failure named as the statement's, with the statement's values masked.
          result = await this.#query(fetch, [], next, text, params, now, true, true);
        } catch (error) {
          failed = true;
          throw error;
        }
        // Fewer than asked: the last batch, and no FETCH more for an empty one.
        if (result.rows.length < STREAM_BATCH_ROWS) done = true;
        return result.rows;
      },
      close: async () => {
        if (closed) return;
        closed = true;
        // A failed FETCH aborted the transaction: a CLOSE would be refused (the rollback of the
        // transaction ends the cursor).
        if (alone) await this.control(failed ? "ROLLBACK" : "COMMIT");
        else if (!failed) await this.#query(`CLOSE ${name}`, []);
      },
    };
  }

  // A statement DECLARE does not take (a write's RETURNING, SHOW, EXPLAIN) runs as `run` runs
  // it: in the transaction it is called in, or on its own, committed as it ends (not in the
  // read-only one of a cursor). Its rows are held whole and handed out a batch at a time: a
  // write with RETURNING is done whole before PostgreSQL sends its first row, whatever reads it.
  async #whole(
    text: string,
    params: readonly unknown[],
    deadline: number | undefined,
  ): Promise<RowCursor> {
    let rows = (await this.run(text, params, deadline)).rows;
    let at = 0;
    return {
      next: () => {
        const batch = rows.slice(at, at + STREAM_BATCH_ROWS);
        at += batch.length;
        // Let go once handed out, as a cursor's batches are.
        if (at >= rows.length) rows = [];
        return Promise.resolve(batch);
      },
      close: () => {
        rows = [];
        return Promise.resolve();
      },
    };
  }

  async #query(
    text: string,
    params: readonly unknown[],
    deadline?: number,
    shown: string = text,
    masked: readonly unknown[] = params,
    timeout?: QueryTimeout,
    prepare = true,
    timed = false,
  ): Promise<pg.QueryResult> {
    if (this.#released) throw this.#pool.usedAfterRelease();
    const lost = this.#session.lost;
    if (lost !== undefined) throw this.#pool.statementError(lost, shown, true, masked);
    let result: pg.QueryResult;
    try {
      result = await this.#within(text, params, deadline, shown, timeout, prepare, timed);
    } catch (error) {
      // A table's columns changed under a prepared `SELECT *`: prepared anew, and run again
      // unless a transaction, which the failure aborted, holds the connection.
      if (!prepare || !planWentStale(error, params)) {
        throw this.#failure(error, shown, masked, timeout);
      }
      this.#unprepare(this.#prepared.forget(text));
      if (this.#client.getTransactionStatus() !== "I") {
        throw this.#failure(error, shown, masked, timeout);
      }
      try {
        result = await this.#within(text, params, deadline, shown, timeout, prepare, timed);
      } catch (again) {
        throw this.#failure(again, shown, masked, timeout);
      }
    }
    // Several statements in one text give one result each; the last is the caller's.
    return Array.isArray(result) ? result[result.length - 1] as pg.QueryResult : result;
  }

  #within(
    text: string,
    params: readonly unknown[],
    deadline: number | undefined,
    shown: string,
    timeout: QueryTimeout | undefined,
    prepare: boolean,
    timed: boolean,
  ): Promise<pg.QueryResult> {
    // Unanswered in time: the connection is lost, and pg ends it (a query still running on
    // a client it ends destroys the socket) when it is released.
    const bound = timeout === undefined
      ? statementBound(this.#pool.statementTimeoutMs, deadline)
      : queryBound(this.#pool.statementTimeoutMs, deadline, timeout.ms);
    return timed
      ? this.#timed(text, params, prepare, timeout?.ms ?? 0, shown, bound)
      : this.#send(text, params, prepare, shown, bound);
  }

  // The one way a statement with a timeout (0: none) is sent: after the SET that gives its session
  // that `statement_timeout`, where the session does not have it already (a statement without
  // any timeout, on a session that has none, costs nothing more). In a transaction a SET LOCAL,
  // which ends with it (and which PostgreSQL does not apply to the COMMIT's deferred triggers),
  // sent with the statement, nothing between them: another call's statement in the same
  // transaction (Promise.all) runs under its own. Outside one, the session's own, left for the
  // calls after (which set theirs where it differs). The SET's failure is the statement's.
  #timed(
    text: string,
    params: readonly unknown[],
    prepare: boolean,
    ms: number,
    shown: string,
    bound: StatementBound,
  ): Promise<pg.QueryResult> {
    const client = this.#client;
    const session = this.#session;
    const own = session.timeoutMs ?? this.#pool.queryTimeoutMs ?? 0;
    if (client.getTransactionStatus() !== "I") {
      if ((this.#local ?? own) === ms) return this.#send(text, params, prepare, shown, bound);
      this.#local = ms;
      const set = this.#ask(`SET LOCAL statement_timeout = ${ms}`, []);
      const sent = this.#send(text, params, prepare, shown, bound);
      // Both heard from now on, the first failure the call's: a failed SET aborts the
      // transaction (the statement fails after it), and a statement cut at its bound while the
      // SET still waits (a database that stopped answering) fails before the SET does.
      return Promise.all([set, sent]).then(([, result]) => result);
    }
    this.#local = undefined;
    if (own === ms) return this.#send(text, params, prepare, shown, bound);
    // The connection is this call's alone: the statement is sent once the SET took, the SET
    // bound as the statement is.
    const set = this.#ask(`SET statement_timeout = ${ms}`, []);
    return this.#pool.watch.within(shown, bound, set, session.late).then(() => {
      session.timeoutMs = ms;
      return this.#send(text, params, prepare, shown, bound);
    });
  }

  // A statement with values runs prepared under its name; one without may hold several
  // statements (the simple protocol), which a prepared statement cannot.
  // (A cursor's DECLARE names its cursor: a text never sent again, not worth a name.)
  #send(
    text: string,
    params: readonly unknown[],
    prepare: boolean,
    shown: string,
    bound: StatementBound,
  ): Promise<pg.QueryResult> {
    if (!prepare || params.length === 0) {
      return this.#pool.watch.within(shown, bound, this.#ask(text, params), this.#session.late);
    }
    const { name, evicted } = this.#prepared.name(text);
    if (evicted !== undefined) this.#unprepare(evicted);
    const watch = this.#pool.watch;
    // A Query made of the text and named after, with a callback, watched by the promise it
    // settles: given a config object, pg copies its every property descriptor and wraps its
    // promise in another, which with the watch's own promise cost more CPU than the rest of the
    // client's side of the call.
    return new Promise((resolve, reject) => {
      const entry = watch.start(shown, bound, this.#session.late, reject);
      const query = new pg.Query(
        text,
        params as unknown[],
        (error: Error | undefined, result: unknown) => {
          if (!watch.end(entry)) return;
          if (error) reject(error);
          else resolve(result as pg.QueryResult);
        },
      );
      (query as unknown as { name: string }).name = name;
      const fail = (error: Error) => {
        if (watch.end(entry)) reject(error);
      };
      try {
        if (this.#held === undefined && this.#roomInQueue()) this.#client.query(query);
        else this.#hold({ send: () => this.#client.query(query), fail });
      } catch (error) {
        fail(error as Error);
      }
    });
  }

  /** `text` sent to pg now, or once pg's queue has room (see `#held`). */
  #ask(text: string, params: readonly unknown[]): Promise<pg.QueryResult> {
    const client = this.#client;
    if (this.#held === undefined && this.#roomInQueue()) {
      return client.query(text, params as unknown[]);
    }
    return new Promise((resolve, reject) => {
      this.#hold({
        send: () => client.query(text, params as unknown[]).then(resolve, reject),
        fail: reject,
      });
    });
  }

  #roomInQueue(): boolean {
    // A pg without that queue (a later version) has nothing to hold back for.
    return ((this.#client as unknown as PgQueue)._queryQueue?.length ?? 0) === 0;
  }

  #hold(query: Held): void {
    if (this.#held === undefined) {
      this.#held = [];
      (this.#client as unknown as PgQueue).connection.on("readyForQuery", this.#handOn);
    }
    this.#held.push(query);
  }

  #stopHolding(): void {
    this.#held = undefined;
    (this.#client as unknown as PgQueue).connection.removeListener("readyForQuery", this.#handOn);
  }

  /**
   * The connection is lost or given back: what is held is not sent (not to a session being
   * closed, nor to the next caller's), and fails as on a lost connection.
   */
  dropHeld(error: Error): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#stopHolding();
    for (const query of held) query.fail(error);
  }

  // The server forgets `name` (queued before the next statement), pg too. Closed whether or not
  // pg has heard its Parse answered: a name put out while its statement is still queued or
  // parsing (statements sent at once, Promise.all) is parsed before the Close, which follows
  // every statement given that name (a name is never given twice) and forgets it in pg as it
  // is sent. A Close of a name the server does not have is no error.
  #unprepare(name: string | undefined): void {
    if (name === undefined) return;
    delete (this.#client as unknown as PgSession).connection.parsedStatements[name];
    const close = new CloseStatement(name);
    if (this.#held === undefined && this.#roomInQueue()) this.#client.query(close);
    else this.#hold({ send: () => this.#client.query(close), fail: () => {} });
  }

  #failure(
    error: unknown,
    shown: string,
    masked: readonly unknown[],
    timeout: QueryTimeout | undefined,
  ): DataError {
    if (error instanceof DataError) return error;
    const lost = this.#session.lost !== undefined || connectionLost(error as PgError);
    return this.#pool.statementError(error as PgError, shown, lost, masked, timeout);
  }

  release(broken = false): void {
    if (this.#released) return;
    this.#released = true;
    this.#session.holder = undefined;
    // The error made only where a query is held: an Error's stack trace, made on each release,
    // cost more CPU than the rest of the hand-out.
    if (this.#held !== undefined) {
      this.dropHeld(new Error("the connection was given back before the statement was sent"));
    }
    // Idle from now, unless it is closed.
    this.#pool.giveBack(this.#client, broken || this.#session.lost !== undefined);
  }
}

/**
 * The protocol's Close of a prepared statement, then Sync, queued on a client as a query is. Not
 * `DEALLOCATE`, a statement, which fails for a name the server does not have (after the app's
 * `DEALLOCATE ALL`; behind PgBouncer, which renames prepared statements and translates only
 * Close) and in an aborted transaction: a failure that would abort the caller's transaction
 * unseen, or leave the statement on the server. Close does neither: PostgreSQL takes it in any
 * transaction state, and a name it does not have is no error.
 */
class CloseStatement implements pg.Submittable {
  readonly #statement: string;

  constructor(statement: string) {
    this.#statement = statement;
  }

  submit(connection: pg.Connection): void {
    // Its statement's Parse, sent before, may have been answered since the name was put out.
    delete (connection as unknown as PgSession["connection"]).parsedStatements[this.#statement];
    connection.close({ type: "S", name: this.#statement }, false);
    connection.sync();
  }

  // pg hands the query it runs what the server answers: CloseComplete (which pg does not pass
  // on), then ReadyForQuery; an error only where the connection failed, which its next
  // statement hears.
  handleReadyForQuery(): void {}
  handleError(): void {}
}

/** A query held back from pg's queue: sent once there is room, or failed. */
interface Held {
  send(): void;
  fail(error: Error): void;
}

/** pg's queries waiting behind the one running, and its connection's messages. */
interface PgQueue {
  readonly _queryQueue?: readonly unknown[];
  readonly connection: {
    on(event: "readyForQuery", listener: () => void): unknown;
    removeListener(event: "readyForQuery", listener: () => void): unknown;
  };
}

/** pg's record of the statements its connection parsed, by name. */
interface PgSession {
  readonly connection: { readonly parsedStatements: Record<string, string | undefined> };
}

/** PostgreSQL refusing a prepared statement whose row type changed (`ALTER TABLE` under it). */
function planWentStale(error: unknown, params: readonly unknown[]): boolean {
  return params.length > 0 && (error as PgError).code === "0A000" &&
    /cached plan must not change result type/.test(messageOf(error as PgError));
}

/**
 * Whether the session is gone, rather than the statement refused: a socket error the server did
 * not send ("Connection terminated unexpectedly", ECONNRESET), or the server ending the session
 * (class 57P: `pg_terminate_backend`, a shutdown; class 08: connection exceptions).
 */
function connectionLost(error: PgError): boolean {
  const code = error.code;
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    return code.startsWith("57P") || code.startsWith("08");
  }
  return /^E(CONNRESET|PIPE|CONNREFUSED|TIMEDOUT)$/.test(code ?? "") ||
    /connection|terminated|not queryable|socket|closed/i.test(messageOf(error));
}
