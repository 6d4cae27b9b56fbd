import type { FileRecord } from "../driver.ts";
import { pause } from "../interruption.ts";
import { LOCK_POLL_MS } from "../lock_poll.ts";
import { MigrationError } from "../migration_error.ts";
import type { DatabaseKind } from "../../sql/datasource.ts";
import { VERSION } from "../../version.ts";

/**
 * The record of a file: being applied (`execution_ms` is measured when it is inserted), or written
 * without running it ({@linkcode SqlDatabase.putRecord}, `execution_ms` 0).
 */
export interface SqlRecord {
  readonly path: string;
  readonly hash: string;
  readonly executedAt: Date;
  readonly executedBy: string;
}

/** A statement's parameters, as the database's driver takes them. */
export type SqlParams = readonly unknown[];

/** The file's connection, as a migration in code queries it: one statement at a time. */
export interface SqlSession {
  /** Runs `text` with `params`; its rows, none for a statement without rows. */
  query(text: string, params?: SqlParams): Promise<Record<string, unknown>[]>;
}

/**
 * Runs `code` on `session`, which answers only while `code` runs: a query its code did not await
 * would otherwise run after the file's transaction ended, outside it, or on the next file's.
 * Throws {@linkcode CodeError} with the code's own error, naming the step.
 */
export async function runOnSession(
  code: (session: SqlSession) => Promise<void>,
  session: SqlSession,
  step: number,
): Promise<void> {
  let open = true;
  try {
    await code({
      query: (text, params) =>
        open ? session.query(text, params) : Promise.reject(
          new Error("ctx.query was called after the migration returned: await every query"),
        ),
    });
  } catch (error) {
    throw new CodeError(error, step);
  } finally {
    open = false;
  }
}

/** What a file runs: its SQL text, or a migration in code, given the file's session. */
export type SqlBody =
  | { readonly script: string }
  | { readonly code: (session: SqlSession) => Promise<void> };

/**
 * A migration in code failed: its own error (thrown, or a query's that it did not catch) is the
 * cause, told apart from the runner's own errors (`DatabaseError`).
 */
export class CodeError extends Error {
  /** The failing step's index in what `runFile` ran. */
  readonly step: number;

  constructor(cause: unknown, step: number) {
    super("the migration's code failed", { cause });
    this.name = "CodeError";
    this.step = step;
  }
}

/**
 * The transaction that held the run's lock and work (SQLite) ended without committing: a step
 * failed ({@linkcode ScriptError} or {@linkcode CodeError}, the `cause`) in a way that ended it
 * (`INSERT OR ROLLBACK`, `RAISE(ROLLBACK)`, a full disk), or its `COMMIT` was refused (the
 * `cause`). What the run did before is rolled back with it.
 */
export class RunRolledBack extends Error {
  override readonly cause: Error;

  constructor(cause: Error) {
    super(cause.message, { cause });
    this.name = "RunRolledBack";
    this.cause = cause;
  }
}

/** A query of a migration in code failed: the database's message and code, for its code to read. */
export class QueryError extends Error {
  /** The database's own code: SQLSTATE, or MySQL's error name. */
  readonly code: string | undefined;

  constructor(message: string, code: string | undefined, options?: ErrorOptions) {
    super(message, options);
    this.name = "QueryError";
    this.code = code;
  }
}

/** The records table's columns, in the order of {@linkcode recordRow}. */
export const RECORD_COLUMNS =
  "migration_path, content_hash, executed_at, executed_by, execution_ms, runner_version";

/**
 * The column tables made by earlier versions lack: each database adds it under its lock, before
 * the first record is written. Rows written before it hold NULL: no version is made up for them.
 */
export const RUNNER_VERSION_COLUMN = "runner_version";

/** A record's values for an INSERT: `[path, hash, executed_at, executed_by, ms, version]`. */
export type RecordRow = [string, string, Date, string, number, string];

/**
 * A record's values for an INSERT: right after its file ran (`ran`), `execution_ms` is the time
 * since; for a file that did not run (baseline, repair, a renamed file), 0. `runner_version` is
 * this runner's.
 */
export function recordRow(record: SqlRecord, ran: boolean): RecordRow {
  const ms = ran ? Date.now() - record.executedAt.getTime() : 0;
  return [record.path, record.hash, record.executedAt, record.executedBy, ms, VERSION];
}

