import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { isMigrationError, MigrationError } from "../migration_error.ts";
import { pause } from "../interruption.ts";
import { LOCK_POLL_MS } from "../lock_poll.ts";
import type { Datasource } from "../../sql/datasource.ts";
import {
  CodeError,
  DatabaseError,
  fileRecords,
  type LockWait,
  QueryError,
  RECORD_COLUMNS,
  type RecordRow,
  recordRow,
  RUNNER_VERSION_COLUMN,
  runOnSession,
  RunRolledBack,
  runSteps,
  ScriptError,
  type SqlBody,
  type SqlDatabase,
  type SqlRecord,
  type SqlSession,
} from "./sql_database.ts";
import { statementStarts } from "./statement_locator.ts";
import type { FileRecord } from "../driver.ts";
import { type SqliteHandle, sqliteMessage, sqliteOpener } from "../../sql/sqlite_opener.ts";

/**
 * Opens a SQLite file with the runtime's built-in SQLite (the data pool's opener: `bun:sqlite` on
 * Bun, `node:sqlite` on Deno and Node 22.13+): no native package to install. Loaded on first use,
 * so the search runner still loads on a Node without it.
 */
async function openSqlite(path: string): Promise<SqliteHandle> {
  let open: (path: string) => SqliteHandle;
  try {
    open = await sqliteOpener();
  } catch (error) {
    throw new DatabaseError(sqliteMessage(error), { cause: error });
  }
  // Only now, so a runtime without SQLite leaves no folder behind.
  if (path !== ":memory:") await mkdir(dirname(path), { recursive: true });
  return open(path);
}

/**
 * SQLite through the runtime's built-in SQLite. There is no server to hold a lock for the run:
 * the run's lock is one `BEGIN IMMEDIATE` transaction (SQLite's write lock, waited for up to the
 * lock timeout), from `lock` to `unlock`, each file a savepoint of it that first checks the file
 * was not recorded meanwhile; a file rolls back with its record, and the run's files commit
 * together at `unlock`.
 */
export class SqliteDatabase implements SqlDatabase {
  readonly kind = "sqlite" as const;
  readonly transactionalDdl = true;
  queries = 0;
  readonly #datasource: Datasource;
  readonly #lockOption: string;
  #db: SqliteHandle | undefined;
  readonly #timeoutMs: number;
  /** The run's lock is held: its `BEGIN IMMEDIATE` transaction is open. */
  #held = false;

  /**
   * `lockTimeoutMs` bounds every wait for another process's write lock, from the first read on:
   * a runner reads the records before it locks, and a second runner committing meanwhile holds
   * the file's exclusive lock for a moment.
   */
  constructor(datasource: Datasource, lockTimeoutMs: number, lockOption: string) {
    this.#datasource = datasource;
    this.#timeoutMs = lockTimeoutMs;
    this.#lockOption = lockOption;
  }

  async readRecords(table: string): Promise<Map<string, FileRecord>> {
    // Reading must not create the file: status and --dry-run write nothing.
    if (this.#db === undefined && !await this.#exists()) return new Map();
    const db = await this.#open();
    const exists = this.#all(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [
      table,
    ]);
    if (exists.length === 0) return new Map();
    return fileRecords(this.#all(db, `SELECT * FROM "${table}"`, []));
  }

