import { isCodeFile } from "../code/code_file.ts";
import { CodeLoadError, loadDown } from "../code/load_code.ts";
import { MigrationFileError, PlanError } from "../migration_error.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import { undoAdvice } from "../plan/undo_name.ts";
import type { UndoStep } from "../plan/undo_plan.ts";
import type { TargetRun } from "./target_run.ts";

// Why a file of the undo plan is refused: the file named in the message, and why.
interface Refusal {
  readonly path: string;
  readonly why: string;
}

// The versioned and undo files of a target, by path.
function filesByPath<F extends PlannedFile>(t: TargetRun<F>): Map<string, F> {
  return new Map([...t.files, ...t.undoFiles].map((f) => [f.path, f]));
}

// Each step's versioned file and the undo file that undoes it, where it has one (not a `down`).
function undoPairs<F extends PlannedFile>(t: TargetRun<F>): { file: F; undo: F }[] {
  const byPath = filesByPath(t);
  return t.run.undoSteps.flatMap((step) => {
    const file = byPath.get(step.path);
    const undo = step.undo === "down" ? undefined : byPath.get(step.undo);
    return file === undefined || undo === undefined ? [] : [{ file, undo }];
  });
}

/**
 * The undo plan's pairs, checked whole before anything runs, in a dry run too (no I/O): the driver
 * must take each undo file for the versioned file it undoes (`undoRefusal`: a reindex's undo
 * needs the index its file kept). Throws a PlanError naming the first undo file refused.
 */
export function refuseUndoPairs<F extends PlannedFile>(t: TargetRun<F>): void {
  const { undoRefusal } = t;
  if (undoRefusal === undefined) return;
  for (const { file, undo } of undoPairs(t)) {
    const why = undoRefusal(file, undo);
    if (why !== undefined) {
      throw new PlanError(t.target.name, new MigrationFileError(undo.path, why));
    }
  }
}

/**
 * The undo plan's pairs, checked whole against what the target holds (its `undoPlanRefusal`,
 * reads only), before anything runs: a pair refused while its file runs would be refused after
 * the newer versions were undone. Throws a PlanError naming the undo file refused.
 */
export async function refuseUndoPlan<F extends PlannedFile>(t: TargetRun<F>): Promise<void> {
  if (t.target.undoPlanRefusal === undefined) return;
  const pairs = undoPairs(t);
  if (pairs.length === 0) return;
  const refused = await t.target.undoPlanRefusal(pairs);
  if (refused !== undefined) {
    throw new PlanError(t.target.name, new MigrationFileError(refused.path, refused.why));
  }
}

/**
 * The undo plan's code, checked whole before anything runs: what it runs must be runnable here, a
 * migration in code it undoes by its `down` must export one (imported now: the plan undoes it),
 * and one undone by an undo file must not export one too. Throws a PlanError naming the first
 * file refused, with how many more are.
 */
export async function checkUndoCode<F extends PlannedFile>(t: TargetRun<F>): Promise<void> {
  const byPath = filesByPath(t);
  const refused: Refusal[] = [];
  for (const step of t.run.undoSteps) refused.push(...await stepRefusals(step, byPath));
  if (refused.length === 0) return;
  const [first, ...others] = refused;
  const more = others.length > 0
    ? ` (and ${others.length} more: ${others.map((r) => r.path).join(", ")})`
    : "";
  throw new PlanError(t.target.name, new MigrationFileError(first.path, `${first.why}${more}`));
}

// Why one step of the undo plan cannot run here: what it runs is unrunnable, or its code has no
// `down` to undo it by, or one beside its undo file.
async function stepRefusals<F extends PlannedFile>(
  step: UndoStep,
  byPath: ReadonlyMap<string, F>,
): Promise<Refusal[]> {
  const file = byPath.get(step.path);
  const runs = step.undo === "down" ? file : byPath.get(step.undo);
  if (runs?.unrunnable !== undefined) return [{ path: runs.path, why: runs.unrunnable }];
  if (file === undefined || !isCodeFile(file)) return [];
  let down;
  try {
    down = await loadDown(file);
  } catch (error) {
    if (!(error instanceof CodeLoadError)) throw error;
    return [{ path: file.path, why: error.message }];
  }
  if (step.undo === "down" && down === undefined) {
    return [{ path: file.path, why: `is to undo, and has no undo: ${undoAdvice(file.path)}` }];
  }
  if (step.undo !== "down" && down !== undefined) {
    return [{
      path: step.undo,
      why: `undoes ${file.path}, which exports down too: keep one undo (remove this file, or ` +
        "the down export)",
    }];
  }
  return [];
}
