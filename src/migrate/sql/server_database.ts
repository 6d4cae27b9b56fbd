import { composeMasks, maskUrl, maskUrls, secretsMask } from "../../config/secrets_mask.ts";
import type { FileRecord } from "../driver.ts";
import type { DatabaseKind, Datasource } from "../../sql/datasource.ts";
import type { DataPool } from "../../sql/data_pool.ts";
import { openPool } from "../../sql/open_pool.ts";
import type { MigrationSession, PoolSettings } from "../../sql/pool_settings.ts";
import {
  addRunnerVersion,
  DatabaseError,
  fileRecords,
  type LockHolder,
  type LockWait,
  pollServerLock,
  QueryError,
  type RecordRow,
  recordRow,
  runOnSession,
  runSteps,
  type SqlBody,
  type SqlDatabase,
  type SqlRecord,
  type SqlSession,
} from "./sql_database.ts";

/**
 * The pool a server database takes its one connection from, held from the first query to
 * `close`: connecting may take 10 s. Its statements go to the driver's connection itself, bound
 * by none of the pool's timeouts: a migration runs as long as it needs.
 */
const RUNNER_POOL: PoolSettings = { maxSize: 1, connectTimeoutMs: 10_000 };

/** A lock on the server (an advisory lock, `GET_LOCK`), held by the runner's session. */
export interface ServerLock {
  /** Takes it without waiting; whether it was free. */
  attempt(): Promise<boolean>;
  /** Who holds it, as the server tells it. */
  holder(): Promise<LockHolder>;
  release(): Promise<void>;
}

/**
 * What PostgreSQL and MySQL/MariaDB share as the runner's databases: one connection of the
 * datasource's pool, taken at the first query and held to `close`; the run's lock on the server,
 * polled; the records table made under it. Each database says its SQL, its lock, and how it runs
 * a script (`C`: its driver's connection, which runs a file's statements in one query).
 */
export abstract class ServerDatabase<C> implements SqlDatabase {
  abstract readonly kind: DatabaseKind;
  /**
   * PostgreSQL: a file's steps and its record commit together, in one transaction. MySQL and
   * MariaDB commit DDL implicitly: no transaction, and a failing file keeps what ran before.
   */
  abstract readonly transactionalDdl: boolean;
  queries = 0;
  protected readonly datasource: Datasource;
  readonly #lockOption: string;
  readonly #session: MigrationSession;
  #pool: DataPool | undefined;
  #connection: C | undefined;
  #lock: ServerLock | undefined;

  /** `lockOption`: how the caller names the lock timeout, for the message of a lock not taken. */
  constructor(datasource: Datasource, lockOption: string, session: MigrationSession) {
    this.datasource = datasource;
    this.#lockOption = lockOption;
    this.#session = session;
  }

  /** `table`'s name quoted, as CREATE TABLE names it. */
  protected abstract quoted(table: string): string;
  protected abstract tableExists(table: string): Promise<boolean>;
  /** The records table's `CREATE TABLE IF NOT EXISTS`. */
  protected abstract createTable(table: string): string;
  protected abstract hasVersionColumn(table: string): Promise<boolean>;
  /** The `ALTER TABLE` that adds the `runner_version` column. */
  protected abstract addVersionColumn(table: string): string;
  /** The run's lock of `table`. */
  protected abstract serverLock(table: string): Promise<ServerLock>;
  /** A connection of `pool`'s driver, set up; rejects with the driver's error. */
  protected abstract take(pool: DataPool): Promise<C>;
  /** Ends `connection`, before its pool closes. */
  protected abstract end(connection: C): Promise<void>;
  /** Runs one statement on `connection`; its rows. Rejects with the driver's error. */
  protected abstract send<R>(connection: C, text: string, values?: unknown[]): Promise<R[]>;
  /** The driver's error as text: its message, and the database's code where it gives one. */
  protected abstract message(error: unknown): string;
  protected abstract runScript(connection: C, text: string, step: number): Promise<void>;
  /**
   * Writes `row` in one statement, replacing the path's record where there is one: its
   * `execution_ms` too where the file `ran`, else that stays what the run measured.
   */
  protected abstract writeRecord(table: string, row: RecordRow, ran: boolean): Promise<void>;
  abstract deleteRecord(table: string, path: string): Promise<boolean>;

  async readRecords(table: string): Promise<Map<string, FileRecord>> {
    if (!await this.tableExists(table)) return new Map();
    return fileRecords(
      await this.query<Record<string, unknown>>(`SELECT * FROM ${this.quoted(table)}`),
    );
  }

