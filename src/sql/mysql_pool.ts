// MySQL's and MariaDB's pool: mysql2's pool, with server-side prepared statements (`execute`),
// so that a parameter is never part of the statement's text, not even escaped.
//
// How values come back with these settings (mysql2's defaults but `timezone: "Z"` and
// `supportBigNumbers`):
// - `BIGINT` is a number while it is a safe integer, a string beyond (exact); `DECIMAL` is a
//   string; `INT`, `FLOAT`, `DOUBLE` are numbers. `COUNT(*)` is a number.
// - `BOOLEAN` is `TINYINT(1)`: a number, 0 or 1.
// - `DATETIME` and `TIMESTAMP` are `Date`s read as UTC; `DATE` is a `Date` at UTC midnight;
//   `TIME` is a string.
// - JSON is parsed (objects, arrays…): a `JSON` column and `JSON_OBJECT(...)`, on MariaDB too
//   (where JSON is a `LONGTEXT` the server marks as JSON). A `TEXT` column holding JSON is text.
// - `BLOB`, `BINARY` are Buffers (Uint8Arrays).
// `lastInsertId` of an INSERT of several rows is the first row's key (MySQL's LAST_INSERT_ID).
// Parameters: a `Date` is sent as UTC, a boolean as 1 or 0, `undefined` as NULL, an array or
// another object as its JSON, a typed array as its bytes.
import { Buffer } from "node:buffer";
import mysql from "mysql2";
import type { Datasource } from "./datasource.ts";
import { acquireWithin, closedError } from "./acquire_within.ts";
import type { DataConnection, DataPool, PoolOpener, RowCursor } from "./data_pool.ts";
import { type StatementResult, STREAM_BATCH_ROWS } from "./data_pool.ts";
import { DataError, messageOf, withoutValues } from "./data_error.ts";
import { ServerPool } from "./server_pool.ts";
import { MYSQL } from "./mysql_dialect.ts";
import { HeldConnections } from "./held_connections.ts";
import type { MigrationSession, ResolvedPoolSettings } from "./pool_settings.ts";
import { queryBound, type StatementBound, statementBound } from "./statement_bound.ts";
import { type QueryTimeout, queryTimeout, TRANSACTION_TIMEOUT } from "./query_timeout.ts";
import { definedFields } from "../defined_fields.ts";

interface MysqlError extends Error {
  code?: string | undefined;
  errno?: number | undefined;
  fatal?: boolean | undefined;
}

/** Opens the pool of a MySQL or MariaDB datasource; nothing connects before the first call. */
export const openMysqlPool: PoolOpener = (datasource, settings, migration) =>
  new MysqlPool(datasource, settings, migration);

class MysqlPool extends ServerPool<MysqlError> implements DataPool {
  readonly kind = "mysql" as const;
  protected readonly dialect = MYSQL;
  readonly native: mysql.Pool;
  /** The error that ended a connection, heard whenever it came (held, idle or running). */
  readonly #lost = new WeakMap<mysql.PoolConnection, MysqlError>();
  readonly #watched = new WeakSet<mysql.PoolConnection>();
  readonly held: HeldConnections = new HeldConnections();
  readonly #connectOptions: mysql.ConnectionOptions;

