import type { Command } from "./command/command_name.ts";
import type { FailureDetail } from "./migration_error.ts";
import type { ErrorKind } from "./error_kind.ts";

// Where the report's error is, so that its readers import it from here.
export type { ErrorKind } from "./error_kind.ts";

/**
 * What a command does, or would do, with a file (or a record without its file), once the file is
 * compared with the records. Its state, as `status` lists it, follows from it.
 */
export type FileAction =
  /** No record: apply it (state `pending`). */
  | "apply"
  /** Recorded with the same checksum: nothing to do (`applied`). */
  | "skip"
  /** Recorded with another checksum, declarative (templates, policies, indices, `PUT`): apply it again (`changed`). */
  | "reapply"
  /** Recorded with another checksum, run once (SQL, `POST`/`DELETE`/`PATCH`): reported, not run again (`changed`). */
  | "changed"
  /** A record whose file is gone (`missing`); `repair` drops it. */
  | "missing"
  /** No record, but a missing record holds its checksum: the record moves to it, nothing runs (`renamed`). */
  | "rename"
  /**
   * `status` and `validate` when the records could not be read (no host answered): the file is in
   * this checkout, its state is not known (`unknown`).
   */
  | "unknown"
  /** `baseline` and `repair`: the file's record is written at its checksum; nothing runs. */
  | "record"
  /** `repair`: the record of a missing file is dropped. */
  | "drop"
  /**
   * `migrate --target`, `baseline --version`: pending or changed, but its version is above the
   * one asked for, so it is left as it is (`above target`).
   */
  | "above-target"
  /**
   * Applied, then undone (`undo`): its record stays as history beside an undo record of its
   * version (`undone`); `migrate` applies it again.
   */
  | "undone"
  /** `undo`: its undo runs, and an undo record marks it undone (`applied` until then). */
  | "undo";

/**
 * What was done with a file: it was applied (`created`, `updated`, `exists` (search: already
 * there, left as it is), `sent`, `reindexed`, `applied` (SQL)), only its record was written
 * (`recorded`, `moved`, `dropped`), its undo ran (`undone`), or it `failed`.
 */
export type FileResult =
  | "created"
  | "updated"
  | "exists"
  | "sent"
  | "reindexed"
  | "applied"
  | "recorded"
  | "moved"
  | "dropped"
  | "undone"
  | "failed";

/**
 * What the engine decided for one file (or a record without its file), once the file was compared
 * with the records: the work list a run goes through, which a {@linkcode FileReport} is made of.
 */
export type FileDecision = Pick<
  FileReport,
  | "path"
  | "action"
  | "request"
  | "overwrites"
  | "code"
  | "outOfOrder"
  | "resource"
  | "renamedFrom"
  | "sameResourceAs"
  | "baselined"
  | "inProgress"
>;

/** A callback file of a connection, and what this run did with it. */
export interface CallbackReport {
  /** The file, relative to its connection's folder. */
  readonly path: string;
  /** The Flyway event it is named after: `afterMigrate`. */
  readonly event: string;
  /** A Flyway event Thaw does not run (`afterEachMigrateError`): listed, never run. */
  readonly supported?: false;
  /** How many times this run ran it. Absent: it did not run. */
  readonly runs?: number;
  /**
   * Milliseconds those runs took, together; absent for `beforeEachMigrate` and
   * `afterEachMigrate`, timed with the file they surround.
   */
  readonly ms?: number;
}

