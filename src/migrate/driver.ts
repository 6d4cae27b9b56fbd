import type { EnvLookup } from "../config/env.ts";
import type { Mask } from "../config/secrets_mask.ts";
import type { CodeMigrationModule } from "./code/code_context.ts";
import type { MigrationFile } from "./files/migration_files.ts";
import type { PlannedFile } from "./plan/planned_file.ts";
import type { EachFileCallbacks, PlannedCallback } from "./plan/planned_callback.ts";
import type { OptionNames } from "./option_names.ts";
import type { RequestCounter } from "./request_counter.ts";
import type {
  ConnectionDrift,
  FileReport,
  FileResult,
  Progress,
  ReindexReport,
  UnlockOutcome,
} from "./run_report.ts";
import type { RunnerIdentity } from "./runner_identity.ts";
import type { Command } from "./command/command_name.ts";
import { ConnectionFailure } from "./migration_error.ts";

/** The kinds of migration a run applies: `-m sql` (the default) or `-m search`. */
export type MigrationMode = "sql" | "search";

/** A configured connection (or datasource), as the engine selects it. */
export interface DriverConnection {
  /** Its `name`: the folder of its files under the migrations root. */
  readonly name: string;
  /** `migrations.enabled: true`: only these are run. */
  readonly migrationsEnabled: boolean;
  /** `migrations.strict_order`: a pending file that sorts before an applied one is an error. */
  readonly strictOrder: boolean;
  /**
   * `migrations.flyway_compatible`: `migrate` refuses an applied versioned file that was edited
   * or is gone, as Flyway's validate-on-migrate does.
   */
  readonly validateOnMigrate: boolean;
}

/**
 * What a driver can do beyond applying files and keeping their records: what a run request may
 * ask of it is checked against these before anything is read (`--drift` on a driver that cannot
 * compare the live system is refused), not against the driver's name.
 */
export interface DriverCapabilities {
  /** Its targets compare the live system with the applied files (`--drift`). */
  readonly drift: boolean;
  /** A file may be a reindex: documents copied to a new index, its alias moved. */
  readonly reindex: boolean;
  /** Repeatable (`R__`) files, applied again whenever they change. */
  readonly repeatable: boolean;
  /**
   * Migrations in code (`V3__backfill.ts`, `.js`): a driver without it never gets such a file,
   * which its folder lists as any other file that is no migration.
   */
  readonly code: boolean;
  /**
   * Flyway's callbacks (`beforeMigrate.sql`, `afterEachMigrate.ts`, ...): files run at an event of
   * every run, never recorded. A driver without it gets them as ordinary files.
   */
  readonly callbacks: boolean;
  /**
   * Flyway's undo: undo files (`U<version>__…`) are taken out of the migrations and run by
   * `undo`. A driver without it refuses `undo`, and any such file stops its runs by name.
   */
  readonly undo?: true;
}

/** Where a run reads its configuration and files, and what it runs in. */
export interface DriverContext {
  /** The folder of `application.yml` (`-c`). */
  readonly configDir: string;
  /** The migrations root: one folder per connection (`--migrations`). */
  readonly migrations: string;
  /** Where `${VAR}` placeholders of the configuration are read. */
  readonly env: EnvLookup;
  /** Where relative paths of the configuration (SQLite files) start. */
  readonly cwd: string;
  /** Who runs: shown to runners waiting for the lock; SQL records `user@host` as executed_by. */
  readonly identity: RunnerIdentity;
  /** The command run, named with `identity` to runners waiting for the lock; absent: migrate. */
  readonly command?: Command;
  /** How long a lock is waited for, in milliseconds (`--lock-timeout`). */
  readonly lockTimeoutMs: number;
  /**
   * How long a code file may run on after `signal` aborted, in milliseconds (`--stop-timeout`);
   * the default when absent.
   */
  readonly stopTimeoutMs?: number;
  /** Hears the steps of a long file (a reindex). */
  readonly progress: Progress;
  /** Ctrl-C: stops the run between two files, and a long file at a safe point. */
  readonly signal?: AbortSignal;
  /**
   * Counts every request or query a target sends, reads included, by connection: the report's
   * `requests`.
   */
  readonly requests: RequestCounter;
  /** How messages name the options (`--lock-timeout`, `lockTimeoutMs`): as the caller spells them. */
  readonly optionNames: OptionNames;
}

