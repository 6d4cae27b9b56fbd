import { type CodeFile, isCodeFile } from "../code/code_file.ts";
import { codeFailure } from "../code/code_failure.ts";
import { CodeLoadError, loadCode, loadDown } from "../code/load_code.ts";
import { downRecordPath } from "../plan/undo_name.ts";
import { inProgressMarkerPath } from "../plan/in_progress_marker.ts";
import { migrationContext } from "../code/migration_context.ts";
import {
  type Applied,
  AppliedThenFailed,
  type ApplyAlso,
  type CallbackRun,
  type FileRecord,
  type MigrationTarget,
  TargetIo,
} from "../driver.ts";
import type { CallbackEvent } from "../plan/callback_name.ts";
import type { EachFileCallbacks, PlannedCallback } from "../plan/planned_callback.ts";
import type { RequestCounter } from "../request_counter.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import { MigrationFailure } from "../migration_error.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";
import { DEFAULT_STOP_TIMEOUT_SECONDS, runUntilStopped } from "../code/run_until_stopped.ts";
import { type Progress, silentProgress, type UnlockOutcome } from "../run_report.ts";
import type { Datasource } from "../../sql/datasource.ts";
import {
  CodeError,
  DatabaseError,
  RunRolledBack,
  ScriptError,
  type SqlBody,
  type SqlDatabase,
  type SqlSession,
} from "./sql_database.ts";
import { sqlContext } from "./sql_code_context.ts";
import { locateStatement } from "./statement_locator.ts";
import { runsOnce } from "../plan/file_decisions.ts";
import { type Mask, placeholdersMask } from "../../config/secrets_mask.ts";
import { definedFields } from "../../defined_fields.ts";

/** A planned SQL migration file: its text, sent as it is. */
export interface SqlFile extends PlannedFile {
  readonly text: string;
}

/** What a SQL datasource's migration files become: SQL text, or code. */
export type SqlPlannedFile = SqlFile | CodeFile;

// One file runFile runs: the migration, or a callback around it.
interface Step {
  readonly path: string;
  readonly file: SqlPlannedFile;
  readonly callback?: CallbackEvent;
  /** A code file's `down` runs, not its default export. */
  readonly down?: true;
}

const step = (callback: PlannedCallback<SqlPlannedFile>): Step => ({
  path: callback.path,
  file: callback.file,
  callback: callback.event,
});

const NO_CALLBACKS: EachFileCallbacks<SqlPlannedFile> = { before: [], after: [] };

// One run of a file: `file`'s version, the step that runs (the file, its undo file, or its
// module's `down`), the record written with it, and the undo records dropped with it.
interface RunJob {
  readonly file: SqlPlannedFile;
  readonly runs: Step;
  readonly record: { readonly path: string; readonly hash: string };
  readonly undoing: boolean;
  readonly once: boolean;
  readonly undoRecords: readonly string[];
}

/** What a code file's `ctx.log` writes to, and what interrupts its run. */
export interface SqlTargetRun {
  readonly progress?: Progress;
  readonly signal?: AbortSignal;
  /** How long code may run on after `signal` aborted: the default when absent. */
  readonly stopTimeoutMs?: number;
  /** How messages name the options: the command line's by default. */
  readonly optionNames?: OptionNames;
}

// What a failure that ended SQLite's run transaction adds: the run's earlier work went with it.
const ROLLED_BACK = "; the failure ended the transaction that held this run (SQLite), and the " +
  "files this run applied before it on this connection were rolled back with it, and are not " +
  "recorded: fix the file, then run again";

/**
 * One SQL datasource for the engine. A database's own error (a refused connection, a rejected
 * login) is thrown as a MigrationFailure with its message, and every query is counted in the run's
 * request counter.
 */
export class SqlTarget implements MigrationTarget<SqlPlannedFile> {
  readonly name: string;
  readonly #datasource: Datasource;
  readonly #db: SqlDatabase;
  readonly #executedBy: string;
  readonly #io: TargetIo;
  readonly #run: SqlTargetRun;

  /**
   * @param requests where its queries are counted (a run's); none by default
   * @param run where code files log, and what interrupts them
   */
  constructor(
    datasource: Datasource,
    db: SqlDatabase,
    executedBy: string,
    requests: RequestCounter = { count() {} },
    run: SqlTargetRun = {},
  ) {
    this.name = datasource.name;
    this.#run = run;
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
    return this.#io.run(() => this.#db.lock(this.#datasource.table, { timeoutMs, onWait, signal }));
  }

