// Queries as tagged templates on a datasource's pool. Inside a transaction of the pool (bound
// to the async call by transaction_scope), a call runs on the transaction's connection and
// leaves it held; outside, it takes a connection for the one statement.
import { readDuration } from "../config/duration.ts";
import type { DatabaseKind } from "../sql/datasource.ts";
import { checkIsolation, DIALECTS } from "../sql/dialects.ts";
import type { SqlDialect } from "../sql/sql_dialect.ts";
import type { DataConnection, DataPool, RowCursor, StatementResult } from "../sql/data_pool.ts";
import { checkBindable } from "./bindable_values.ts";
import { DataError, firstLine } from "../sql/data_error.ts";
import { tooManyParameters, valuesOf } from "./sql_values.ts";
import {
  fragment,
  identifier,
  isTemplate,
  join,
  type RenderedSql,
  renderSql,
  type SqlFragment,
  type SqlIdentifier,
  unreadEscape,
} from "./sql_template.ts";
import { currentConnection, currentTransaction } from "./transaction_scope.ts";
import { checkTransactionOptions, type TransactionOptions } from "./transaction_options.ts";
import { inTransaction } from "./transactions.ts";
import type { TransactionStatus } from "./transaction_status.ts";
import { SQLITE_NO_TIMEOUT } from "../sql/pool_settings.ts";
import { shownValue } from "../shown_value.ts";

// The key of the method that runs a @Transactional method's call on a client's pool, named as the
// method (the interceptor's way in): a symbol no other module holds, so that none reaches the pool.
const RUN_NAMED: unique symbol = Symbol("thaw.runNamed");

/** What `execute` gives back. */
export interface ExecuteResult {
  /** Rows the statement inserted, updated or deleted. */
  readonly rowsAffected: number;
  /** The key of the last row inserted, where the database says (SQLite, MySQL and MariaDB). */
  readonly lastInsertId?: number | bigint;
}

/** What `unsafe` gives back: the rows, and what `execute` gives. */
export interface StatementOutcome<T> extends ExecuteResult {
  /** Every row the statement gave (none for most writes). */
  readonly rows: T[];
}

/**
 * The data access of one datasource: every `${value}` of a query is a bound parameter;
 * identifiers and pieces of SQL go in only through {@linkcode SqlClient.identifier},
 * {@linkcode SqlClient.fragment} and {@linkcode SqlClient.join}.
 */
export class SqlClient {
  /** A table or column name, quoted: `` query`SELECT * FROM ${SqlClient.identifier(table)}` ``. */
  static readonly identifier: (name: string, ...more: string[]) => SqlIdentifier = identifier;
  /** A piece of SQL whose values stay bound: `` SqlClient.fragment`AND id = ${id}` ``. */
  static readonly fragment: (
    strings: TemplateStringsArray,
    ...values: unknown[]
  ) => SqlFragment = fragment;
  /** Fragments with a separator between them (a comma by default). */
  static readonly join: (
    items: readonly (SqlFragment | SqlIdentifier)[],
    separator?: SqlFragment,
  ) => SqlFragment = join;

  /**
   * Rows as one `VALUES` list, `(…), (…)`, every value bound, for a tag:
   * `` sql.execute`INSERT INTO t (a, b) VALUES ${SqlClient.values(rows, "a", "b")}` ``. Each row is
   * an object; `columns` names the keys to take, in the column list's order (one at least). Refuses
   * what no database binds; the client's own {@linkcode SqlClient.prototype.values} knows its
   * database and refuses what that one does not bind, at its parameter limit.
   */
  static values(
    rows: readonly object[],
    ...columns: (string | readonly string[])[]
  ): SqlFragment {
    return valuesOf(rows, columns, "values()");
  }

  /**
   * What an injection of a `SqlClient` that no bean provides is told to do: the container says
   * it instead of advising to decorate the class.
   */
  static readonly "thaw.missing": string =
    "the datasources' SqlClient beans are made by data access: import { data } from " +
    '"@thaw/thaw/data" and pass bootstrap({ data: data() }), with a datasource in the ' +
    "configuration.";

  /** The datasource's name in the configuration. */
  readonly name: string;
  /** The database it speaks to: `sqlite`, `postgres` or `mysql` (MariaDB too). */
  readonly kind: DatabaseKind;
  readonly #dialect: SqlDialect;
  readonly #pool: DataPool;
  // The query timeout of this client's statements (withTimeout), in place of the pool's.
  #timeoutMs: number | undefined;

  /** A client on `pool`; it does not own it (closing is the pool's owner's). */
  constructor(pool: DataPool) {
    this.#pool = pool;
    this.name = pool.name;
    this.kind = pool.kind;
    this.#dialect = DIALECTS[pool.kind];
  }

