// Queries as tagged templates on a datasource's pool. Inside a transaction of the pool (bound
// to the async call by transaction_scope), a call runs on the transaction's connection and
// leaves it held; outside, it takes a connection for the one statement.
import type { DatabaseKind } from "../migrate/sql/datasource.ts";
import type { DataConnection, DataPool, StatementResult } from "./data_pool.ts";
import { checkBindable } from "./bindable_values.ts";
import { DataError } from "./data_error.ts";
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
import { checkIsolation } from "./transaction_dialect.ts";
import type { TransactionStatus } from "./transaction_status.ts";
import { SQLITE_NO_TIMEOUT } from "./pool_settings.ts";

// Runs a @Transactional method's call on a client's pool, named as the method (the interceptor's
// way in: the pool is the client's own).
let runNamed: <T>(
  client: SqlClient,
  fn: () => Promise<T>,
  options: TransactionOptions,
  where: string,
) => Promise<T>;

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
  readonly #pool: DataPool;
  // The query timeout of this client's statements (withTimeout), in place of the pool's.
  #timeoutMs: number | undefined;

  /** A client on `pool`; it does not own it (closing is the pool's owner's). */
  constructor(pool: DataPool) {
    this.#pool = pool;
    this.name = pool.name;
    this.kind = pool.kind;
  }

  /** The driver's own pool (`pg.Pool`, mysql2's `Pool`, the SQLite pool), for what the client lacks. */
  get pool(): unknown {
    return this.#pool.native;
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
      return Promise.reject(new TypeError(`${where} takes a function, got ${String(fn)}`));
    }
    let checked: TransactionOptions;
    try {
      checked = checkTransactionOptions(options, where);
      checkIsolation(this.kind, this.name, checked.isolation, where);
    } catch (error) {
      return Promise.reject(error);
    }
    return inTransaction(this.#pool, checked, async (status) => await fn(status), "transaction()");
  }

  /**
   * This client with a query timeout of its own: each of its statements runs at most `ms`
   * milliseconds before the database stops it (PostgreSQL's `statement_timeout`, MariaDB's
   * `max_statement_time`; on MySQL the client ends it), and fails with `DataError` reason
   * `timeout`, the connection kept. It replaces the pool's `query-timeout`, and applies inside
   * a transaction as outside; the client it came from is left as it was. SQLite refuses it.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { DataError, SqlClient } from "@thaw/thaw/data";
   *
   * async function report(sql: SqlClient): Promise<string> {
   *   try {
   *     await sql.withTimeout(200).query`SELECT pg_sleep(${5})`;
   *     return "done";
   *   } catch (error) {
   *     if (error instanceof DataError && error.reason === "timeout") return "too slow";
   *     throw error;
   *   }
   * }
   * assert.equal(typeof report, "function");
   * ```
   */
  withTimeout(ms: number): SqlClient {
    const where = `datasource "${this.name}": withTimeout(ms)`;
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms <= 0) {
      throw new RangeError(
        `${where} takes a number of milliseconds above 0, got ${
          typeof ms === "string" ? JSON.stringify(ms) : String(ms)
        }`,
      );
    }
    if (this.kind === "sqlite") {
      throw new TypeError(`datasource "${this.name}": withTimeout() ${SQLITE_NO_TIMEOUT}`);
    }
    const client = new SqlClient(this.#pool);
    client.#timeoutMs = ms;
    return client;
  }

  static {
    runNamed = (client, fn, options, where) => inTransaction(client.#pool, options, fn, where);
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
    return renderSql(this.kind, strings, values);
  }

  #rowsError(text: string, count: number, expected: string): DataError {
    return new DataError({
      datasource: this.name,
      reason: "rows",
      statement: text,
      message: `expected ${expected} row, got ${count}`,
    });
  }

  async #run(text: string, params: readonly unknown[]): Promise<StatementResult> {
    checkBindable(this.kind, params, this.name, text);
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
  return runNamed(client, fn, options, where);
}