  // SQLite's lock is its write lock, held from here to unlock in one `BEGIN IMMEDIATE`
  // transaction: the records are read and the files decided and run under it, as PostgreSQL and
  // MariaDB hold theirs, so no other runner writes between this one's plan and its work. It ends
  // with the process: SQLite rolls back the transaction of a runner that died.
  async lock(table: string, { timeoutMs, onWait, signal }: LockWait): Promise<void> {
    const db = await this.#open();
    const holder = `another runner writing ${this.#datasource.location}`;
    await this.#begin(db, timeoutMs, () => onWait(holder), signal);
    this.#held = true;
    try {
      this.#exec(
        db,
        `CREATE TABLE IF NOT EXISTS "${table}" (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          migration_path TEXT NOT NULL UNIQUE,
          content_hash TEXT NOT NULL,
          executed_at TEXT NOT NULL,
          executed_by TEXT NOT NULL,
          execution_ms INTEGER NOT NULL,
          ${RUNNER_VERSION_COLUMN} TEXT
        )`,
      );
      // A table an earlier version made lacks the column (no other runner can add it meanwhile).
      if (!this.#hasVersionColumn(db, table)) {
        this.#exec(db, `ALTER TABLE "${table}" ADD COLUMN ${RUNNER_VERSION_COLUMN} TEXT`);
      }
    } catch (error) {
      this.#held = false;
      rollback(db);
      throw error;
    }
  }

  #hasVersionColumn(db: SqliteHandle, table: string): boolean {
    return this.#all(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", [
      table,
      RUNNER_VERSION_COLUMN,
    ]).length > 0;
  }

  // What ran under the lock commits together: the files before a failing one too, since each
  // file that failed was rolled back to its own savepoint.
  // A refused COMMIT (a reader kept past the lock timeout) loses the run's work: said so.
  unlock(): Promise<void> {
    if (!this.#held) return Promise.resolve();
    this.#held = false;
    const db = this.#db!;
    try {
      this.#exec(db, "COMMIT");
    } catch (error) {
      rollback(db);
      return Promise.reject(new RunRolledBack(error as Error));
    }
    return Promise.resolve();
  }

  async runFile(
    table: string,
    steps: readonly SqlBody[],
    record: SqlRecord | undefined,
    once: boolean,
    undoRecords: readonly string[] = [],
  ): Promise<number | undefined> {
    const db = await this.#open();
    // Under the run's lock, a file is a savepoint of its transaction; else (a validate callback)
    // a transaction of its own.
    const held = this.#held;
    const [start, end, undo] = held
      ? ["SAVEPOINT thaw_run_file", "RELEASE thaw_run_file", [
        "ROLLBACK TO thaw_run_file",
        "RELEASE thaw_run_file",
      ]]
      : ["BEGIN IMMEDIATE", "COMMIT", ["ROLLBACK"]];
    if (held) this.#exec(db, start);
    else await this.#begin(db, this.#timeoutMs);
    try {
      if (record === undefined) {
        await this.#runSteps(db, steps);
        this.#exec(db, end);
        return 0;
      }
      // Decided under the run's lock already; checked again here, in the file's own savepoint, so
      // that a file run outside it never runs over a record: a run-once file never runs over any
      // record, or it would run twice; a repeatable one runs over any but one of its checksum.
      const now = this.#all(
        db,
        `SELECT content_hash FROM "${table}" WHERE migration_path = ?`,
        [record.path],
      );
      const recorded = now.length === 0 ? undefined : String(now[0].content_hash);
      // A version undone is applied again while its undo records are left; its own record, kept
      // as history, says nothing of whether it is applied.
      const pending = (recorded !== record.hash && !(once && recorded !== undefined)) ||
        (undoRecords.length > 0 && this.#all(
              db,
              `SELECT 1 FROM "${table}" WHERE migration_path IN (${
                undoRecords.map(() => "?").join(", ")
              })`,
              undoRecords,
            ).length > 0);
      if (!pending) {
        this.#exec(db, end);
        return undefined;
      }
      await this.#runSteps(db, steps);
      const row = recordRow(record, true);
      this.#writeRecord(db, table, row, true);
      for (const undone of undoRecords) {
        this.#all(db, `DELETE FROM "${table}" WHERE migration_path = ?`, [undone]);
      }
      this.#exec(db, end);
      return row[4];
    } catch (error) {
      try {
        for (const statement of undo) db.exec(statement);
      } catch {
        // Some errors (a full disk, `INSERT OR ROLLBACK`) end the transaction themselves: under
        // the run's lock, the files before this one went with it.
        if (held) {
          this.#held = false;
          if (error instanceof ScriptError || error instanceof CodeError) {
            throw new RunRolledBack(error);
          }
        }
      }
      throw error;
    }
  }

  #runSteps(db: SqliteHandle, steps: readonly SqlBody[]): Promise<void> {
    return runSteps(
      steps,
      (text, step) => this.#runScript(db, text, step),
      (code, step) => this.#runCode(db, code, step),
    );
  }

  #runScript(db: SqliteHandle, text: string, step: number): void {
    this.#exec(db, "SAVEPOINT thaw_file");
    try {
      this.queries++;
      db.exec(text);
    } catch (error) {
      throw new ScriptError(sqliteMessage(error), {
        completed: this.#replay(db, text),
        step,
      }, { cause: error });
    }
    this.#exec(db, "RELEASE thaw_file");
  }

  // Inside the file's BEGIN IMMEDIATE: every other writer waits while the code runs, and its
  // rows commit or roll back with its record.
  async #runCode(
    db: SqliteHandle,
    code: (session: SqlSession) => Promise<void>,
    step: number,
  ): Promise<void> {
    const session: SqlSession = {
      query: (text, params = []) => {
        this.queries++;
        try {
          return Promise.resolve(db.run(text, params).rows as Record<string, unknown>[]);
        } catch (error) {
          // SQLite has no SQLSTATE; its message names the failure (`UNIQUE constraint failed`).
          return Promise.reject(new QueryError(sqliteMessage(error), undefined, { cause: error }));
        }
      },
    };
    await runOnSession(code, session, step);
  }

  async putRecord(table: string, record: SqlRecord): Promise<void> {
    // Under the run's lock, in its transaction.
    this.#writeRecord(await this.#open(), table, recordRow(record, false), false);
  }

  // The UNIQUE path makes a second row impossible: the path's record is replaced, its
  // execution_ms only by a run that measured one.
  #writeRecord(db: SqliteHandle, table: string, row: RecordRow, ran: boolean): void {
    const [path, hash, executedAt, executedBy, ms, version] = row;
    const measured = ran ? "execution_ms = excluded.execution_ms, " : "";
    this.#all(
      db,
      `INSERT INTO "${table}" (${RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (migration_path) DO UPDATE SET content_hash = excluded.content_hash,
          executed_at = excluded.executed_at, executed_by = excluded.executed_by,
          ${measured}runner_version = excluded.runner_version`,
      [path, hash, executedAt.toISOString(), executedBy, ms, version],
    );
  }

  async deleteRecord(table: string, path: string): Promise<boolean> {
    const db = await this.#open();
    // RETURNING: the handle gives rows, not the number of rows changed.
    return this.#all(db, `DELETE FROM "${table}" WHERE migration_path = ? RETURNING 1`, [path])
      .length > 0;
  }

  close(): Promise<void> {
    // A transaction still open at close is rolled back by SQLite.
    this.#held = false;
    this.#db?.close();
    this.#db = undefined;
    return Promise.resolve();
  }

  /**
   * `exec` does not say which statement failed. The file's effects are undone to the savepoint,
   * then its statements run one by one, still inside the transaction, until one fails: that
   * count locates the failure. Everything is rolled back afterwards, so nothing runs twice.
   */
  #replay(db: SqliteHandle, text: string): number | undefined {
    try {
      db.exec("ROLLBACK TO thaw_file");
      const statements = statementStarts(text, "sqlite");
      let completed: number | undefined;
      for (const [i, statement] of statements.entries()) {
        try {
          db.exec(statement.text);
        } catch {
          completed = i;
          break;
        }
      }
      db.exec("ROLLBACK TO thaw_file");
      return completed;
    } catch {
      return undefined;
    }
  }

  async #exists(): Promise<boolean> {
    const location = this.#datasource.location;
    if (location === ":memory:") return false;
    try {
      await stat(location);
      return true;
    } catch {
      return false;
    }
  }

  async #open(): Promise<SqliteHandle> {
    if (this.#db) return this.#db;
    let db: SqliteHandle;
    try {
      db = await openSqlite(this.#datasource.location);
    } catch (error) {
      if (error instanceof DatabaseError) throw error;
      throw new DatabaseError(
        `cannot open ${this.#datasource.location}: ${sqliteMessage(error)}`,
        { cause: error },
      );
    }
    // Before any statement: each one waits for a writer up to the lock timeout.
    this.#exec(db, `PRAGMA busy_timeout = ${Math.round(this.#timeoutMs)}`);
    this.#db = db;
    return db;
  }

  // SQLite's own busy wait sleeps in the thread: another run in this process (an app calling
  // migrate() twice) that holds the write lock across an `await` (a code step) could not go on
  // before the wait ended, at its timeout. The lock is asked for without that wait, and asked
  // again every LOCK_POLL_MS, the thread given back in between.
  async #begin(
    db: SqliteHandle,
    timeoutMs: number,
    onWait?: () => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    db.exec("PRAGMA busy_timeout = 0");
    try {
      for (let waited = false;; waited = true) {
        try {
          this.#exec(db, "BEGIN IMMEDIATE");
          return;
        } catch (error) {
          if (!isMigrationError(error, "lock") || Date.now() >= deadline) {
            throw isMigrationError(error, "lock") ? this.#lockError(timeoutMs) : error;
          }
        }
        this.queries--;
        if (!waited) onWait?.();
        await pause(
          Math.min(LOCK_POLL_MS, deadline - Date.now()),
          signal,
          "waiting for the write lock",
        );
      }
    } finally {
      db.exec(`PRAGMA busy_timeout = ${Math.round(this.#timeoutMs)}`);
    }
  }

  #exec(db: SqliteHandle, sql: string): void {
    this.queries++;
    try {
      db.exec(sql);
    } catch (error) {
      throw this.#error(error);
    }
  }

  #lockError(timeoutMs: number): MigrationError {
    return new MigrationError(
      "lock",
      `datasource "${this.#datasource.name}": another process kept ${this.#datasource.location} ` +
        `locked for writing; waited ${timeoutMs / 1000} s (${this.#lockOption})`,
    );
  }

  #all(
    db: SqliteHandle,
    sql: string,
    params: readonly (string | number)[],
  ): Record<string, unknown>[] {
    this.queries++;
    try {
      return db.run(sql, params).rows as Record<string, unknown>[];
    } catch (error) {
      throw this.#error(error);
    }
  }

  #error(error: unknown): Error {
    const text = sqliteMessage(error);
    if (/database is locked|SQLITE_BUSY/i.test(text)) return this.#lockError(this.#timeoutMs);
    return new DatabaseError(text, { cause: error });
  }
}

function rollback(db: SqliteHandle): void {
  try {
    db.exec("ROLLBACK");
  } catch {
    // Already ended by the error.
  }
}
