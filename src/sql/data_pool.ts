// The one narrow interface each database's driver implements for data access (as the migration
// runner's SqlDatabase is for migrations): a pool of connections, each used by one caller at a
// time. SqlClient and the transactions are written against it alone.
import type { DatabaseKind, Datasource } from "./datasource.ts";
import type { MigrationSession, ResolvedPoolSettings } from "./pool_settings.ts";

/** What one statement gives back. */
export interface StatementResult {
  /** The rows, as the driver gives each column's value (documented per database). */
  readonly rows: readonly Record<string, unknown>[];
  /** Rows written by an INSERT, UPDATE or DELETE; 0 for a read. */
  readonly rowsAffected: number;
  /** The key the database gave the last row inserted, where it says (SQLite, MySQL). */
  readonly lastInsertId?: number | bigint;
}

/**
 * The rows of one statement, read a batch at a time (`SqlClient.stream`): a PostgreSQL cursor,
 * MariaDB's streamed result (the socket paused between batches), SQLite's statement iterator.
 */
export interface RowCursor {
  /**
   * The next rows, at most a batch of them; none once the statement gave them all. `deadline` as
   * for {@linkcode DataConnection.run}: each batch's wait for the database is bounded as a
   * statement is, not the whole iteration.
   */
  next(deadline?: number): Promise<readonly Record<string, unknown>[]>;
  /**
   * Ends the statement, read to its end or not, and leaves the connection ready for the next
   * statement; rejects when it could not (the connection is then released broken). Twice is once.
   */
  close(): Promise<void>;
}

/**
 * The rows a cursor reads at a time: memory stays bounded by a batch whatever the row count, and
 * a round trip (PostgreSQL's FETCH) is spread over enough rows to cost little each.
 */
export const STREAM_BATCH_ROWS = 1000;

/** One connection out of a pool, held by one caller until it is released. */
export interface DataConnection {
  /**
   * Runs one statement, `params` bound to its placeholders in order. `deadline`
   * (`performance.now()`'s clock): its transaction's timeout, which bounds the wait for the
   * answer in place of the pool's `statement-timeout`. `queryTimeoutMs`: how long the database
   * lets it run (`withTimeout`), in place of the pool's `query-timeout`.
   */
  run(
    text: string,
    params: readonly unknown[],
    deadline?: number,
    queryTimeoutMs?: number,
  ): Promise<StatementResult>;
  /**
   * Runs a statement of transaction control (`BEGIN`, `SAVEPOINT x`, `COMMIT`), which MySQL does
   * not take as a prepared statement: fails as `run` does. `deadline` as for `run` (`BEGIN`'s and a
   * savepoint's; the pool's `statement-timeout` bounds `COMMIT` and `ROLLBACK`).
   */
  control(text: string, deadline?: number): Promise<void>;
  /**
   * Starts `text` for its rows to be read a batch at a time; fails as `run` does. `alone`: the
   * connection is in no transaction, held for this statement alone (PostgreSQL's cursor then
   * lives in a read-only transaction of its own, ended by `close`).
   */
  cursor(
    text: string,
    params: readonly unknown[],
    alone: boolean,
    deadline?: number,
  ): Promise<RowCursor>;
  /**
   * Gives the connection back to its pool; `broken`: it failed so that it must not be used again
   * (its socket died, it was killed), and the pool replaces it.
   */
  release(broken?: boolean): void;
}

/** A datasource's pool of connections. */
export interface DataPool {
  /** The datasource's name in the configuration. */
  readonly name: string;
  readonly kind: DatabaseKind;
  /**
   * A connection of its own for the caller; rejects, naming the datasource, when none is free
   * within the pool's acquire timeout. Nothing waits for ever.
   */
  acquire(): Promise<DataConnection>;
  /** The most connections it opens at once (`max-size`; 1 for SQLite's `:memory:`). */
  readonly maxSize: number;
  /** Connections open and free now, for the pool's metrics. */
  idleCount(): number;
  /**
   * The driver's own pool (`pg.Pool`, mysql2's `Pool`; for SQLite, the pool of handles itself), for
   * what the client lacks. PostgreSQL's is made on first use, its connections apart from the pool's.
   */
  readonly native: unknown;
  /** Closes every connection; waits for those held to be released. */
  close(): Promise<void>;
}

/**
 * How a database's pool opens; `migration`: its connections are the migration runner's. Nothing
 * connects before the first call.
 */
export type PoolOpener = (
  datasource: Datasource,
  settings: ResolvedPoolSettings,
  migration?: MigrationSession,
) => DataPool;
