import { MigrationFileError, PlanError } from "../migration_error.ts";
import type { UndoableFile } from "../plan/undo_pairs.ts";
import { planUndo, type UndoRange, type UndoStep } from "../plan/undo_plan.ts";
import type { FileDecision } from "../run_report.ts";
import { versionedName } from "../plan/migration_name.ts";
import { readVersionRecords } from "../plan/version_state.ts";
import { asFound, type MigrationCommand, refuseEdited } from "./command.ts";

/**
 * `undo`, as Flyway's: runs the undo file (`U<version>__…`) of the newest applied version, or with
 * `--target <version>` of every applied version above it, newest first; each undo writes an undo
 * record beside the version's own record, which stays as history: the version is then `undone`,
 * and `migrate` applies it again. Work: `undo`. The plan is checked whole before anything runs
 * ({@linkcode planUndo}): a version to undo without an undo stops the run, naming its file, and
 * nothing is undone.
 */
export const undo: MigrationCommand = {
  name: "undo",
  writes: true,
  drift: false,
  force: false,
  renames: true,
  verb: "undo",
  target: "--target",
  listsUnknown: false,
  decide: asFound,
  isWork: (action) => action === "undo",
  // As Flyway's undo validates first under validateOnMigrate: an edited applied file may no
  // longer be what its undo undoes.
  refuse(connection, _files, _records, options) {
    refuseEdited(connection, options.edited, "undo");
  },
};

/**
 * What `undo` undoes on `connection`, from the records (path to checksum) read: the plan, newest
 * first, and the decisions with each version to undo marked `undo`. A refusal of the plan is a
 * PlanError naming the connection and the file, thrown before anything is written.
 *
 * `planned`, under the lock, is the plan made before it: another runner may have undone or
 * applied versions meanwhile, and this run undoes no more than it planned, of what is still
 * applied. A plain `undo` planned the newest version (`--count`: the newest few): where another
 * undid it, the next one down is not this run's to undo. With a target, the plan made again must hold nothing new: a version
 * applied meanwhile above the target is refused, naming it, as undoing below it would leave it.
 */
export function decideUndo(
  connection: string,
  decided: readonly FileDecision[],
  files: readonly UndoableFile[],
  records: ReadonlyMap<string, string>,
  range: UndoRange,
  planned?: readonly UndoStep[],
): { decided: FileDecision[]; steps: UndoStep[] } {
  const { target } = range;
  let steps: UndoStep[];
  try {
    steps = planned !== undefined && target === undefined
      ? stillApplied(planned, records)
      : planUndo({ files, records, ...range });
    const before = new Set(planned?.map((s) => s.path));
    const added = planned === undefined ? undefined : steps.find((s) => !before.has(s.path));
    if (added !== undefined) {
      throw new MigrationFileError(
        added.path,
        `was applied while this undo waited for the lock, above the target ${target}: run ` +
          `undo again, to plan it`,
      );
    }
  } catch (error) {
    if (error instanceof MigrationFileError) throw new PlanError(connection, error);
    throw error;
  }
  const undoing = new Set(steps.map((s) => s.path));
  return {
    decided: decided.map((d): FileDecision => undoing.has(d.path) ? { ...d, action: "undo" } : d),
    steps,
  };
}

// The steps whose version the records still say is applied.
function stillApplied(
  planned: readonly UndoStep[],
  records: ReadonlyMap<string, string>,
): UndoStep[] {
  const versions = readVersionRecords(records.keys());
  return planned.filter((step) => {
    const version = versionedName(step.path);
    return version !== undefined && versions.stateOf(step.path, version) === "applied";
  });
}