  /** The driver's own pool (`pg.Pool`, mysql2's `Pool`, the SQLite pool), for what the client lacks. */
  get pool(): unknown {
    return this.#pool.native;
  }

  /**
   * Rows as one `VALUES` list, `(…), (…)`, every value a bound parameter:
   * `` sql.execute`INSERT INTO t (a, b) VALUES ${sql.values(rows, "a", "b")}` ``. Each row is an
   * object and `columns` names the keys to take, in the order of the statement's column list (one
   * at least: the rows' own key order need not be that one). A `TypeError` names the row and the
   * column of what cannot make the list (no rows, no column, a row that is not an object or lacks a
   * column, a value
   * this database does not bind); a `RangeError` says to split rows past the parameters the
   * database binds in one statement (65535 on PostgreSQL and MariaDB, 32766 on SQLite): the list
   * is one statement, never split.
   */
  values(rows: readonly object[], ...columns: (string | readonly string[])[]): SqlFragment {
    return valuesOf(rows, columns, `datasource "${this.name}": values()`, this.#dialect);
  }

  /** Every row of the statement. */
  async query<T = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: unknown[]
  ): Promise<T[]> {
    const { text, params } = this.#render("query", strings, values);
    return (await this.#run(text, params)).rows as T[];
  }

  /** The one row of the statement; fails when it gives none or several. */
  async one<T = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: unknown[]
  ): Promise<T> {
    const { text, params } = this.#render("one", strings, values);
    const { rows } = await this.#run(text, params);
    if (rows.length !== 1) throw this.#rowsError(text, rows.length, "exactly one");
    return rows[0] as T;
  }