  constructor(datasource: Datasource, s: ResolvedPoolSettings, migration?: MigrationSession) {
    super(datasource, s);
    this.#connectOptions = {
      uri: datasource.location,
      ...definedFields({ user: datasource.username, password: datasource.password }),
      connectTimeout: s.connectTimeoutMs,
    };
    this.native = mysql.createPool({
      ...this.#connectOptions,
      connectionLimit: s.maxSize,
      maxIdle: s.maxSize,
      idleTimeout: s.idleTimeoutMs,
      connectTimeout: s.connectTimeoutMs,
      // A server gone without a word (its host down, a network cut) ends an idle connection.
      enableKeepAlive: true,
      keepAliveInitialDelay: 10_000,
      // mysql2's own wait for a free connection is unbounded: acquireWithin bounds it.
      waitForConnections: true,
      queueLimit: 0,
      timezone: "Z",
      // The migration runner sends a file in one query, and reads values as it always did.
      supportBigNumbers: migration === undefined,
      multipleStatements: migration !== undefined,
      // Prepared statements are kept per connection; the server caps them all together
      // (max_prepared_stmt_count, 16 382 by default), which mysql2's 16 000 each would pass.
      maxPreparedStatements: 256,
    });
  }

  async acquire(): Promise<DataConnection> {
    if (this.closed) throw closedError(this.name);
    // A free connection is handed out at once (mysql2 gives its waiters the ones given back
    // first): no timer to arm, which would cost a call more CPU than the rest of the acquire.
    const connection = await (this.idleCount() > 0 ? this.#connect() : acquireWithin(
      this.name,
      this.acquireTimeoutMs,
      this.#connect,
      giveBack,
    ));
    if (!this.#watched.has(connection)) {
      this.#watched.add(connection);
      // mysql2's pool listens once; a later error (a KILL while the connection is held, then
      // the socket closing) would otherwise be an unhandled 'error' event.
      connection.on("error", (error: MysqlError) => {
        if (!this.#lost.has(connection)) this.#lost.set(connection, error);
      });
    }
    this.held.take();
    return new MysqlConnection(this, connection);
  }

  // Made once, not for each call.
  readonly #connect = (): Promise<mysql.PoolConnection> =>
    new Promise<mysql.PoolConnection>((resolve, reject) =>
      this.native.getConnection((error, connection) => {
        if (error) {
          reject(
            this.connectError(error),
          );
        } else resolve(connection);
      })
    );

  // mysql2 keeps its free connections in a field it does not document (the same since 1.x);
  // were it renamed, the metric would read 0 rather than fail a statement.
  idleCount(): number {
    const free = (this.native as { _freeConnections?: { length?: unknown } })._freeConnections;
    return typeof free?.length === "number" ? free.length : 0;
  }

  lostError(connection: mysql.PoolConnection): MysqlError | undefined {
    return this.#lost.get(connection);
  }

  protected async closeConnections(): Promise<void> {
    await this.held.none();
    await new Promise<void>((resolve, reject) =>
      this.native.end((error) => error ? reject(error) : resolve())
    );
  }

  /**
   * Ends the session `connection` ran a statement its bound cut. MariaDB does not notice a
   * closed socket while a statement waits on a lock: the session would wait on
   * (`innodb_lock_wait_timeout`), its transaction's locks held. Ended from another connection
   * (as Connector/J's query timeout does), as its own user may; none is made for a database
   * that does not answer within connect-timeout.
   */
  endSession(connection: mysql.PoolConnection): void {
    const id = connection.threadId;
    if (typeof id !== "number") return;
    this.ending(this.#kill(id));
  }

  #kill(id: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const killer = mysql.createConnection(this.#connectOptions);
      const done = () => {
        clearTimeout(giveUp);
        killer.destroy();
        resolve();
      };
      // Connecting and the KILL each have their bound; this one is for a callback never called.
      const giveUp = setTimeout(done, 2 * this.connectTimeoutMs);
      killer.on("error", () => {});
      killer.query(
        { sql: `KILL CONNECTION ${Math.trunc(id)}`, timeout: this.connectTimeoutMs },
        done,
      );
    });
  }

  // The values a statement was given put as `…`. A duplicate entry is cut to its first
  // characters (`Duplicate entry '0123…...'`), which masking cannot find: that part goes whole.
  describe(error: MysqlError, params: readonly unknown[] = []): string {
    const message = error.code === "ER_DUP_ENTRY"
      ? messageOf(error).replace(
        /^Duplicate entry '[\s\S]*' for key /,
        "Duplicate entry '…' for key ",
      )
      : messageOf(error);
    return this.mask(withoutValues(`${message}${error.code ? ` (${error.code})` : ""}`, params));
  }

  // mysql2 has no name for MariaDB's ER_STATEMENT_TIMEOUT: its number.
  protected timedOut(error: MysqlError): string | undefined {
    return error.errno === ER_STATEMENT_TIMEOUT ? "ER_STATEMENT_TIMEOUT" : undefined;
  }
}

