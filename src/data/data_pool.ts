// The one narrow interface each database's driver implements for data access (as the migration
// runner's SqlDatabase is for migrations): a pool of connections, each used by one caller at a
// time. SqlClient and the transactions are written against it alone.
import type { DatabaseKind } from "../migrate/sql/datasource.ts";

/** What one statement gives back. */
export interface StatementResult {
  /** The rows, as the driver gives each column's value (documented per database). */
  readonly rows: readonly Record<string, unknown>[];
  /** Rows written by an INSERT, UPDATE or DELETE; 0 for a read. */
  readonly rowsAffected: number;
  /** The key the database gave the last row inserted, where it says (SQLite, MySQL). */
  readonly lastInsertId?: number | bigint;
}

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
  /** The driver's own pool (`pg.Pool`, mysql2's `Pool`; for SQLite, the pool of handles itself), for what the client lacks. */
  readonly native: unknown;
  /** Closes every connection; waits for those held to be released. */
  close(): Promise<void>;
}
