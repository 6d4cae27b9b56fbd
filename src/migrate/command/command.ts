import type { MigrationTarget } from "../driver.ts";
import { MigrationFileError, PlanError } from "../migration_error.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type {
  FileAction,
  FileDecision,
  Progress,
  RunError,
  RunReport,
  UnlockOutcome,
} from "../run_report.ts";
import { isRepeatable } from "../plan/migration_name.ts";
import type { Command } from "./command_name.ts";
import type { OptionNames } from "../option_names.ts";

// Where the command's rules are, so that their users import it from here.
export type { Command } from "./command_name.ts";

/**
 * What comparing a file with the records finds, before a command makes it an action: the
 * {@linkcode FileAction} of the same name, or one of two states only `repair` treats apart.
 */
export type FileState =
  | Exclude<FileAction, "record" | "drop" | "unknown" | "undo">
  /** Recorded with a checksum an earlier version wrote for this content: unchanged. */
  | "earlier-hash"
  /** A versioned record without its file that sorts after every versioned file here: a newer
   * checkout's, maybe. */
  | "missing-after-files";

/** What a command's rules are told about the run. */
export interface CommandOptions {
  /** `--force`. */
  readonly force: boolean;
  /** Strict order is in force on this connection. */
  readonly strictOrder: boolean;
  /** How a refusal names the options: as the caller spells them. */
  readonly optionNames: OptionNames;
  /**
   * What Flyway's validate-on-migrate refuses on this connection ({@linkcode flywayRefusals}),
   * judged without `--target` (Flyway validates every applied file); empty when it is off.
   */
  readonly edited: readonly FileDecision[];
}

/**
 * One command, as Flyway states each of its commands: which file states are work for it, what it
 * refuses before anything is written, and what makes it fail once it ran. The engine runs every
 * command through these rules; a command file holds no I/O.
 */
export interface MigrationCommand {
  readonly name: Command;
  /** It writes records or runs files, and so takes `--dry-run`. */
  readonly writes: boolean;
  /** It takes `--drift` (drivers that can compare the live system). */
  readonly drift: boolean;
  /** It takes `--force`. */
  readonly force: boolean;
  /** A file without a record may take over a record whose file is gone (a rename). */
  readonly renames: boolean;
  /** What progress says it does with its work. */
  readonly verb: "apply" | "record" | "undo";
  /** What it does with a file (or a record without a file) in `state`, `--force` given or not. */
  decide(state: FileState, force: boolean): FileAction;
  /**
   * It leaves repeatable (`R__`) files as they are found, for the next `migrate` to run, as
   * Flyway's baseline does: they are meant to run again, and recording one would skip it.
   */
  readonly leavesRepeatables?: true;
  /** Whether it writes anything for a file it decided `action` for. */
  isWork(action: FileAction): boolean;
  /**
   * Refuses `connection` before anything is written, by throwing a PlanError, given its decided
   * `files`; called on the records read first and again on those read under the lock.
   */
  refuse?(
    connection: string,
    files: readonly FileDecision[],
    records: ReadonlyMap<string, string>,
    options: CommandOptions,
  ): void;
  /** Says what the user should know of the decisions (late files, changed run-once files). */
  warn?(connection: string, files: readonly FileDecision[], progress: Progress): void;
  /** Lists the files as `unknown` when the records cannot be read, rather than none. */
  readonly listsUnknown: boolean;
  /** Makes a run that went through fail, by what its report found. */
  verdict?(report: RunReport): RunError | undefined;
  /**
   * The option that stops it at a version, as the command line spells it: `migrate --target`,
   * `baseline --version`; files above that version are `above-target`. Absent: it takes none.
   */
  readonly target?: "--target" | "--version";
  /** Works on the target alone, without files or records (`unlock`), and says what it did. */
  alone?(target: MigrationTarget<PlannedFile>, force: boolean): Promise<UnlockOutcome>;
}

/**
 * What a file's state is as an action, for the commands that only apply files or look at them:
 * a record of an earlier version's hash is unchanged, and a record without its file is missing
 * wherever it sorts.
 */
export function asFound(state: FileState): FileAction {
  return state === "earlier-hash" ? "skip" : state === "missing-after-files" ? "missing" : state;
}

/**
 * What Flyway's validate-on-migrate (`migrations.flyway_compatible`) finds wrong with a connection's
 * decided files, in run order: an applied versioned file edited since, whether it runs once or
 * would be applied again (a repeatable `R__` file is meant to be edited), and a record whose file
 * is gone, unless it is a versioned one that sorts after every versioned file here: a newer
 * checkout's, which Flyway calls future and ignores by default. A repeatable has no version, so
 * Flyway has no future one: its record without a file is refused wherever it sorts.
 */
export function flywayRefusals<T extends FileDecision>(files: readonly T[]): T[] {
  return files.filter((file, i) => {
    if (file.action === "changed") return true;
    if (file.action === "reapply") return !isRepeatable(file.path);
    if (file.action !== "missing") return false;
    if (isRepeatable(file.path)) return true;
    return files.slice(i + 1).some((f) => f.action !== "missing" && !isRepeatable(f.path));
  });
}

/** Why {@linkcode flywayRefusals} refused `file`, after its path in messages. */
export function flywayRefusal(file: FileDecision): string {
  return file.action === "missing"
    ? "is recorded as applied, but its file is gone"
    : "changed after it was applied";
}

/**
 * Refuses `verb` (`migrate`, `undo`) on `connection` where {@linkcode flywayRefusals} found
 * `edited` files: a PlanError naming the first, with how many more are like it.
 */
export function refuseEdited(
  connection: string,
  edited: readonly FileDecision[],
  verb: string,
): void {
  if (edited.length === 0) return;
  throw new PlanError(
    connection,
    new MigrationFileError(
      edited[0].path,
      flywayRefusal(edited[0]) +
        (edited.length > 1 ? ` (and ${edited.length - 1} more file(s) like it)` : "") +
        `; flyway_compatible refuses to ${verb} until the applied files are as they were ` +
        `(restore it, or record the files as they are with "repair")`,
    ),
  );
}
