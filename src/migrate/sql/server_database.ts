import { maskUrl } from "../../config/secrets_mask.ts";
import type { FileRecord } from "../driver.ts";
import type { Datasource } from "../../sql/datasource.ts";
import type { DataPool } from "../../sql/data_pool.ts";
import { openPool } from "../../sql/open_pool.ts";
import type { MigrationSession, PoolSettings } from "../../sql/pool_settings.ts";
import {
  addRunnerVersion,
  DatabaseError,
  fileRecords,
  type LockHolder,
  pollServerLock,
  type SqlBody,
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
export abstract class ServerDatabase<C> {
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
  /** The driver's error for a message, with any URL credentials and the given secrets masked. */
  protected abstract describe(error: unknown, secrets?: readonly (string | undefined)[]): string;
  protected abstract runScript(connection: C, text: string, step: number): Promise<void>;
  protected abstract runCode(
    connection: C,
    code: (session: SqlSession) => Promise<void>,
    step: number,
  ): Promise<void>;

  async readRecords(table: string): Promise<Map<string, FileRecord>> {
    if (!await this.tableExists(table)) return new Map();
    return fileRecords(
      await this.query<Record<string, unknown>>(`SELECT * FROM ${this.quoted(table)}`),
    );
  }

  async lock(
    table: string,
    timeoutMs: number,
    onWait: (holder: string) => void,
    signal?: AbortSignal,
  ): Promise<void> {
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

  /** Runs `steps` in order on `connection`: a file's scripts and code, or a callback's. */
  protected async runSteps(connection: C, steps: readonly SqlBody[]): Promise<void> {
    for (const [step, body] of steps.entries()) {
      if ("script" in body) await this.runScript(connection, body.script, step);
      else await this.runCode(connection, body.code, step);
    }
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