/**
 * One kind of migration (SQL, search): how its connections are configured, how one of its files
 * becomes work, and how a connection is opened. The engine runs every command through it, as
 * golang-migrate runs every command through a database driver.
 *
 * @typeParam C its configured connection
 * @typeParam F its planned file
 */
export interface MigrationDriver<
  C extends DriverConnection = DriverConnection,
  F extends PlannedFile = PlannedFile,
> {
  /** The `-m` value that selects it. */
  readonly mode: MigrationMode;
  /** What its configuration calls one connection, in messages. */
  readonly noun: "connection" | "datasource";
  /** How its migration files end: `.sql`, `.json`. */
  readonly extension: string;
  /** What it can do beyond applying files; the request check reads it. */
  readonly capabilities: DriverCapabilities;
  /** Every configured connection, in configuration order; a ConfigError for a wrong one. */
  connections(context: DriverContext): Promise<readonly C[]>;
  /**
   * What one file of `connection` becomes; a MigrationFileError names what is wrong with it.
   * `given`: the module an app bundled for a code file, run in place of importing the file.
   */
  plan(file: MigrationFile, connection: C, given?: CodeMigrationModule): Promise<F>;
  /**
   * A target per connection, all made before the first request is sent: a setting the runtime
   * cannot honour (a proxy, a driver that is not installed) is found while nothing was sent.
   */
  open(connections: readonly C[], context: DriverContext): Promise<MigrationTarget<F>[]>;
  /**
   * What the report may show of `connection`'s files (a request, a resource, a notice): each
   * placeholder value written back as its `${name}`, since a value may be a secret. Absent: shown
   * as they are.
   */
  mask?(connection: C): Mask;
  /**
   * Why the undo file `undo` cannot undo `file`, from the two files alone (a reindex undo whose
   * forward file deleted the index to go back into), if it cannot: `undo` refuses its plan with
   * it, naming the undo file, before anything runs on any connection. Absent: every pair can.
   */
  undoRefusal?(file: F, undo: F): string | undefined;
}

/**
 * A file's record as a target read it: its checksum, and what the record says of the run that
 * wrote it. A field the record does not hold (a record written before the field was stored) is
 * absent, never guessed.
 */
export interface FileRecord {
  /** The checksum recorded. */
  readonly hash: string;
  /** When the record was written: ISO 8601, UTC. */
  readonly executedAt?: string;
  /** Who wrote it: `user@host` ({@linkcode recordedBy}). */
  readonly executedBy?: string;
  /** The runner's version that wrote it (`src/version.ts`). */
  readonly runnerVersion?: string;
}

/**
 * Who a record names as its writer: `user@host` of the runner (`unknown@host` where the user
 * cannot be told), the same in every driver's records.
 */
export function recordedBy(identity: RunnerIdentity): string {
  return `${identity.user || "unknown"}@${identity.host}`;
}

/** What running one callback did. */
export interface CallbackRun {
  readonly ms: number;
  readonly notice?: string;
}

/** What applying one file did. */
export interface Applied {
  /** What was done; see {@linkcode FileResult}. */
  readonly result: Exclude<FileResult, "recorded" | "moved" | "dropped" | "failed">;
  readonly ms: number;
  readonly status?: number;
  readonly notice?: string;
  /** Another runner recorded the file first (seen under the file's own lock): nothing was run. */
  readonly alreadyRecorded?: boolean;
  /** A reindex file: what it moved. */
  readonly reindex?: ReindexReport;
}