/** Runs `steps` in order: each script by `script`, each migration in code by `code`. */
export async function runSteps(
  steps: readonly SqlBody[],
  script: (text: string, step: number) => Promise<void> | void,
  code: (code: (session: SqlSession) => Promise<void>, step: number) => Promise<void>,
): Promise<void> {
  for (const [step, body] of steps.entries()) {
    if ("script" in body) await script(body.script, step);
    else await code(body.code, step);
  }
}

/**
 * The records of `SELECT *` rows, path to record. `*`, because the table may be one an earlier
 * version made, without `runner_version`, and reading never changes it (`status` writes nothing).
 * `executed_at` comes as a Date (PostgreSQL, MariaDB) or as the ISO text SQLite keeps.
 */
export function fileRecords(rows: readonly Record<string, unknown>[]): Map<string, FileRecord> {
  return new Map(rows.map((row): [string, FileRecord] => {
    const at = row.executed_at instanceof Date
      ? row.executed_at
      : typeof row.executed_at === "string"
      ? new Date(row.executed_at)
      : undefined;
    const by = row.executed_by;
    const version = row[RUNNER_VERSION_COLUMN];
    return [String(row.migration_path), {
      hash: String(row.content_hash),
      ...(at === undefined || Number.isNaN(at.getTime()) ? {} : { executedAt: at.toISOString() }),
      ...(typeof by === "string" && by !== "" ? { executedBy: by } : {}),
      ...(typeof version === "string" && version !== "" ? { runnerVersion: version } : {}),
    }];
  }));
}

/** Who holds a server-side lock, as the server tells it. */
export interface LockHolder {
  /** The holder, for a person: its application name and server pid, or its connection id. */
  readonly name: string;
  /**
   * The statement that ends the holder's session on the server, where the runner knows it
   * (`SELECT pg_terminate_backend(<pid>)`): a runner killed during a statement may leave its
   * session running that statement, and its lock held, until the statement ends.
   */
  readonly end?: string;
}

