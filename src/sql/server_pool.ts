// What the pools of the two server databases (PostgreSQL, MySQL/MariaDB) share: the datasource's
// bounds, the sessions being ended on the server, and a driver's error made a DataError. What
// differs (which code is a conflict, which one the database's own query timeout) is the
// dialect's and the subclass's.
import { composeMasks, maskUrls, secretsMask } from "../config/secrets_mask.ts";
import type { Datasource } from "./datasource.ts";
import { DataError } from "./data_error.ts";
import type { ResolvedPoolSettings } from "./pool_settings.ts";
import type { SqlDialect } from "./sql_dialect.ts";
import { StatementWatch } from "./statement_bound.ts";
import { type QueryTimeout, timeoutError } from "./query_timeout.ts";

/** A driver's error: its code, where it gave one. */
export interface DriverError extends Error {
  code?: string | undefined;
}

/** A server database's pool: its settings, its closing, and its errors as `DataError`s. */
export abstract class ServerPool<E extends DriverError> {
  readonly name: string;
  readonly maxSize: number;
  readonly statementTimeoutMs: number;
  /** `query-timeout`, in whole milliseconds; none where unset. */
  readonly queryTimeoutMs: number | undefined;
  readonly watch: StatementWatch;
  protected readonly acquireTimeoutMs: number;
  protected readonly connectTimeoutMs: number;
  /** Hides the datasource's password and any URL's credentials in a message. */
  protected readonly mask: (text: string) => string;
  /** Sessions of statements cut by their bound, being ended on the server; `close` waits. */
  readonly #ending = new Set<Promise<void>>();
  #closed = false;

  constructor(datasource: Datasource, s: ResolvedPoolSettings) {
    this.name = datasource.name;
    this.maxSize = s.maxSize;
    this.statementTimeoutMs = s.statementTimeoutMs;
    this.queryTimeoutMs = s.queryTimeoutMs === undefined ? undefined : Math.ceil(s.queryTimeoutMs);
    this.watch = new StatementWatch(datasource.name);
    this.acquireTimeoutMs = s.acquireTimeoutMs;
    this.connectTimeoutMs = s.connectTimeoutMs;
    this.mask = composeMasks(maskUrls, secretsMask([datasource.password]));
  }

  /** Whether `close` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The database's rules, for which of its codes is a conflict. */
  protected abstract readonly dialect: SqlDialect;

  /** The driver's message of `error`, with the statement's values and any secret hidden. */
  abstract describe(error: E, params?: readonly unknown[]): string;

  /** The code that says the database stopped a statement at its query timeout, if `error` is it. */
  protected abstract timedOut(error: E): string | undefined;

  /** Closes the driver's connections, waiting for those held. */
  protected abstract closeConnections(): Promise<void>;

  /** Closes every connection, once; waits for those held and for the sessions being ended. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.closeConnections();
    await Promise.all(this.#ending);
  }

  /** Keeps `ending` (a session being ended on the server) for `close` to wait on. */
  protected ending(ending: Promise<void>): void {
    const kept: Promise<void> = ending.catch(() => {}).finally(() => this.#ending.delete(kept));
    this.#ending.add(kept);
  }

  /**
   * The driver's error as a DataError naming the datasource and the statement; not as its cause,
   * which a logger prints, values and all. `lost`: the connection died with it.
   */
  statementError(
    error: E,
    text: string,
    lost: boolean,
    params: readonly unknown[],
    timeout?: QueryTimeout,
  ): DataError {
    if (timeout !== undefined && !lost) {
      const code = this.timedOut(error);
      if (code !== undefined) return timeoutError(this.name, text, code, timeout);
    }
    return new DataError({
      datasource: this.name,
      reason: lost ? "connection" : this.dialect.isConflict(error.code) ? "conflict" : "statement",
      statement: text,
      message: lost
        ? `the connection was lost (${this.describe(error, params)}); the next call gets another`
        : this.describe(error, params),
      ...(error.code === undefined ? {} : { code: error.code }),
    });
  }

  /** The error of a connection not made, the driver's as its cause (it names no value). */
  connectError(error: E): DataError {
    return new DataError({
      datasource: this.name,
      reason: "connect",
      message: `cannot connect: ${this.describe(error)}`,
    }, { cause: error });
  }

  /**
   * A connection's use after its caller gave it back: refused before it reaches the session of
   * whoever has the connection now (inside their transaction).
   */
  usedAfterRelease(): Error {
    return new Error(
      `a released ${this.dialect.name} connection was used (datasource "${this.name}")`,
    );
  }

  /** A statement refused as its transaction stands (`reason: "transaction"`), with why. */
  refused(text: string, message: string): DataError {
    return new DataError({
      datasource: this.name,
      reason: "transaction",
      statement: text,
      message,
    });
  }
}
