import type { Applied, FileRecord, MigrationTarget } from "../driver.ts";
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

/** One SQL datasource for the engine. */
export class SqlTarget implements MigrationTarget<SqlFile> {
  readonly name: string;
  readonly strictOrder: boolean;
  readonly validateOnMigrate: boolean;
  readonly #datasource: Datasource;
  readonly #db: SqlDatabase;
  readonly #executedBy: string;

  constructor(datasource: Datasource, db: SqlDatabase, executedBy: string) {
    this.name = datasource.name;
    this.strictOrder = datasource.strictOrder;
    this.validateOnMigrate = datasource.validateOnMigrate;
    this.#datasource = datasource;
    this.#db = db;
    this.#executedBy = executedBy;
  }

  get requests(): number {
    return this.#db.queries;
  }

  readRecords(): Promise<ReadonlyMap<string, FileRecord>> {
    return this.#db.readRecords(this.#datasource.table);
  }

  // The table is created under the lock (see lock): two runners must not race to create it.
  prepare(): Promise<void> {
    return Promise.resolve();
  }

  lock(timeoutMs: number, onWait: (holder: string) => void, signal?: AbortSignal): Promise<void> {
    return this.#db.lock(this.#datasource.table, timeoutMs, onWait, signal);
  }

  release(): Promise<void> {
    return this.#db.unlock();
  }

  unlock(): Promise<UnlockOutcome> {
    return Promise.resolve({
      unlocked: "nothing",
      note: "a SQL lock ends with the runner's connection (or, on SQLite, with its transaction)",
    });
  }

  async apply(file: SqlFile, executedAt: Date): Promise<Applied> {
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
  async #recordWrite(path: string, what: string, write: () => Promise<unknown>): Promise<void> {
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
  }

  failure(error: unknown): string | undefined {
    return error instanceof DatabaseError ? error.message : undefined;
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