  async lock(table: string, { timeoutMs, onWait, signal }: LockWait): Promise<void> {
    const lock = await this.serverLock(table);
    await pollServerLock(() => lock.attempt(), () => lock.holder(), {
      datasource: this.datasource.name,
      timeoutMs,
      option: this.#lockOption,
      onWait,
      signal,
    });
    this.#lock = lock;
    // Looked for first: CREATE TABLE IF NOT EXISTS needs the right to create even where the
    // table is there, which a deploy user that only writes rows lacks (PostgreSQL 15 grants it to
    // none on the public schema).
    if (!await this.tableExists(table)) await this.query(this.createTable(table));
    // A table an earlier version made lacks the column. Looked for first: ALTER TABLE locks the
    // table, and needs its owner (PostgreSQL) or the ALTER privilege, even where it then changes
    // nothing; MySQL has no ADD COLUMN IF NOT EXISTS (MariaDB has).
    if (!await this.hasVersionColumn(table)) {
      await addRunnerVersion(table, this.addVersionColumn(table), (sql) => this.query(sql));
    }
  }

  async unlock(): Promise<void> {
    if (this.#lock === undefined) return;
    await this.#lock.release();
    this.#lock = undefined;
  }

  async runFile(
    table: string,
    steps: readonly SqlBody[],
    record: SqlRecord | undefined,
    _once?: boolean,
    undoRecords: readonly string[] = [],
  ): Promise<number> {
    const connection = await this.connect();
    const transaction = this.transactionalDdl;
    if (transaction) await this.query("BEGIN");
    try {
      await runSteps(
        steps,
        (text, step) => this.runScript(connection, text, step),
        (code, step) => this.runCode(connection, code, step),
      );
      let ms = 0;
      if (record !== undefined) {
        // A version applied again loses its undo records: in its transaction, or, without one,
        // first, right after its steps ran. Its own record is there already, kept as history: a
        // run stopped in between reads it applied, as it is, never undone, to be applied twice.
        for (const undone of undoRecords) await this.deleteRecord(table, undone);
        const row = recordRow(record, true);
        await this.writeRecord(table, row, true);
        ms = row[4];
      }
      if (transaction) await this.query("COMMIT");
      return ms;
    } catch (error) {
      if (transaction) await this.query("ROLLBACK").catch(() => {});
      throw error;
    }
  }

  async putRecord(table: string, record: SqlRecord): Promise<void> {
    await this.writeRecord(table, recordRow(record, false), false);
  }

  /**
   * Runs `code` with the file's connection as its session: a query's failure is a
   * {@linkcode QueryError} with the driver's message and code, for the code to read.
   */
  protected async runCode(
    connection: C,
    code: (session: SqlSession) => Promise<void>,
    step: number,
  ): Promise<void> {
    const session: SqlSession = {
      query: async (text, params) => {
        this.queries++;
        try {
          const rows = await this.send<Record<string, unknown>>(
            connection,
            text,
            params as unknown[] | undefined,
          );
          // MySQL answers a statement without rows with a result header in place of rows.
          return Array.isArray(rows) ? rows : [];
        } catch (error) {
          const driverCode = (error as { code?: string }).code;
          throw new QueryError(this.describe(error), driverCode, { cause: error });
        }
      },
    };
    await runOnSession(code, session, step);
  }

  async close(): Promise<void> {
    const [connection, pool] = [this.#connection, this.#pool];
    [this.#connection, this.#pool] = [undefined, undefined];
    if (connection !== undefined) await this.end(connection);
    await pool?.close().catch(() => {});
  }

  /**
   * The run's connection: the pool's driver connection itself, its statements bound by none of
   * the pool's timeouts (a migration runs as long as it needs).
   */
  protected async connect(): Promise<C> {
    if (this.#connection !== undefined) return this.#connection;
    const d = this.datasource;
    this.#pool ??= await openPool(d, RUNNER_POOL, this.#session);
    try {
      this.#connection = await this.take(this.#pool);
    } catch (error) {
      // The driver's text may quote the connection settings: masked, the password too.
      throw new DatabaseError(
        `cannot connect to ${maskUrl(d.location)}: ${this.describe(error, [d.password])}`,
        { cause: error },
      );
    }
    return this.#connection;
  }

  /** The driver's error for a message, with any URL credentials and the given secrets masked. */
  protected describe(error: unknown, secrets: readonly (string | undefined)[] = []): string {
    return composeMasks(maskUrls, secretsMask(secrets))(this.message(error));
  }

  /** Runs one of the runner's own statements; its rows. */
  protected async query<R>(text: string, values?: unknown[]): Promise<R[]> {
    const connection = await this.connect();
    this.queries++;
    try {
      return await this.send<R>(connection, text, values);
    } catch (error) {
      throw new DatabaseError(this.describe(error), { cause: error });
    }
  }
}