/** One file in a report. */
export interface FileReport {
  /** The file, relative to its connection's folder, with `/` separators. */
  readonly path: string;
  /** `skip` too when another runner applied the file while this one waited for it. */
  readonly action: FileAction;
  /** `METHOD /path` of the main request (search files). */
  readonly request?: string;
  /**
   * `undo` of a reindex: the existing index its undo file copies back into, whose documents are
   * overwritten and those the alias's index lacks deleted.
   */
  readonly overwrites?: string;
  /** A migration in code (`.ts`, `.js`): what it sends is its own. */
  readonly code?: true;
  /**
   * A pending file that sorts before a file applied already: the path of the last applied one.
   * `migrate` applies it with a warning; `--strict-order` refuses it.
   */
  readonly outOfOrder?: string;
  /** What the file defines, where two files could define the same: `template logs`. */
  readonly resource?: string;
  /**
   * Recorded by `baseline`, at or below its version: adopted, never run by Thaw (`status`:
   * `baselined`). `undo` stops above it.
   */
  readonly baselined?: true;
  /**
   * A run that could not roll it back (MySQL/MariaDB) began it and never ended it (the runner was
   * killed, or lost its connection, in the middle of it): what ran of it may be committed.
   * `status`: `in progress`; every run but `status`, `validate` and `repair` is refused until
   * `repair` drops the mark, once the database is fixed.
   */
  readonly inProgress?: true;
  /** `rename`: the missing record's path, whose checksum this file has. */
  readonly renamedFrom?: string;
  /**
   * An earlier file (in run order) derives the same template, policy or index: its path. Each
   * run warns; `--strict-order` refuses it.
   */
  readonly sameResourceAs?: string;
  /** What was done; see {@linkcode FileResult}. */
  readonly result?: FileResult;
  /** Search: the HTTP status of the main request. */
  readonly status?: number;
  /** How long the file took, in milliseconds. */
  readonly ms?: number;
  /** A remark on what was done (a policy updated at a new sequence number...). */
  readonly notice?: string;
  /** A reindex file that ran: what it moved, and the figures of the move. */
  readonly reindex?: ReindexReport;
  /**
   * `status`, `validate` and dry runs (which write no record): what the file's record says of the
   * run that wrote it (a renamed file: the record it takes over). A field is absent where the
   * record does not hold it: records of earlier versions have no `runnerVersion` (SQL) or no `by`
   * (search). Absent for a file without a record, and where the record says nothing of its run.
   */
  readonly applied?: {
    /** When: ISO 8601, UTC. */
    readonly at?: string;
    /** Who: `user@host`. */
    readonly by?: string;
    /** The runner's version (`0.1.0`). */
    readonly runnerVersion?: string;
  };
  /**
   * `status`, `validate` and dry runs: the checksum the file's record holds (a renamed file's:
   * the record it takes over). Absent for a file without a record.
   */
  readonly recordChecksum?: string;
}

/** What a reindex file did (search). */
export interface ReindexReport {
  /** The index the documents were copied from. */
  readonly source: string;
  /** The new index they were copied to. */
  readonly index: string;
  /** The alias moved from the source to the new index. */
  readonly alias: string;
  /** A run of the same file had stopped halfway: this one finished it. */
  readonly resumed: boolean;
  /** Documents in the new index once the counts matched; absent when no copy ran. */
  readonly documents?: number;
  /** How long the `_reindex` task ran (the last one, when a resumed run started another). */
  readonly copyMs?: number;
  /** Documents the task went through per second. */
  readonly documentsPerSecond?: number;
  /**
   * How long writes through the alias were refused in this run: from the source's block to the
   * swap (the source itself stays blocked after it, unless the file says `unblock_source`).
   */
  readonly writeBlockedMs?: number;
  /** The source was deleted (`delete_source: true`). */
  readonly deletedSource: boolean;
}

/**
 * What became of a configured connection: `ran` (its records were read, and for `migrate` its
 * pending files applied); or not run: `disabled` (no `migrations.enabled: true`), `not-selected`
 * (`--connection` named another), `no-folder` (enabled, but `<root>/<name>` does not exist: nothing
 * was sent to it), `not-reached` (the run stopped before it).
 */
export type ConnectionState = "ran" | "disabled" | "not-selected" | "no-folder" | "not-reached";

/** Who held a lock that `unlock` removed, as the lock document names it. */
export interface LockOwner {
  /** Who held it: `user@host`. */
  readonly owner: string;
  /** The holder's host name. */
  readonly host: string;
  /** The holder's process id. */
  readonly pid: number;
  /** When it was taken (ISO 8601). */
  readonly acquired_at?: string;
  /** When its lease ends unless renewed (ISO 8601). */
  readonly expires_at?: string;
}

/** What `unlock` did on one connection. */
export interface UnlockOutcome {
  /** The lock removed, or `"nothing"` when there was none. */
  readonly unlocked: LockOwner | "nothing";
  /** Why there was nothing to remove, when that needs saying (SQL locks end with the runner). */
  readonly note?: string;
}