/** A connection that came after its caller gave up goes back to the pool. */
function giveBack(late: mysql.PoolConnection): void {
  late.release();
}

/** MariaDB's error of a statement stopped at its `max_statement_time`. */
const ER_STATEMENT_TIMEOUT = 1969;

// Whether the server is MariaDB, which stops a statement at its max_statement_time; MySQL has
// only a limit for SELECT. mysql2 reads it from the handshake into a field it does not document
// (the server's version, which names MariaDB, beside it): were both renamed, the client's bound
// would end a statement in the database's place.
function isMariaDb(connection: mysql.PoolConnection): boolean {
  const c = connection as { _isMariaDB?: unknown; _handshakePacket?: { serverVersion?: unknown } };
  if (typeof c._isMariaDB === "boolean") return c._isMariaDB;
  return /mariadb/i.test(String(c._handshakePacket?.serverVersion ?? ""));
}

class MysqlConnection implements DataConnection {
  readonly #pool: MysqlPool;
  readonly #connection: mysql.PoolConnection;
  #broken = false;
  #released = false;
  /** A statement it sent was not answered in time: whatever comes next on it is unknown. */
  #unanswered: MysqlError | undefined;
  /** A streamed result is being read: the connection takes nothing else until it ends. */
  #streaming = false;

  constructor(pool: MysqlPool, connection: mysql.PoolConnection) {
    this.#pool = pool;
    this.#connection = connection;
  }

