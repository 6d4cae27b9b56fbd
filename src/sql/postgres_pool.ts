// PostgreSQL's pool: Thaw's own over pg.Client (postgres_clients.ts), its clients handed out one
// caller at a time.
//
// How values come back with pg's default settings:
// - `bigint` (int8) and `numeric` are strings, exact ("9007199254740993"); `integer`, `smallint`,
//   `real` and `double precision` are numbers. `count(*)` is a bigint: a string.
// - `boolean` is a boolean.
// - `timestamptz` is a `Date` (the instant); `timestamp` (without time zone) is a `Date` read in
//   the process's time zone; `date` is a `Date` at local midnight; `time` and `interval` are
//   strings / pg's interval objects.
// - `json` and `jsonb` are parsed: objects, arrays, numbers, strings, booleans, null.
// - `bytea` is a Buffer (a Uint8Array).
// Parameters: a `Date` is sent as a timestamp with the local offset, a `Buffer` as bytea, an
// array as a PostgreSQL array, an object as its JSON, a bigint as its digits, `undefined` as NULL.
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import type { Datasource } from "./datasource.ts";
import { closedError } from "./acquire_within.ts";
import { PostgresClients } from "./postgres_clients.ts";
import type { DataConnection, DataPool, PoolOpener, RowCursor } from "./data_pool.ts";
import { type StatementResult, STREAM_BATCH_ROWS } from "./data_pool.ts";
import { DataError, messageOf, withoutValues } from "./data_error.ts";
import { type DriverError, ServerPool } from "./server_pool.ts";
import { POSTGRES } from "./postgres_dialect.ts";
import type { MigrationSession, ResolvedPoolSettings } from "./pool_settings.ts";
import { queryBound, type StatementBound, statementBound } from "./statement_bound.ts";
import { type QueryTimeout, queryTimeout } from "./query_timeout.ts";
import { PreparedStatements } from "./prepared_statements.ts";
import { definedFields } from "../defined_fields.ts";

/** pg's error: a SQLSTATE code where the server sent one. */
type PgError = DriverError;

/** Opens the pool of a PostgreSQL datasource; nothing connects before the first call. */
export const openPostgresPool: PoolOpener = (datasource, settings, migration) =>
  new PostgresPool(datasource, settings, migration);

class PostgresPool extends ServerPool<PgError> implements DataPool {
  readonly kind = "postgres" as const;
  protected readonly dialect = POSTGRES;
  readonly #idleTimeoutMs: number;
  /** The connections Thaw's calls take. */
  readonly #clients: PostgresClients<pg.Client>;
  /** pg.Pool over the same settings, made only where the app asks for the driver's own pool. */
  #native: pg.Pool | undefined;
  readonly #clientConfig: pg.ClientConfig;
  /** What is kept of each client's session. */
  readonly #sessions = new WeakMap<pg.Client, Session>();