  release(): Promise<void> {
    return this.#io.run(async () => {
      try {
        await this.#db.unlock();
      } catch (error) {
        if (!(error instanceof RunRolledBack)) throw error;
        const failure = new MigrationFailure({
          connection: this.name,
          reason: `this run's work could not be committed, and is rolled back: none of the ` +
            `files it ran is applied (${error.cause.message})`,
        }, { cause: error.cause });
        failure.earlierRolledBack = true;
        throw failure;
      }
    });
  }

  unlock(): Promise<UnlockOutcome> {
    return Promise.resolve({
      unlocked: "nothing",
      note: "a SQL lock ends with the runner's connection (or, on SQLite, with its transaction)",
    });
  }

  apply(
    file: SqlPlannedFile,
    executedAt: Date,
    { around = NO_CALLBACKS, undoRecords = [] }: ApplyAlso<SqlPlannedFile> = {},
  ): Promise<Applied> {
    const job = {
      file,
      runs: { path: file.path, file },
      record: file,
      undoing: false,
      once: runsOnce(file),
      undoRecords,
    };
    return this.#io.run(() => this.#runJob(job, executedAt, around));
  }

  // The undo file (or the module's `down`) runs in place of the file, and its record marks the
  // version undone: a record of that path already means another runner undid it first.
  undo(
    file: SqlPlannedFile,
    undo: SqlPlannedFile | "down",
    executedAt: Date,
    around: EachFileCallbacks<SqlPlannedFile> = NO_CALLBACKS,
  ): Promise<Applied> {
    const job = {
      file,
      ...(undo === "down"
        ? {
          runs: { path: file.path, file, down: true as const },
          record: { path: downRecordPath(file.path), hash: file.hash },
        }
        : { runs: { path: undo.path, file: undo }, record: undo }),
      undoing: true,
      once: true,
      undoRecords: [],
    };
    return this.#io.run(() => this.#runJob(job, executedAt, around));
  }

  async #runJob(
    job: RunJob,
    executedAt: Date,
    around: EachFileCallbacks<SqlPlannedFile>,
  ): Promise<Applied> {
    const { file, runs, record, undoing, once, undoRecords } = job;
    const result = undoing ? "undone" : "applied";
    // Where nothing rolls a file back, its record is written before the callbacks after it run:
    // one of them failing must not leave a file that ran unrecorded, to run again.
    const transactional = this.#db.transactionalDdl;
    const steps: Step[] = [
      ...around.before.map(step),
      runs,
      ...(transactional ? around.after.map(step) : []),
    ];
    // Imported before the transaction: a file that cannot load never holds a lock or a BEGIN.
    const bodies = await this.#bodies(steps);
    // Where nothing rolls the file back, a mark says it is in progress until its record is
    // written: a runner killed in the middle leaves it, and the next run is refused.
    const mark = transactional ? undefined : inProgressMarkerPath(record.path);
    if (mark !== undefined) await this.#putRecord({ ...record, path: mark }, executedAt);
    let ms: number | undefined;
    try {
      ms = await this.#db.runFile(
        this.#datasource.table,
        bodies,
        { ...this.#recordOf(record), executedAt, executedBy: this.#executedBy },
        once,
        undoRecords,
      );
    } catch (thrown) {
      throw await this.#jobFailure(thrown, job, steps, mark);
    }
    if (mark !== undefined) await this.#db.deleteRecord(this.#datasource.table, mark);
    if (ms === undefined) return { result, ms: 0, alreadyRecorded: true };
    const done = undoing ? `${file.path} was undone, and is recorded so` : `${file.path} ran and ` +
      "is recorded";
    for (const [ran, callback] of (transactional ? [] : around.after).entries()) {
      try {
        await this.#runCallback(callback, `; ${done}`);
      } catch (error) {
        throw new AppliedThenFailed({ result, ms }, ran, error);
      }
    }
    return { result, ms };
  }

  // A record's path and checksum alone.
  #recordOf({ path, hash }: RunJob["record"]): RunJob["record"] {
    return { path, hash };
  }

  async #putRecord(record: RunJob["record"], executedAt: Date): Promise<void> {
    await this.#db.putRecord(this.#datasource.table, {
      ...this.#recordOf(record),
      executedAt,
      executedBy: this.#executedBy,
    });
  }

  // What a job's failure throws: a step's failure, saying what it left (the in-progress `mark`
  // dropped: the next run starts at the file again); the connection lost, as it is (the mark
  // stays, as for a runner killed).
  async #jobFailure(
    thrown: unknown,
    job: RunJob,
    steps: readonly Step[],
    mark: string | undefined,
  ): Promise<unknown> {
    const lost = thrown instanceof RunRolledBack;
    const error: unknown = lost ? thrown.cause : thrown;
    const failed = error instanceof ScriptError || error instanceof CodeError
      ? steps[error.step]
      : undefined;
    if (failed === undefined) return error;
    if (mark !== undefined) await this.#db.deleteRecord(this.#datasource.table, mark);
    const left = this.#left(job, failed);
    if (!lost) return this.#failure(failed, error as ScriptError | CodeError, left);
    const failure = this.#failure(
      failed,
      error as ScriptError | CodeError,
      `${left}${ROLLED_BACK}`,
    );
    failure.earlierRolledBack = true;
    return failure;
  }

  // What a failure of step `failed` left of the job, after the failure's own words.
  #left({ file, runs, undoing }: RunJob, failed: Step): string {
    const notDone = undoing ? `${file.path} is not undone` : `${file.path} is not recorded`;
    if (this.#db.transactionalDdl) {
      return failed === runs
        ? undoing ? `; ${notDone}` : ""
        : undoing
        ? `; ${runs.path} was rolled back with it, and ${notDone}`
        : `; ${file.path} was rolled back with it, and is not recorded`;
    }
    const before = failed.callback?.startsWith("before") === true;
    return failed === runs || before
      ? `; ${failed === runs ? "what ran of it" : "what ran before"} may have been ` +
        `committed (MySQL/MariaDB commit DDL implicitly, and run a file in no transaction), ` +
        `and ${notDone}: fix the database or the file, then re-run`
      : "";
  }

  runCallback(callback: PlannedCallback<SqlPlannedFile>): Promise<CallbackRun> {
    return this.#io.run(() => this.#runCallback(callback, ""));
  }

  // In a transaction of its own, with no record: a callback runs at each of its events.
  async #runCallback(
    callback: PlannedCallback<SqlPlannedFile>,
    left: string,
  ): Promise<CallbackRun> {
    const started = Date.now();
    const steps = [step(callback)];
    const bodies = await this.#bodies(steps);
    try {
      await this.#db.runFile(this.#datasource.table, bodies, undefined, false);
    } catch (thrown) {
      const lost = thrown instanceof RunRolledBack;
      const error: unknown = lost ? thrown.cause : thrown;
      if (!(error instanceof ScriptError || error instanceof CodeError)) throw error;
      if (!lost) throw this.#failure(steps[0], error, left);
      const failure = this.#failure(steps[0], error, `${left}${ROLLED_BACK}`);
      failure.earlierRolledBack = true;
      throw failure;
    }
    return { ms: Date.now() - started };
  }

  // What runFile runs for each step; code imported now, before any transaction.
  async #bodies(steps: readonly Step[]): Promise<SqlBody[]> {
    const bodies: SqlBody[] = [];
    for (const s of steps) {
      bodies.push(
        isCodeFile(s.file) ? { code: await this.#code(s, s.file) } : { script: s.file.text },
      );
    }
    return bodies;
  }

  // The failure of a step: the file, or the callback, and where in it.
  #failure(failed: Step, error: ScriptError | CodeError, left: string): MigrationFailure {
    const mask = this.#mask();
    const where = {
      connection: this.name,
      ...definedFields({ callback: failed.callback }),
    };
    if (error instanceof CodeError && isCodeFile(failed.file)) {
      return codeFailure(failed.file, error.cause, {
        ...where,
        mask,
        after: left,
        interrupted: this.#run.signal?.aborted === true,
      });
    }
    if (!(error instanceof ScriptError) || isCodeFile(failed.file)) throw error;
    const at = locateStatement(failed.file.text, this.#db.kind, error);
    return new MigrationFailure({
      ...where,
      file: failed.path,
      ...(at ? { line: at.line } : {}),
      ...(error.code ? { code: error.code } : {}),
      // The statement and the database's message may quote a placeholder's value.
      reason: mask(`${at ? `in \`${at.excerpt}\`: ` : ""}${error.message}${left}`),
    }, { cause: error });
  }

  #mask(): Mask {
    return placeholdersMask(this.#datasource.placeholders);
  }

  // The code file's function, bound to a context on the session runFile gives it.
  async #code(s: Step, file: CodeFile): Promise<(session: SqlSession) => Promise<void>> {
    let run;
    try {
      run = s.down ? await loadDown(file) : await loadCode(file);
      if (run === undefined) {
        throw new CodeLoadError(
          "exports no down: export async function down(ctx) from it, or give its version an " +
            "undo file",
        );
      }
    } catch (error) {
      if (!(error instanceof CodeLoadError)) throw error;
      throw codeFailure(file, error, {
        connection: this.name,
        mask: this.#mask(),
        ...definedFields({ callback: s.callback }),
      });
    }
    const base = migrationContext({
      connection: this.name,
      path: s.path,
      placeholders: this.#datasource.placeholders,
      progress: this.#run.progress ?? silentProgress,
      mask: this.#mask(),
      signal: this.#run.signal,
    });
    const rule = {
      signal: this.#run.signal,
      stopTimeoutMs: this.#run.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_SECONDS * 1000,
      option: (this.#run.optionNames ?? COMMAND_LINE_NAMES).stopTimeout,
    };
    return async (session) => {
      await runUntilStopped(
        async (signal) =>
          await run(sqlContext({ ...base, signal }, this.#db.kind, session) as never),
        rule,
      );
    };
  }

  /**
   * Writes the record of `file` at its current hash without running it (baseline, repair, a
   * renamed file): inserted with `execution_ms` 0, or replacing the path's record. Under the lock.
   */
  async record(file: SqlPlannedFile, executedAt: Date): Promise<void> {
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