/** One configured connection in a report, in the order of the configuration. */
export interface ConnectionReport {
  /** The connection's or datasource's `name`. */
  readonly name: string;
  /** Whether it ran, and if not why (see {@linkcode ConnectionState}). */
  readonly state: ConnectionState;
  /** Why a connection was not run, for a person: `migrations.enabled is not true`. */
  readonly reason?: string;
  /** Each file (and record without its file), in run order, with what was done. */
  readonly files: readonly FileReport[];
  /**
   * The other files in the connection's folder, none of them run: a name without the `.json`
   * (search) or `.sql` suffix. Absent when there are none.
   */
  readonly ignored?: readonly string[];
  /**
   * The callback files in the connection's folder (`beforeMigrate.sql`), in the order they run
   * at their event: never recorded, run each time their event happens. Absent when there are none.
   */
  readonly callbacks?: readonly CallbackReport[];
  /** Files run. */
  readonly applied: number;
  /** Files unchanged since they ran: not run again. */
  readonly skipped: number;
  /** Requests sent to this connection, reads included. */
  readonly requests: number;
  /** How long this connection took, in milliseconds. */
  readonly ms: number;
  /** `unlock` only: what it removed. */
  readonly unlocked?: LockOwner | "nothing";
  /** `unlock` only: why there was nothing to remove. */
  readonly note?: string;
  /**
   * Strict order was in force (`--strict-order` or `migrations.strict_order`): an out-of-order
   * file, and two files of one resource, stop `migrate` and fail `validate`.
   */
  readonly strictOrder?: true;
  /**
   * `migrations.flyway_compatible` was set: an applied versioned file that was edited or is gone
   * stops `migrate` and fails `validate`, as in Flyway.
   */
  readonly validateOnMigrate?: true;
  /** `--drift` (search): the resources of applied files compared with the cluster. */
  readonly drift?: ConnectionDrift;
}

/** `--drift` on one connection: how many resources were compared, and those that differ. */
export interface ConnectionDrift {
  /** Templates, policies, indices and aliases compared with their files. */
  readonly checked: number;
  /** The ones that differ from their files, in run order of their files; empty: none. */
  readonly resources: readonly DriftReport[];
}

/** One resource whose live state differs from the applied file that defines it. */
export interface DriftReport {
  /** `template logs`, `policy hot`, `index orders`, `alias orders`. */
  readonly resource: string;
  /** The file it is compared with: the last in run order that defines it. */
  readonly file: string;
  /**
   * Each difference, as first read: `template.settings.index.number_of_shards: file "1",
   * cluster "2"`, `mappings.properties.note: in the cluster, not in the file (...)`,
   * `absent from the cluster`.
   */
  readonly differences: readonly string[];
  /**
   * Whether `migrate --drift` applies the file again for it: a declarative file, and a difference
   * that a re-apply can change.
   */
  readonly reapply: boolean;
  /** Why it is not applied again, when `reapply` is false. */
  readonly note?: string;
  /**
   * `migrate --drift`: `reapplied` (the file was applied again and its record rewritten), or
   * `refused` (the cluster took none of it).
   */
  readonly result?: "reapplied" | "refused";
  /** `migrate --drift`, after applying the file again: what still differs, and why. */
  readonly remaining?: readonly string[];
}

/** Why a run stopped, the whole message, and where (the connection, file, line... it names). */
export interface RunError extends Partial<FailureDetail> {
  /** Why, as a kind: it decides the exit code. */
  readonly kind: ErrorKind;
  /** The whole message, its location included. */
  readonly message: string;
}

/** The command a report is about: `dry-run` is `migrate --dry-run`. */
export type ReportCommand = Command | "dry-run";

/**
 * The one report `--json` prints on stdout, whatever the outcome: success, failure, usage or
 * config error, lock timeout, interrupted. `command` is `null` only when the command line named
 * no known command.
 */
export interface RunReport {
  /** The command run; `null` only when a refused command line named none. */
  readonly command: ReportCommand | null;
  /** `--dry-run` was given: only reads were sent (`migrate --dry-run` is also command `dry-run`). */
  readonly dryRun?: true;
  /** Every configured connection (none before the configuration was read). */
  readonly connections: readonly ConnectionReport[];
  /** How long the run took, in milliseconds. */
  readonly ms: number;
  /** Set when the run did not succeed; later connections and files were not run. */
  readonly error?: RunError;
}

/** Receives progress while a run goes on (the human output); `--json` ignores it. */
export interface Progress {
  /**
   * Work begins on a connection: `pending` files of `total` to apply (`migrate`) or to record
   * (`baseline`, `repair`: records only) or to undo (`undo`).
   */
  start(
    connection: string,
    pending: number,
    total: number,
    verb: "apply" | "record" | "undo",
  ): void;
  /** File `n` of `pending` is done. */
  file(connection: string, n: number, pending: number, file: FileReport): void;
  /** A note for the user (a lock being waited for, a policy update). */
  notice(message: string): void;
  /** A step within a long file (a reindex: created, blocked, copying 40%, moved). */
  step(connection: string, message: string): void;
}

/** Progress that goes nowhere. */
export const silentProgress: Progress = { start() {}, file() {}, notice() {}, step() {} };