  /** The row of the statement, or `undefined` when it gives none; fails when it gives several. */
  async maybeOne<T = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: unknown[]
  ): Promise<T | undefined> {
    const { text, params } = this.#render("maybeOne", strings, values);
    const { rows } = await this.#run(text, params);
    if (rows.length > 1) throw this.#rowsError(text, rows.length, "at most one");
    return rows[0] as T | undefined;
  }

  /** Runs a write: how many rows it changed, and the key of the last row inserted where known. */
  async execute(strings: TemplateStringsArray, ...values: unknown[]): Promise<ExecuteResult> {
    const { text, params } = this.#render("execute", strings, values);
    const { rowsAffected, lastInsertId } = await this.#run(text, params);
    return lastInsertId === undefined ? { rowsAffected } : { rowsAffected, lastInsertId };
  }

  /**
   * The rows of the statement one at a time, read from the database a batch at a time: memory
   * stays bounded whatever the row count (a PostgreSQL cursor, MariaDB's and MySQL's streamed
   * result, SQLite's statement iterator), but where the rows are read whole: SQLite on Deno
   * (whose iterator would hide a row's failure), and on PostgreSQL a statement a cursor does not
   * take (a write with `RETURNING`, run as `query` runs it). Nothing runs before the loop asks for
   * the first row; each loop runs the statement anew, the same stream looped twice too. Inside a
   * transaction of this datasource it reads on the transaction's connection, seeing its
   * uncommitted rows; otherwise it holds a connection of the pool until the loop ends. Leaving the
   * loop (`break`, `return`, a throw) closes the statement and frees the connection; a loop left
   * unfinished without leaving it (an iterator dropped half read) holds its connection for good.
   * A database error rejects the loop with a {@linkcode DataError}, as `query` does, and a
   * connection that dies under it (killed) at once, with reason `connection`. On PostgreSQL
   * outside a transaction the cursor lives in a read-only transaction of its own.
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
   * let total = 0;
   * for await (
   *   const { n } of sql.stream<{ n: number }>`
   *     WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ${5000})
   *     SELECT n FROM r`
   * ) {
   *   total += n;
   *   if (n === 4000) break; // closes the statement and frees the connection
   * }
   * assert.equal(total, 4000 * 4001 / 2);
   * assert.deepEqual(await sql.query`SELECT 1 AS one`, [{ one: 1 }]); // the one connection is free
   * await app.close();
   * ```
   */
  stream<T = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: unknown[]
  ): AsyncIterableIterator<T> {
    const { text, params } = this.#render("stream", strings, values);
    return new StatementRows(() => this.#rows<T>(text, params));
  }

  /**
   * {@linkcode SqlClient.stream} of `text` as it is written, `params` bound to its own
   * placeholders, as {@linkcode SqlClient.unsafe} is to `query`: for SQL another tool built (a
   * query builder's stream). Never build `text` from what a client sent.
   */
  unsafeStream<T = Record<string, unknown>>(
    text: string,
    params: readonly unknown[] = [],
  ): AsyncIterableIterator<T> {
    if (typeof text !== "string" || !Array.isArray(params)) {
      throw new TypeError(
        `datasource "${this.name}": unsafeStream(text, params) takes a string and an array`,
      );
    }
    return new StatementRows(() => this.#rows<T>(text, params));
  }

  /**
   * Runs `text` as it is written, `params` bound to its own placeholders (`$1` on PostgreSQL, `?`
   * on MySQL, MariaDB and SQLite): for SQL another tool built, such as a query builder's compiled
   * query. Inside a transaction of this datasource it runs on the transaction's connection, as
   * every call does. Never build `text` from what a client sent.
   */
  async unsafe<T = Record<string, unknown>>(
    text: string,
    params: readonly unknown[] = [],
  ): Promise<StatementOutcome<T>> {
    if (typeof text !== "string" || !Array.isArray(params)) {
      throw new TypeError(
        `datasource "${this.name}": unsafe(text, params) takes a string and an array`,
      );
    }
    const { rows, rowsAffected, lastInsertId } = await this.#run(text, params);
    return lastInsertId === undefined
      ? { rows: rows as T[], rowsAffected }
      : { rows: rows as T[], rowsAffected, lastInsertId };
  }

  /**
   * Runs `fn` in a transaction of this datasource, as `options` ask (`REQUIRED` by default: it
   * joins the one the call runs in, or begins one). Every call of this datasource's clients
   * inside `fn`, in any bean, runs on the transaction's connection; it commits when `fn`
   * resolves and rolls back when it rejects (as the rollback rules say), the rejection reaching
   * the caller. `fn` is given the call's {@linkcode TransactionStatus}: its `setRollbackOnly()`
   * rolls the transaction back at the end, `fn`'s value still coming back. A commit refused
   * because the transaction was marked for rollback rejects with an `UnexpectedRollbackError`.
   */
  transaction<T>(
    fn: (status: TransactionStatus) => T | Promise<T>,
    options?: TransactionOptions,
  ): Promise<T> {
    const where = `datasource "${this.name}": transaction()`;
    if (typeof fn !== "function") {
      return Promise.reject(new TypeError(`${where} takes a function, got ${shownValue(fn)}`));
    }
    let checked: TransactionOptions;
    try {
      checked = checkTransactionOptions(options, where);
      checkIsolation(this, checked.isolation, where);
    } catch (error) {
      return Promise.reject(error);
    }
    return inTransaction(this.#pool, checked, async (status) => await fn(status), "transaction()");
  }

  /**
   * This client with a query timeout of its own (milliseconds, or a duration such as `"2s"`): each
   * of its statements runs at most that long before the database stops it (PostgreSQL's `statement_timeout`, MariaDB's
   * `max_statement_time`; on MySQL the client ends it), and fails with `DataError` reason
   * `timeout`, the connection kept. It replaces the pool's `query-timeout`, and applies inside
   * a transaction as outside; the client it came from is left as it was. SQLite refuses it.
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
   * // On PostgreSQL or MariaDB, `await sql.withTimeout(200).query\`SELECT pg_sleep(${5})\`` fails
   * // with a DataError of reason "timeout". SQLite cannot stop a statement it runs, and says so:
   * assert.throws(() => sql.withTimeout(200), /withTimeout\(\) cannot be kept on SQLite/);
   * assert.throws(() => sql.withTimeout(0), RangeError);
   * await app.close();
   * ```
   */
  withTimeout(timeout: number | string): SqlClient {
    // Sent to the database, not a timer of the process: its own range decides past 2^31 - 1.
    const ms = readDuration(
      timeout,
      `datasource "${this.name}": withTimeout(timeout)`,
      { min: 1, max: Number.MAX_SAFE_INTEGER },
      RangeError,
    );
    if (!this.#dialect.stopsStatements) {
      throw new TypeError(`datasource "${this.name}": withTimeout() ${SQLITE_NO_TIMEOUT}`);
    }
    const client = new SqlClient(this.#pool);
    client.#timeoutMs = ms;
    return client;
  }

  /** Not part of the API: {@linkcode transactionNamed}'s way to the pool. */
  [RUN_NAMED]<T>(fn: () => Promise<T>, options: TransactionOptions, where: string): Promise<T> {
    return inTransaction(this.#pool, options, fn, where);
  }

  // A tag called with a string (`query("SELECT ...")`) is refused: it would run the string's
  // first character, and a `${value}` in a string is text of the statement, not a parameter.
  #render(method: string, strings: TemplateStringsArray, values: unknown[]): RenderedSql {
    if (!isTemplate(strings)) {
      throw new TypeError(
        `datasource "${this.name}": ${method}() is a tag: write sql.${method}\`SELECT ... ` +
          `\${value}\`, not sql.${method}("...") or sql.${method}(\`...\`), whose values would be ` +
          "text of the statement; for SQL another tool built, sql.unsafe(text, params)",
      );
    }
    const unread = unreadEscape(`datasource "${this.name}": ${method}()`, strings);
    if (unread !== undefined) throw unread;
    return renderSql(this.#dialect, strings, values);
  }

  #rowsError(text: string, count: number, expected: string): DataError {
    return new DataError({
      datasource: this.name,
      reason: "rows",
      statement: text,
      message: `expected ${expected} row, got ${count}`,
    });
  }

  // A generator: its body runs at the first next(), in the caller's transaction, and its finally
  // runs at a break, a return or a throw of the loop (for await calls return()).
  async *#rows<T>(text: string, params: readonly unknown[]): AsyncGenerator<T, void, undefined> {
    this.#checkParameters(text, params);
    const held = currentConnection(this.#pool);
    const deadline = held === undefined ? undefined : currentTransaction(this.#pool)?.deadline;
    const connection = held ?? await this.#pool.acquire();
    let cursor: RowCursor | undefined;
    let broken = false;
    try {
      cursor = await connection.cursor(text, params, held === undefined, deadline);
      for (;;) {
        const rows = await cursor.next(deadline);
        if (rows.length === 0) return;
        for (const row of rows) yield row as T;
      }
    } catch (error) {
      broken = error instanceof DataError && error.reason === "connection";
      throw error;
    } finally {
      // A statement that cannot be closed leaves the connection in a state nobody knows: closed.
      // Its error is not the caller's (the rows they read were read).
      if (cursor !== undefined) await cursor.close().catch(() => broken = true);
      if (held === undefined) connection.release(broken);
    }
  }

  // Values no database binds, and more of them than one statement takes (pg would send the
  // count cut to 16 bits): refused before any connection is taken.
  #checkParameters(text: string, params: readonly unknown[]): void {
    checkBindable(this.#dialect, params, this.name, text);
    if (params.length > this.#dialect.maxParameters) {
      throw tooManyParameters(
        this.#dialect,
        `datasource "${this.name}": ${firstLine(text)}`,
        `${params.length} parameters`,
      );
    }
  }

  async #run(text: string, params: readonly unknown[]): Promise<StatementResult> {
    this.#checkParameters(text, params);
    const held = currentConnection(this.#pool);
    // The transaction's timeout bounds its statements' wait for an answer too.
    if (held !== undefined) {
      return await held.run(
        text,
        params,
        currentTransaction(this.#pool)?.deadline,
        this.#timeoutMs,
      );
    }
    const connection: DataConnection = await this.#pool.acquire();
    let broken = false;
    try {
      return await connection.run(text, params, undefined, this.#timeoutMs);
    } catch (error) {
      broken = error instanceof DataError && error.reason === "connection";
      throw error;
    } finally {
      connection.release(broken);
    }
  }
}

// What `stream` gives: a statement, not one run of it. Each loop (each call of
// [Symbol.asyncIterator]) gets a run of its own, the statement sent anew, as a loop over a query's
// rows would send it again; a generator would end at once the second time, giving no row. Its own
// next(), return() and throw() read one run, made at the first of them, for a caller that steps
// it by hand.
class StatementRows<T> implements AsyncIterableIterator<T> {
  readonly #run: () => AsyncGenerator<T, void, undefined>;
  #own: AsyncGenerator<T, void, undefined> | undefined;

  constructor(run: () => AsyncGenerator<T, void, undefined>) {
    this.#run = run;
  }

  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return this.#run();
  }

  next(): Promise<IteratorResult<T, void>> {
    return (this.#own ??= this.#run()).next();
  }

  return(): Promise<IteratorResult<T, void>> {
    return (this.#own ??= this.#run()).return();
  }

  throw(error?: unknown): Promise<IteratorResult<T, void>> {
    return (this.#own ??= this.#run()).throw(error);
  }
}

/**
 * Runs `fn` as `sql.transaction` does, on `client`'s datasource, with `options` already checked,
 * its call named `where` (`Billing.charge()`) in errors and its status.
 */
export function transactionNamed<T>(
  client: SqlClient,
  fn: () => Promise<T>,
  options: TransactionOptions,
  where: string,
): Promise<T> {
  return client[RUN_NAMED](fn, options, where);
}