/** How a server-side lock is waited for: whose it is, how long, and what may interrupt. */
export interface ServerLockWait {
  readonly datasource: string;
  readonly timeoutMs: number;
  /** The option that sets `timeoutMs`, as the caller spells it: `--lock-timeout`, `lockTimeoutMs`. */
  readonly option: string;
  /** Told the holder once, when the lock is busy. */
  readonly onWait: (holder: string) => void;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Takes a server-side lock (PostgreSQL advisory lock, MySQL/MariaDB `GET_LOCK`) by calling
 * `attempt` every {@linkcode LOCK_POLL_MS} until it succeeds or `timeoutMs` passed, then throws a
 * `lock` MigrationError. A wait inside the server could not be cut short by Ctrl-C; this one ends
 * with an `interrupted` MigrationError when `signal` aborts. `holder` is asked once, to tell the user.
 */
export async function pollServerLock(
  attempt: () => Promise<boolean>,
  holder: () => Promise<LockHolder>,
  wait: ServerLockWait,
): Promise<void> {
  const deadline = Date.now() + wait.timeoutMs;
  let busy: LockHolder | undefined;
  while (!await attempt()) {
    if (busy === undefined) {
      busy = await holder();
      wait.onWait(busy.name);
    }
    if (Date.now() >= deadline) {
      throw new MigrationError(
        "lock",
        `datasource "${wait.datasource}" is locked by ${busy.name}; waited ${
          wait.timeoutMs / 1000
        } s (${wait.option}). The lock ends with that runner's session${
          busy.end === undefined
            ? "."
            : `: if that runner is gone (killed during a statement, its session may run on ` +
              `until the statement ends), end its session with ${busy.end}`
        }`,
      );
    }
    await pause(Math.min(LOCK_POLL_MS, deadline - Date.now()), wait.signal, "waiting for the lock");
  }
}

/** How long a run waits for the lock, and what it is told meanwhile. */
export interface LockWait {
  /** The longest wait, after which a `lock` MigrationError. */
  readonly timeoutMs: number;
  /** Told, once, who holds the lock while the run waits. */
  readonly onWait: (holder: string) => void;
  /** Ends the wait with an `interrupted` MigrationError. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * One datasource's database, as the SQL runner needs it. Each implementation owns its driver, its
 * SQL types and its lock; all of them run a file through the driver's own multi-statement support.
 */
export interface SqlDatabase {
  readonly kind: DatabaseKind;
  /** Whether a file and its record commit together (PostgreSQL, SQLite); not on MySQL/MariaDB. */
  readonly transactionalDdl: boolean;
  /** Queries sent so far. */
  readonly queries: number;
  /**
   * The records, path to record; empty when the table does not exist yet (nothing is created, and
   * a table of an earlier version is read as it is).
   */
  readRecords(table: string): Promise<Map<string, FileRecord>>;
  /**
   * Takes the run's lock, waiting as `wait` says, then creates the table when missing, and adds
   * {@linkcode RUNNER_VERSION_COLUMN} to one an earlier version made.
   */
  lock(table: string, wait: LockWait): Promise<void>;
  unlock(): Promise<void>;
  /**
   * Runs `steps` in order (scripts, or code querying through the file's session: the file, and
   * the callbacks around it) and writes the record (inserted, or replacing the path's record), in one
   * transaction where the database allows, and returns the recorded `execution_ms`. SQLite
   * decides again in the file's own savepoint, and returns `undefined`, running nothing, where
   * another runner was first: a record of this checksum, or, for a file that runs `once`, any record. Throws
   * {@linkcode ScriptError} when a statement of a script fails, {@linkcode CodeError} when code
   * fails, each with the index of its step. Without `record` (a callback), the steps run in a
   * transaction of their own, where there is one, and nothing is checked or recorded.
   * `undoRecords`: the undo records of a version applied again, deleted after its record is
   * written, in its transaction; where given, SQLite runs the steps only while one of them is left
   * (else another runner applied the version again first).
   */
  runFile(
    table: string,
    steps: readonly SqlBody[],
    record: SqlRecord | undefined,
    once: boolean,
    undoRecords?: readonly string[],
  ): Promise<number | undefined>;
  /**
   * Writes the record of `record.path` without running anything, in one statement: inserted with
   * `execution_ms` 0, or, where the path has a record already, its hash, `executed_at`,
   * `executed_by` and `runner_version` replaced (its `execution_ms` stays what the run measured).
   * Never a second row for a path. Called after {@linkcode SqlDatabase.lock}, so the table exists.
   */
  putRecord(table: string, record: SqlRecord): Promise<void>;
  /** Deletes the record of `path`; whether there was one. Called after `lock`. */
  deleteRecord(table: string, path: string): Promise<boolean>;
  close(): Promise<void>;
}

/** A statement of a file failed; what the driver could tell about where. */
export class ScriptError extends Error {
  /** The database's own code: SQLSTATE, or MySQL's error name. */
  readonly code: string | undefined;
  /** 1-based character offset in the file, when the database gives one. */
  readonly position: number | undefined;
  /** Statements that completed before the failing one, when the driver can count them. */
  readonly completed: number | undefined;
  /** The failing script's index in the steps `runFile` ran. */
  readonly step: number;

  constructor(
    message: string,
    where: {
      code?: string | undefined;
      position?: number | undefined;
      completed?: number | undefined;
      step: number;
    },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "ScriptError";
    this.code = where.code;
    this.position = where.position;
    this.completed = where.completed;
    this.step = where.step;
  }
}

/** The database could not be reached or refused a runner's own query: the run fails (exit 1). */
export class DatabaseError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DatabaseError";
  }
}

/**
 * Adds the `runner_version` column to a records table an earlier version made, by `alter`; a
 * refusal (PostgreSQL lets only the table's owner alter it, MySQL needs the ALTER privilege) says
 * what to run once, since a deploy user often may write rows but not change the table.
 */
export async function addRunnerVersion(
  table: string,
  statement: string,
  alter: (sql: string) => Promise<unknown>,
): Promise<void> {
  try {
    await alter(statement);
  } catch (error) {
    throw new DatabaseError(
      `the records table "${table}" needs the ${RUNNER_VERSION_COLUMN} column this version ` +
        `writes, and adding it was refused (${error instanceof Error ? error.message : error}): ` +
        `run once as a user that may alter the table (its owner on PostgreSQL), or have one ` +
        `run: ${statement}`,
      { cause: error },
    );
  }
}
