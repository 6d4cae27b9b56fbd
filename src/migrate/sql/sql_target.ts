import { type Applied, type FileRecord, type MigrationTarget, TargetIo } from "../driver.ts";
import type { RequestCounter } from "../request_counter.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import { MigrationFailure } from "../migration_error.ts";
import type { UnlockOutcome } from "../run_report.ts";
import type { Datasource } from "./datasource.ts";
import { DatabaseError, ScriptError, type SqlDatabase } from "./sql_database.ts";
import { locateStatement } from "./statement_locator.ts";
import { runsOnce } from "../plan/file_decisions.ts";
import { placeholdersMask } from "../../config/secrets_mask.ts";

/** A planned SQL migration file: its text, sent as it is. */
export interface SqlFile extends PlannedFile {
  readonly text: string;
}

/**
 * One SQL datasource for the engine. A database's own error (a refused connection, a rejected
 * login) is thrown as a MigrationFailure with its message, and every query is counted in the run's
 * request counter.
 */
export class SqlTarget implements MigrationTarget<SqlFile> {
  readonly name: string;
  readonly #datasource: Datasource;
  readonly #db: SqlDatabase;
  readonly #executedBy: string;
  readonly #io: TargetIo;

  /**
   * @param requests where its queries are counted (a run's); none by default
   */
  constructor(
    datasource: Datasource,
    db: SqlDatabase,
    executedBy: string,
    requests: RequestCounter = { count() {} },
  ) {
    this.name = datasource.name;
    this.#datasource = datasource;
    this.#db = db;
    this.#executedBy = executedBy;
    this.#io = new TargetIo(
      datasource.name,
      () => db.queries,
      requests,
      (error): error is DatabaseError => error instanceof DatabaseError,
    );
  }

  readRecords(): Promise<ReadonlyMap<string, FileRecord>> {
    return this.#io.run(() => this.#db.readRecords(this.#datasource.table));
  }

  // The table is created under the lock, when missing: two runners must not race to create it.
  lock(timeoutMs: number, onWait: (holder: string) => void, signal?: AbortSignal): Promise<void> {
    return this.#io.run(() => this.#db.lock(this.#datasource.table, timeoutMs, onWait, signal));
  }

  release(): Promise<void> {
    return this.#io.run(() => this.#db.unlock());
  }

  unlock(): Promise<UnlockOutcome> {
    return Promise.resolve({
      unlocked: "nothing",
      note: "a SQL lock ends with the runner's connection (or, on SQLite, with its transaction)",
    });
  }

  apply(file: SqlFile, executedAt: Date): Promise<Applied> {
    return this.#io.run(() => this.#apply(file, executedAt));
  }

  async #apply(file: SqlFile, executedAt: Date): Promise<Applied> {
    let ms: number | undefined;
    try {
      ms = await this.#db.runFile(this.#datasource.table, file.text, {
        path: file.path,
        hash: file.hash,
        executedAt,
        executedBy: this.#executedBy,
      }, runsOnce(file));
    } catch (error) {
      if (!(error instanceof ScriptError)) throw error;
      const at = locateStatement(file.text, this.#db.kind, error);
      const partial = this.#db.transactionalDdl
        ? ""
        : "; statements before it may have been committed (MySQL/MariaDB commit DDL " +
          "implicitly), and the file is not recorded: fix the database or the file, then re-run";
      throw new MigrationFailure({
        connection: this.name,
        file: file.path,
        ...(at ? { line: at.line } : {}),
        ...(error.code ? { code: error.code } : {}),
        // The statement and the database's message may quote a placeholder's value.
        reason: placeholdersMask(this.#datasource.placeholders)(
          `${at ? `in \`${at.excerpt}\`: ` : ""}${error.message}${partial}`,
        ),
      }, { cause: error });
    }
    return ms === undefined
      ? { result: "applied", ms: 0, alreadyRecorded: true }
      : { result: "applied", ms };
  }

  /**
   * Writes the record of `file` at its current hash without running it (baseline, repair, a
   * renamed file): inserted with `execution_ms` 0, or replacing the path's record. Under the lock.
   */
  async record(file: SqlFile, executedAt: Date): Promise<void> {
    await this.#recordWrite(
      file.path,
      "record it",
      () =>
        this.#db.putRecord(this.#datasource.table, {
          path: file.path,
          hash: file.hash,
          executedAt,
          executedBy: this.#executedBy,
        }),
    );
  }

  /** Deletes the record of `path`, if it has one, running nothing. Under the lock. */
  async dropRecord(path: string): Promise<void> {
    await this.#recordWrite(
      path,
      "delete its record",
      () => this.#db.deleteRecord(this.#datasource.table, path),
    );
  }

  // A driver's error says nothing of which record was being written: the failure names it.
  #recordWrite(path: string, what: string, write: () => Promise<unknown>): Promise<void> {
    return this.#io.run(async () => {
      try {
        await write();
      } catch (error) {
        if (!(error instanceof DatabaseError)) throw error;
        throw new MigrationFailure({
          connection: this.name,
          file: path,
          reason: `could not ${what} in table ${this.#datasource.table}: ${error.message}`,
        }, { cause: error });
      }
    });
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
