// Deciding a target's files from the records read: no I/O, what is decided is kept on its
// connection's run.
import type { Mask } from "../../config/secrets_mask.ts";
import { definedFields } from "../../defined_fields.ts";
import { type Command, flywayRefusals } from "../command/command.ts";
import { COMMANDS } from "../command/commands.ts";
import { decideUndo } from "../command/undo.ts";
import type { FileRecord } from "../driver.ts";
import { MigrationFileError, PlanError } from "../migration_error.ts";
import { COMMAND_LINE_NAMES } from "../option_names.ts";
import { decideFiles, withChangedUndos } from "../plan/file_decisions.ts";
import { inProgressFile, inProgressRecord } from "../plan/in_progress_marker.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { UndoStep } from "../plan/undo_plan.ts";
import type { FileDecision } from "../run_report.ts";
import type { TargetRun } from "./target_run.ts";
import { refuseUndoPairs } from "./undo_checks.ts";

/** Decides every file from the records read, and refuses what the command refuses. */
export function decideAll<F extends PlannedFile>(
  t: TargetRun<F>,
  all: ReadonlyMap<string, FileRecord>,
  plannedUndo?: readonly UndoStep[],
  locked = false,
): void {
  const { run, options, command, force, callbackPaths } = t;
  // A callback an earlier version ran as a migration has a record: it is no missing file to
  // refuse or report. `repair` drops it, whatever it sorts after.
  const repairing = command.name === "repair";
  const read = new Map([...all].filter(([path]) => repairing || !callbackPaths.has(path)));
  const records = new Map([...read].map(([path, record]) => [path, record.hash]));
  // `undo --target` names the version to undo down to: no file is above a target of its own.
  const forward = command.name === "undo" ? undefined : options.target;
  run.takeDecisions(
    decide(t, records, forward).map((file) =>
      masked(
        repairing && callbackPaths.has(file.path) ? { ...file, action: "drop" } : file,
        t.mask,
      )
    ),
  );
  run.takeDecisions(unfinished(t.target.name, run.decided, read, command.name, locked));
  // Before anything is written: the first check needs no lock, the second sees what another
  // runner wrote while this one waited. `validate` reports them with the changed files.
  // Flyway validates every applied file, those above a --target too; for `undo`, as they are
  // found, before the versions to undo are marked.
  const edited = !t.validateOnMigrate ? [] : flywayRefusals(
    forward === undefined ? run.decided : decide(t, records),
  );
  run.takeRecords(read, t.showsRuns);
  command.refuse?.(t.target.name, run.decided, records, {
    force,
    strictOrder: t.strict,
    edited,
    optionNames: options.optionNames ?? COMMAND_LINE_NAMES,
  });
  // Planned once the applied files passed validation, as Flyway validates before it undoes.
  if (command.name === "undo") planUndo(t, records, plannedUndo);
}

// Each file's decision, and each changed undo file's, up to `target` where there is one.
function decide<F extends PlannedFile>(
  t: TargetRun<F>,
  records: ReadonlyMap<string, string>,
  target?: string,
): FileDecision[] {
  const { command, force } = t;
  return withChangedUndos(
    decideFiles(t.files, records, command.name, force, target),
    t.undoFiles,
    records,
    command.name,
    force,
  );
}

// `undo`'s plan, from the decisions taken; under the lock, no more than `plannedUndo`.
function planUndo<F extends PlannedFile>(
  t: TargetRun<F>,
  records: ReadonlyMap<string, string>,
  plannedUndo: readonly UndoStep[] | undefined,
): void {
  const { run, options } = t;
  const undo = decideUndo(
    t.target.name,
    run.decided,
    t.undoable,
    records,
    {
      ...definedFields({ target: options.target, count: options.count }),
      // Flyway's `undo -target` undoes the target too.
      ...(t.validateOnMigrate ? { inclusive: true as const } : {}),
    },
    plannedUndo,
  );
  run.planUndo(undo.steps, undoRequests(undo.decided, undo.steps, t.undoFiles, t.mask));
  refuseUndoPairs(t);
}

/**
 * The marks of files a run began and never ended (MySQL/MariaDB, where nothing rolls a file back;
 * {@linkcode inProgressMarkerPath}): each file is shown `inProgress`; `repair` drops the marks; any
 * other command that writes is refused under the lock (`locked`), naming the first, before
 * anything is written, since what ran of it may be committed and only a person can tell what.
 * Before the lock, a mark may be a live runner's, in the middle of its file: shown, not refused.
 */
export function unfinished(
  connection: string,
  decided: readonly FileDecision[],
  records: ReadonlyMap<string, FileRecord>,
  command: Command,
  locked: boolean,
): FileDecision[] {
  const marks = [...records].flatMap(([path, mark]) => {
    const record = inProgressRecord(path);
    return record === undefined ? [] : [{ path, record, mark }];
  });
  if (marks.length === 0) return [...decided];
  const paths = decided.map((d) => d.path);
  const files = new Set(marks.map((m) => inProgressFile(m.record, paths)));
  const shown = decided.map((d) => files.has(d.path) ? { ...d, inProgress: true as const } : d);
  if (command === "repair") {
    return [...shown, ...marks.map((m): FileDecision => ({ path: m.path, action: "drop" }))];
  }
  if (!COMMANDS[command].writes || !locked) return shown;
  const [first] = marks;
  throw new PlanError(
    connection,
    new MigrationFileError(
      inProgressFile(first.record, paths),
      `was begun by a run that never ended${when(first.mark)}: it was killed or ` +
        `lost its connection in the middle of ${first.record}, and what ran of it may be ` +
        `committed (MySQL/MariaDB run a file in no transaction). Fix the database by hand, then ` +
        `run "repair", which drops the mark` +
        (marks.length > 1 ? ` (and ${marks.length - 1} more file(s) like it)` : ""),
    ),
  );
}

// When and by whom an in-progress mark was written, as far as it says.
function when(mark: FileRecord): string {
  const said = [
    mark.executedAt !== undefined && `at ${mark.executedAt}`,
    mark.executedBy !== undefined && `by ${mark.executedBy}`,
  ].filter(Boolean).join(" ");
  return said === "" ? "" : ` (${said})`;
}

/**
 * The file as the report shows it: what it sends and defines, with placeholder values masked.
 * Decisions are taken on the real values first: two files of one resource stay one resource.
 */
export function masked(file: FileDecision, mask: Mask | undefined): FileDecision {
  if (mask === undefined) return file;
  return {
    ...file,
    ...(file.request === undefined ? {} : { request: mask(file.request) }),
    ...(file.resource === undefined ? {} : { resource: mask(file.resource) }),
    ...(file.overwrites === undefined ? {} : { overwrites: mask(file.overwrites) }),
  };
}

// Each version to undo shows what its undo sends: the undo file's request (none for a `down`, or
// an undo in code), not its versioned file's.
function undoRequests(
  decided: readonly FileDecision[],
  steps: readonly UndoStep[],
  undoFiles: readonly PlannedFile[],
  mask: Mask | undefined,
): FileDecision[] {
  const undos = new Map(undoFiles.map((f) => [f.path, f]));
  const runs = new Map(steps.map((step) => [step.path, undos.get(step.undo)]));
  return decided.map((d) => {
    if (d.action !== "undo") return d;
    const { request: _, overwrites: _o, ...rest } = d;
    const undo = runs.get(d.path);
    return masked({
      ...rest,
      ...definedFields({ request: undo?.request, overwrites: undo?.overwrites }),
    }, mask);
  });
}
