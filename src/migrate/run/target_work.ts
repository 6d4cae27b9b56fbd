import type { Command } from "../command/command.ts";
import type { Mask } from "../../config/secrets_mask.ts";
import type { DriverConnection, MigrationTarget } from "../driver.ts";
import type { OptionNames } from "../option_names.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { UndoableFile } from "../plan/undo_pairs.ts";
import type { Progress } from "../run_report.ts";

export type { PlannedFile };

/** What the engine is asked to do. */
export interface RunnerOptions {
  readonly command: Command;
  /** Print the plan, send only reads. */
  readonly dryRun: boolean;
  /** `--strict-order` (true) or `--no-strict-order` (false), over each connection's setting. */
  readonly strictOrder?: boolean;
  /**
   * `baseline --force`: record the files even where records exist; `repair --force`: also drop
   * missing records that sort after every file here.
   */
  readonly force?: boolean;
  /**
   * `--drift` (`status`, `validate`, `migrate`; targets with `drift`): compare the resources
   * of applied files with the live system; `migrate` also applies drifted files again.
   */
  readonly drift?: boolean;
  /**
   * `migrate --target`, `baseline --version`: files above this version are left as they are;
   * `undo --target`: the applied versions above it are undone.
   */
  readonly target?: string;
  /** `undo --count`: the newest applied versions it undoes. */
  readonly count?: number;
  readonly lockTimeoutMs: number;
  readonly progress: Progress;
  /** How messages name the options: as the caller spells them; the command line's by default. */
  readonly optionNames?: OptionNames;
  /** Stops the run between two files (Ctrl-C); the lock is still released. */
  readonly signal?: AbortSignal;
  /**
   * Where the targets count their requests (the driver context's counter): each connection's
   * total is its report's `requests`. None: 0.
   */
  readonly requests?: { of(connection: string): number };
}

/** A connection's settings the engine applies: off where not given. */
export type ConnectionSettings = Pick<DriverConnection, "strictOrder" | "validateOnMigrate">;

/**
 * A callback file of a connection: planned (`file`) where Thaw runs its event, listed only where
 * it is a Flyway event Thaw does not run.
 */
export interface ConnectionCallback<F> {
  readonly path: string;
  readonly event: string;
  readonly file?: F;
}

/** One opened target and what to run on it. */
export interface TargetWork<F extends PlannedFile> {
  readonly target: MigrationTarget<F>;
  readonly files: readonly F[];
  /** Its callbacks, in the order they run at their event. */
  readonly callbacks?: readonly ConnectionCallback<F>[];
  /** The other files in the connection's folder, listed in the report. */
  readonly ignored?: readonly string[];
  /** Its connection's settings: strict order and validate-on-migrate, both off when absent. */
  readonly settings?: ConnectionSettings;
  /** What the report may show of its files (its driver's mask); as they are when absent. */
  readonly mask?: Mask;
  /** Its undo files (`U<version>__…`), planned: what `undo` runs. */
  readonly undoFiles?: readonly F[];
  /** Its versioned files, each with its undo where it has one (`pairUndos`). */
  readonly undoable?: readonly UndoableFile[];
  /** Its driver's `undoRefusal`: why an undo file cannot undo its versioned file. */
  readonly undoRefusal?: (file: F, undo: F) => string | undefined;
}