  run(
    text: string,
    params: readonly unknown[],
    deadline?: number,
    queryTimeoutMs?: number,
  ): Promise<StatementResult> {
    const pool = this.#pool;
    const timeout = queryTimeout(queryTimeoutMs, pool.queryTimeoutMs, deadline);
    if (timeout === undefined) {
      return this.#send(
        text,
        params,
        (done) => this.#connection.execute(text, params.map(bindable) as mysql.ExecuteValues, done),
        deadline,
      );
    }
    // MariaDB: the limit goes with the statement itself, no statement of its own (a prepared
    // statement per text and timeout). MySQL: the client ends the statement at the timeout.
    const mariaDb = isMariaDb(this.#connection);
    const sent = mariaDb
      ? `SET STATEMENT max_statement_time=${(timeout.ms / 1000).toFixed(3)} FOR ${text}`
      : text;
    return this.#send(
      text,
      params,
      (done) => this.#connection.execute(sent, params.map(bindable) as mysql.ExecuteValues, done),
      deadline,
      timeout,
      mariaDb
        ? queryBound(pool.statementTimeoutMs, deadline, timeout.ms)
        : timeout.by === TRANSACTION_TIMEOUT
        ? statementBound(pool.statementTimeoutMs, deadline)
        : { ms: timeout.ms, transaction: false, query: true },
    );
  }

  // The text protocol: START TRANSACTION and SAVEPOINT are not prepared statements in MySQL.
  async control(text: string, deadline?: number): Promise<void> {
    await this.#send(text, [], (done) => this.#connection.query(text, done), deadline);
  }

  // The result streamed (mysql2's row events, the socket paused while a batch waits to be read),
  // with the statement prepared as `run`'s are. A result is sent whole before the connection
  // takes another statement: ended early inside a transaction, its rest is read and dropped;
  // outside one the connection is closed instead (the pool opens another), which is quicker
  // than reading a million rows to throw them away.
  cursor(
    text: string,
    params: readonly unknown[],
    alone: boolean,
    deadline?: number,
  ): Promise<RowCursor> {
    try {
      this.#check(text, params);
    } catch (error) {
      return Promise.reject(error);
    }
    const connection = this.#connection;
    const pool = this.#pool;
    const command = connection.execute(text, params.map(bindable) as mysql.ExecuteValues);
    this.#streaming = true;
    return Promise.resolve(
      new MysqlRows(command, pool, connection, text, deadline, {
        failed: (error) => {
          const broken = connectionLost(error) || pool.lostError(connection) !== undefined;
          if (broken) this.#broken = true;
          return pool.statementError(error, text, broken, params);
        },
        finished: () => this.#streaming = false,
        unanswered: () => {
          this.#broken = true;
          this.#unanswered ??= new Error("the database did not answer a statement in time");
          pool.endSession(connection);
        },
        // Outside a transaction, a result ended early closes the connection: see `cursor`.
        left: alone ? () => this.#broken = true : undefined,
      }),
    );
  }

  // A connection given back, lost, or busy with a stream, takes no statement.
  #check(text: string, params: readonly unknown[]): void {
    if (this.#released) throw this.#pool.usedAfterRelease();
    const lost = this.#unanswered ?? this.#pool.lostError(this.#connection);
    if (lost !== undefined) {
      this.#broken = true;
      throw this.#pool.statementError(lost, text, true, params);
    }
    if (this.#streaming) {
      throw this.#pool.refused(
        text,
        "not run: a stream's rows are still being read on the transaction's connection, and " +
          "MariaDB and MySQL send a result whole before the next statement: read the stream to " +
          "its end, or leave its loop, first",
      );
    }
  }

  async #send(
    text: string,
    params: readonly unknown[],
    send: (done: (error: Error | null, rows: unknown) => void) => void,
    deadline?: number,
    timeout?: QueryTimeout,
    bound: StatementBound = statementBound(this.#pool.statementTimeoutMs, deadline),
  ): Promise<StatementResult> {
    this.#check(text, params);
    let result: unknown;
    try {
      // Unanswered in time: the connection is destroyed as it is released. One promise for
      // the statement and its watch, not one each.
      const watch = this.#pool.watch;
      result = await new Promise<unknown>((resolve, reject) => {
        const entry = watch.start(text, bound, this.#late, reject);
        try {
          send((error, rows) => {
            if (!watch.end(entry)) return;
            if (error) reject(error);
            else resolve(rows);
          });
        } catch (error) {
          watch.end(entry);
          reject(error);
        }
      });
    } catch (error) {
      if (error instanceof DataError) throw error;
      const e = error as MysqlError;
      const broken = connectionLost(e) || this.#pool.lostError(this.#connection) !== undefined;
      if (broken) this.#broken = true;
      throw this.#pool.statementError(e, text, broken, params, timeout);
    }
    if (Array.isArray(result)) return { rows: result, rowsAffected: 0 };
    const header = result as mysql.ResultSetHeader;
    return {
      rows: [],
      rowsAffected: header.affectedRows,
      // 0 is "no key made": a table without AUTO_INCREMENT, an UPDATE.
      ...(header.insertId ? { lastInsertId: header.insertId } : {}),
    };
  }

  readonly #late = (): void => {
    this.#broken = true;
    this.#unanswered ??= new Error("the database did not answer a statement in time");
    this.#pool.endSession(this.#connection);
  };

  release(broken = false): void {
    if (this.#released) return;
    this.#released = true;
    // Given back in the middle of a result (a stream left unclosed): the rest would come before
    // the next user's answer, or never, its socket paused. Closed instead.
    if (broken || this.#broken || this.#streaming) this.#connection.destroy();
    else this.#connection.release();
    this.#pool.held.give();
  }
}

// The connection is gone rather than the statement refused: mysql2 marks socket failures
// fatal; the server's own word that it ended the session (KILL, a shutdown) comes before the
// socket closes, as the statement's error.
const LOST_CODES = new Set([
  "ER_CONNECTION_KILLED",
  "ER_SERVER_SHUTDOWN",
  "ER_NORMAL_SHUTDOWN",
  "PROTOCOL_CONNECTION_LOST",
  "ECONNRESET",
  "EPIPE",
]);

function connectionLost(error: MysqlError): boolean {
  return error.fatal === true || LOST_CODES.has(error.code ?? "");
}

// `execute` refuses undefined (NULL is meant) and sends a boolean as text: 1 and 0 are what a
// TINYINT(1) column holds. It sends a Buffer's bytes, but reads any other view as an array of
// numbers each cut to a byte (an Int32Array's 256 is 0, a DataView no bytes): a view's bytes go
// as a Buffer, as pg and SQLite bind them. It sends an array, a plain object and one with
// `toJSON` as JSON, and fails on other objects (one without a prototype, a class's): those go
// as their JSON, as pg binds them.
function bindable(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  if (ArrayBuffer.isView(value)) {
    return Buffer.isBuffer(value)
      ? value
      : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  if (
    Object.getPrototypeOf(value) === Object.prototype || value instanceof Date ||
    value instanceof ArrayBuffer || typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    return value;
  }
  return JSON.stringify(value);
}

// What a streamed result tells the connection it runs on.
interface RowsOwner {
  /** The statement failed: the error to throw, the connection marked broken where it is. */
  failed(error: MysqlError): DataError;
  /** The result ended, whole or with an error: the connection takes statements again. */
  finished(): void;
  /** A batch was not answered in time: the connection is ended. */
  unanswered(): void;
  /** Closed early where the rest is not read but the connection closed; undefined: read it. */
  readonly left: (() => void) | undefined;
}

// A streamed result: mysql2's row events kept in batches, the socket paused while a full batch
// waits to be read.
class MysqlRows implements RowCursor {
  readonly #pool: MysqlPool;
  readonly #connection: mysql.PoolConnection;
  readonly #text: string;
  readonly #deadline: number | undefined;
  readonly #owner: RowsOwner;
  #buffered: Record<string, unknown>[] = [];
  #paused = false;
  #ended = false;
  #closed = false;
  #failure: DataError | undefined;
  #wake: (() => void) | undefined;
  // Rows count from a result set's columns on: a write's OK packet comes as a 'result' too,
  // after `fields` of nothing (so does the OK that ends a CALL's result sets).
  #columns = false;

  constructor(
    command: mysql.Query,
    pool: MysqlPool,
    connection: mysql.PoolConnection,
    text: string,
    deadline: number | undefined,
    owner: RowsOwner,
  ) {
    this.#pool = pool;
    this.#connection = connection;
    this.#text = text;
    this.#deadline = deadline;
    this.#owner = owner;
    command.on("fields", (fields: unknown) => this.#columns = fields !== undefined);
    command.on("result", (row: Record<string, unknown>) => this.#row(row));
    command.on("error", this.#failed);
    command.on("end", () => this.#finished());
    // A connection that dies under a streamed result (KILL, the socket closed) tells only the
    // connection, not a command without a callback: unheard, the loop would wait out its bound.
    connection.on("error", this.#failed);
  }

  readonly #failed = (error: MysqlError): void => {
    if (this.#ended) return;
    this.#failure ??= this.#owner.failed(error);
    this.#finished();
  };

  async next(bound?: number): Promise<Record<string, unknown>[]> {
    if (this.#buffered.length === 0 && !this.#ended && !this.#closed) {
      await this.#arrived(bound ?? this.#deadline);
    }
    if (this.#buffered.length > 0) {
      const rows = this.#buffered;
      this.#buffered = [];
      this.#resume();
      return rows;
    }
    if (this.#failure !== undefined) throw this.#failure;
    return [];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffered = [];
    if (this.#ended) return;
    if (this.#owner.left !== undefined) {
      this.#owner.left();
      return;
    }
    this.#resume();
    if (!this.#ended) await this.#arrived(this.#deadline);
    if (this.#failure !== undefined) throw this.#failure;
  }

  #row(row: Record<string, unknown>): void {
    if (!this.#columns || this.#closed) return;
    this.#buffered.push(row);
    if (this.#buffered.length >= STREAM_BATCH_ROWS && !this.#paused) {
      this.#paused = true;
      this.#connection.pause();
    }
    this.#woken();
  }

  #resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#connection.resume();
  }

  #finished(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#connection.removeListener("error", this.#failed);
    this.#owner.finished();
    this.#woken();
  }

  #woken(): void {
    const waiting = this.#wake;
    this.#wake = undefined;
    waiting?.();
  }

  #arrived(bound: number | undefined): Promise<void> {
    const pool = this.#pool;
    return pool.watch.within(
      this.#text,
      statementBound(pool.statementTimeoutMs, bound),
      new Promise<void>((resolve) => this.#wake = resolve),
      () => this.#owner.unanswered(),
    );
  }
}