/**
 * What `apply` throws when its file ran and its record is written, but a callback after it failed
 * (where no transaction holds them together, as on MySQL and search connections): the run stops on
 * `failure`, and the report shows the file as its record does.
 */
export class AppliedThenFailed extends Error {
  readonly applied: Applied;
  /** How many of the callbacks after the file ran before the one that failed. */
  readonly ranAfter: number;
  readonly failure: unknown;

  constructor(applied: Applied, ranAfter: number, failure: unknown) {
    super(failure instanceof Error ? failure.message : String(failure), { cause: failure });
    this.name = "AppliedThenFailed";
    this.applied = applied;
    this.ranAfter = ranAfter;
    this.failure = failure;
  }
}

/** What goes with a file {@linkcode MigrationTarget.apply} runs. */
export interface ApplyAlso<F extends PlannedFile> {
  /**
   * The callbacks to run right before and after it, inside its transaction where it has one;
   * where it has none, a failure of one after it is thrown in an {@linkcode AppliedThenFailed}.
   */
  readonly around?: EachFileCallbacks<F> | undefined;
  /**
   * A version `undo` undid is applied again: these records of its undo are dropped with its
   * record written; where another runner applied it again first (none of them left, seen under
   * the file's own lock), nothing runs.
   */
  readonly undoRecords?: readonly string[] | undefined;
}

/**
 * One opened connection as the engine drives it: its records, its lock, its files. Everything
 * else (deciding, locking order, progress, the report, stopping) is the engine's; its settings
 * are its connection's ({@linkcode DriverConnection}), and the requests it sends are counted in
 * its driver's context ({@linkcode DriverContext.requests}). Its own I/O errors (a refused
 * connection, a rejected login) are thrown as a MigrationFailure ({@linkcode ConnectionFailure}).
 */
export interface MigrationTarget<F extends PlannedFile> {
  readonly name: string;
  /**
   * The applied files: path to record (its checksum, and when, by whom and with which runner
   * version it was written, which `status` shows); empty when nothing was recorded yet.
   */
  readRecords(): Promise<ReadonlyMap<string, FileRecord>>;
  /**
   * Creates the records index or table when missing, then takes the migration lock, waiting up
   * to `timeoutMs`, else throws a `lock` MigrationError; a lock with a lease renews it on its own
   * until {@linkcode MigrationTarget.release}. `signal` (Ctrl-C) ends the wait with an
   * `interrupted` MigrationError.
   */
  lock(timeoutMs: number, onWait: (holder: string) => void, signal?: AbortSignal): Promise<void>;
  release(): Promise<void>;
  /**
   * `unlock`: removes a lock left by a runner that died, and says what it removed. A lock whose
   * lease is still renewed is refused (a `lock` MigrationError naming its holder) unless `force`.
   */
  unlock(force: boolean): Promise<UnlockOutcome>;
  /**
   * Runs the file and writes its record; throws a MigrationFailure naming what failed. `also`:
   * what else goes with it (callbacks, undo records dropped).
   */
  apply(file: F, executedAt: Date, also?: ApplyAlso<F>): Promise<Applied>;
  /**
   * `undo`: runs `undo`, the undo file of the versioned file `file` (or, for `"down"`, the `down`
   * export of `file`'s module), and writes its undo record (the undo file's path and checksum; for
   * a `down`, `file`'s path with its `V` made a `U`, at `file`'s checksum), which marks the
   * version undone; `file`'s own record stays. In one transaction where the target has them;
   * `around`: the callbacks right before and after it, as for {@linkcode MigrationTarget.apply}.
   * Where another runner undid the version first (seen under the file's own lock), nothing runs:
   * `alreadyRecorded`. Throws a MigrationFailure naming what failed.
   */
  undo(
    file: F,
    undo: F | "down",
    executedAt: Date,
    around?: EachFileCallbacks<F>,
  ): Promise<Applied>;
  /**
   * Runs a callback file, writing no record: in a transaction of its own where the target has
   * them. Throws a MigrationFailure naming the callback (`detail.callback`) when it fails.
   */
  runCallback(callback: PlannedCallback<F>): Promise<CallbackRun>;
  /**
   * `undo`: why one of the planned pairs (each versioned file and the undo file that undoes it,
   * newest first) must not run, from what the target holds now (reads only), if one must not:
   * the undo file refused and why. Asked before anything runs on any connection, and again under
   * the lock, so that a refused pair refuses the plan whole rather than after the newer versions
   * were undone. Absent: nothing beyond {@linkcode MigrationDriver.undoRefusal} to check.
   */
  undoPlanRefusal?(
    pairs: readonly { readonly file: F; readonly undo: F }[],
  ): Promise<{ readonly path: string; readonly why: string } | undefined>;
  /**
   * Writes the file's record at its checksum without running it (`baseline`, `repair`, renames);
   * `from`: the path of the record it takes over (a rename), whose account of the run it keeps.
   */
  record(file: F, executedAt: Date, from?: string): Promise<void>;
  /** Removes the record of `path` (`repair`, renames); no record is fine. */
  dropRecord(path: string): Promise<void>;
  close(): Promise<void>;
  /**
   * Present where the live system can be compared with the applied files (`--drift`): on the
   * targets of a driver whose capabilities include `drift`.
   */
  readonly drift?: DriftInspection<F>;
}