  constructor(datasource: Datasource, s: ResolvedPoolSettings, migration?: MigrationSession) {
    super(datasource, s);
    this.#idleTimeoutMs = s.idleTimeoutMs;
    this.#clientConfig = {
      // Parsed here rather than passed as connectionString, which would override user/password.
      ...parseIntoClientConfig(datasource.location),
      ...definedFields({
        user: datasource.username,
        password: datasource.password,
        application_name: migration?.applicationName,
      }),
      // Each client's own bound on connecting; the wait for a free one is acquire-timeout's.
      connectionTimeoutMillis: s.connectTimeoutMs,
      // A server gone without a word (its host down, a network cut) ends an idle connection.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      // Sent with the startup message (each session's statement_timeout from its start): the
      // query timeout costs no statement of its own.
      ...definedFields({ statement_timeout: this.queryTimeoutMs }),
    };
    this.#clients = new PostgresClients<pg.Client>(
      { name: this.name, maxSize: s.maxSize, idleTimeoutMs: s.idleTimeoutMs },
      { open: this.#open, close: (client) => void client.end().catch(() => {}) },
    );
  }

  /**
   * The driver's own pool, `pg.Pool`, for what the client lacks: made on first use, over the same
   * settings and max-size, its connections its own (Thaw's calls never wait for them).
   */
  get native(): pg.Pool {
    if (this.#native === undefined) {
      const config = this.#clientConfig;
      const native = this.#native = new pg.Pool({
        // pg.Pool's connectionTimeoutMillis would bound the wait for a free client with it:
        // each client has its own instead.
        Client: class extends pg.Client {
          constructor() {
            super(config);
          }
        },
        max: this.maxSize,
        idleTimeoutMillis: this.#idleTimeoutMs,
      });
      // An idle client whose server went away: pg removes it; unheard, the event would crash.
      native.on("error", () => {});
      if (this.closed) void native.end();
    }
    return this.#native;
  }

  // A new connection, listened to for its life: an error while idle closes it, one while held
  // fails its next statement (see sessionOf); unheard, the event would crash the process.
  readonly #open = (): Promise<pg.Client> => {
    const client = new pg.Client(this.#clientConfig);
    client.on("error", () => this.#clients.lost(client));
    return new Promise((resolve, reject) =>
      client.connect((error: Error | undefined) => {
        if (!error) return resolve(client);
        client.end().catch(() => {});
        reject(
          this.connectError(error),
        );
      })
    );
  };

  async acquire(): Promise<DataConnection> {
    if (this.closed) throw closedError(this.name);
    // A connection that fails its check is closed (pg opens another in its place): each turn
    // takes one fewer old connection, so this ends with a checked or a new one. All of it within
    // acquire-timeout (HikariCP's rule): checks one after another, each waiting connect-timeout
    // on a database that stopped answering, would wait max-size times that.
    const deadline = performance.now() + this.acquireTimeoutMs;
    for (let left = this.acquireTimeoutMs; left > 0; left = deadline - performance.now()) {
      // An idle one no one waits before is taken at once, without a promise to wait on.
      const client = this.#clients.takeIdle() ??
        await this.#clients.acquire(left, this.acquireTimeoutMs);
      if (this.#usedLately(client) || await this.#alive(client, deadline)) {
        return new PostgresConnection(this, client);
      }
    }
    throw new DataError({
      datasource: this.name,
      reason: "timeout",
      message: `no connection was ready within ${this.acquireTimeoutMs} ms ` +
        "(pool.acquire-timeout): the idle ones did not answer their check, and were closed (does " +
        "the database answer?)",
    });
  }

  /** `client` given back: idle from now, or closed where `broken`. */
  giveBack(client: pg.Client, broken: boolean): void {
    this.#clients.release(client, broken);
  }

  /** What is kept of `client`'s session, listened to from its first call on. */
  sessionOf(client: pg.Client): Session {
    let session = this.#sessions.get(client);
    if (session === undefined) {
      const made = session = new Session();
      // An error while the client is out (the server ended the session) is kept: it fails the
      // next statement.
      // Listened to for the client's life rather than each time it is out: a listener added and
      // taken off cost each call as much as the rest of the hand-out.
      client.on("error", (error: PgError) => {
        made.lost ??= error;
        made.holder?.dropHeld(error);
      });
      made.late = () => {
        made.lost ??= new Error("the database did not answer a statement in time");
        made.holder?.dropHeld(made.lost);
        this.endSession(client);
      };
      this.#sessions.set(client, made);
    }
    return session;
  }

  // Used again at once, a connection is not checked (HikariCP's rule, and its 500 ms).
  #usedLately(client: pg.Client): boolean {
    const since = this.#clients.idleSince(client);
    return since === undefined || performance.now() - since <= CHECK_IDLE_AFTER_MS;
  }

  // A connection idle for a while may have died without a word (its server restarted, a
  // firewall dropped it): it answers an empty statement within connect-timeout, or is closed.
  async #alive(client: pg.Client, deadline: number): Promise<boolean> {
    const now = performance.now();
    const checkMs = Math.max(1, Math.min(this.connectTimeoutMs, deadline - now));
    try {
      await this.watch.within(
        "",
        { ms: checkMs, transaction: false },
        client.query(""),
        () => {},
      );
      return true;
    } catch {
      this.#clients.release(client, true);
      return false;
    }
  }

  /**
   * Ends the session `client` ran a statement its bound cut. PostgreSQL does not notice a closed
   * socket while it runs a statement (a lock wait, a long scan): the session would run on, its
   * transaction's locks held, until the statement ended of itself. Ended from another connection
   * (as JDBC's query timeout cancels), as its own user may; none is made for a database that
   * does not answer within connect-timeout, which ends the session once it notices the socket.
   */
  endSession(client: pg.Client): void {
    const pid = (client as { processID?: unknown }).processID;
    if (typeof pid !== "number") return;
    this.ending(this.#terminate(pid));
  }

  async #terminate(pid: number): Promise<void> {
    const client = new pg.Client({ ...this.#clientConfig, query_timeout: this.connectTimeoutMs });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("SELECT pg_terminate_backend($1)", [pid]);
    } finally {
      // Not waited on: a server that stopped answering would never acknowledge the end.
      client.end().catch(() => {});
    }
  }

  idleCount(): number {
    return this.#clients.idleCount;
  }

  // Waits for the clients held to be given back (pg's end of its own pool does too).
  protected async closeConnections(): Promise<void> {
    await Promise.all([this.#clients.close(), this.#native?.end()]);
  }

  // The values a statement was given put as `…`. Not the detail: it quotes a row's other columns
  // (`Failing row contains (…)`), a key as an index folded it (`Key (lower(email))=(…)`), bytes
  // as hex, none of which masking can find.
  describe(error: PgError, params: readonly unknown[] = []): string {
    const code = error.code && /^[0-9A-Z]{5}$/.test(error.code) ? ` (SQLSTATE ${error.code})` : "";
    return this.mask(withoutValues(`${messageOf(error)}${code}`, params));
  }

  // 57014 is also a cancel (pg_cancel_backend): only one not canceled "due to user request" was
  // stopped by the query timeout.
  protected timedOut(error: PgError): string | undefined {
    return error.code === "57014" && !/user request/i.test(messageOf(error)) ? "57014" : undefined;
  }
}

/** How long a connection may sit idle and be handed out unchecked (HikariCP's figure). */
const CHECK_IDLE_AFTER_MS = 500;

/** How long a connection stays idle before TCP keepalive probes ask whether its server is there. */
const KEEPALIVE_DELAY_MS = 10_000;

/** Names each cursor apart from the others its connection may have open (in one transaction). */
// Module-level: one counter for every pool of the process, so that no two cursors share a name
// whatever connection they run on.
let cursors = 0;

/**
 * One client's session as long as it lives: the statements it keeps prepared, and what ended it.
 * A client whose session was lost is closed when given back, never handed out again.
 */
class Session {
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

class PostgresConnection implements DataConnection {
  readonly #pool: PostgresPool;
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

  constructor(pool: PostgresPool, client: pg.Client) {
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