/**
 * What a target does around each call the engine makes: turns an error `isOwn` recognises (its
 * driver's I/O error) into a {@linkcode ConnectionFailure} of the connection, and counts the
 * requests or queries the call sent (`sent`: the driver's own running total, background lease
 * renewals included) in the run's {@linkcode RequestCounter}.
 */
export class TargetIo {
  readonly #connection: string;
  readonly #sent: () => number;
  readonly #counter: RequestCounter;
  readonly #isOwn: (error: unknown) => error is Error;
  #counted = 0;

  /**
   * @param connection the target's connection
   * @param sent how many requests or queries the target's client sent so far
   * @param counter where they are counted
   * @param isOwn whether an error is the driver's own I/O error
   */
  constructor(
    connection: string,
    sent: () => number,
    counter: RequestCounter,
    isOwn: (error: unknown) => error is Error,
  ) {
    this.#connection = connection;
    this.#sent = sent;
    this.#counter = counter;
    this.#isOwn = isOwn;
    this.#counted = sent();
  }

  #own(error: unknown): unknown {
    return this.#isOwn(error) ? new ConnectionFailure(this.#connection, error) : error;
  }

  /** Runs one call of the target. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppliedThenFailed) {
        throw new AppliedThenFailed(error.applied, error.ranAfter, this.#own(error.failure));
      }
      throw this.#own(error);
    } finally {
      const sent = this.#sent();
      if (sent > this.#counted) this.#counter.count(this.#connection, sent - this.#counted);
      this.#counted = sent;
    }
  }
}

/**
 * `--drift`: how a target compares what its applied files define with the live system, and
 * applies drifted files again.
 */
export interface DriftInspection<F extends PlannedFile> {
  /** Compares what the applied files define with the live system. Sends only reads. */
  read(files: readonly F[], applied: AppliedFiles): Promise<ConnectionDrift>;
  /**
   * `migrate --drift`, under the lock: applies again the declarative files of `found` whose
   * resources drifted, rewrites their records at the same checksum, and says what still differs.
   * `signal` (Ctrl-C) stops it between two resources.
   */
  repair(
    files: readonly F[],
    applied: AppliedFiles,
    found: ConnectionDrift,
    signal?: AbortSignal,
  ): Promise<ConnectionDrift>;
}

/** What `--drift` knows of the applied files. */
export interface AppliedFiles {
  /** The engine's decisions, in run order, with what this run did with each file so far. */
  readonly decided: readonly FileReport[];
  /** The records the decisions were taken on, by path: files no longer in the folder too. */
  readonly records: ReadonlyMap<string, FileRecord>;
}
