import { MigrationFileError, PlanError } from "../migration_error.ts";
import type { FileDecision } from "../run_report.ts";
import { asFound, type MigrationCommand, refuseEdited } from "./command.ts";

/**
 * `migrate`: applies pending files and, where a driver applies them again, changed declarative
 * ones, and applies again the versions `undo` undid. Work: `apply`, `reapply`, and `rename` (the
 * record moves, nothing runs). A run-once file changed after it ran is reported, never run. Under
 * strict order it refuses, before anything is written, a pending file that sorts before an applied
 * one and a second file of one resource; otherwise it warns of them. Under `flyway_compatible` it
 * refuses, before anything is written, an applied versioned file that was edited or is gone. With
 * `--drift` it also applies again the files whose resources drifted; with `--target <version>` it
 * leaves the files above that version as they are. Fails on the first file that fails.
 */
export const migrate: MigrationCommand = {
  name: "migrate",
  writes: true,
  drift: true,
  force: false,
  renames: true,
  verb: "apply",
  target: "--target",
  listsUnknown: false,
  // An undone version is pending again: applied anew, its undo records dropped with it.
  decide: (state) => state === "undone" ? "apply" : asFound(state),
  isWork: (action) => action === "apply" || action === "reapply" || action === "rename",
  refuse(connection, files, _records, options) {
    refuseEdited(connection, options.edited, "migrate");
    if (!options.strictOrder) return;
    const late = files.filter((f) => f.outOfOrder !== undefined);
    if (late.length > 0) {
      throw new PlanError(
        connection,
        new MigrationFileError(
          late[0].path,
          `sorts before ${late[0].outOfOrder}, which is applied already${
            elsewhere(files, late[0])
          }` +
            (late.length > 1 ? ` (and ${late.length - 1} more file(s) like it)` : "") +
            `; strict order refuses to apply it out of order (rename it to sort after it, run ` +
            `with ${options.optionNames.strictOrder(false)}, or set ` +
            "migrations.strict_order: false)",
        ),
      );
    }
    const twice = files.find((f) => f.sameResourceAs !== undefined);
    if (twice !== undefined) {
      throw new PlanError(
        connection,
        new MigrationFileError(
          twice.path,
          `${sameResource(twice)}; strict order refuses it (keep one file per resource: delete ` +
            `the older one and run "repair", or run with --no-strict-order)`,
        ),
      );
    }
  },
  warn(connection, files, progress) {
    const note = (text: string) => progress.notice(`${connection}: ${text}`);
    for (const f of files) {
      if (f.outOfOrder !== undefined) {
        note(
          `${f.path} sorts before ${f.outOfOrder}, which is applied already${
            elsewhere(files, f)
          }; it is applied out of order (--strict-order refuses this)`,
        );
      }
      if (f.sameResourceAs !== undefined) {
        note(
          `${sameResource(f)}: whichever changes is applied again, over the other ` +
            `(--strict-order refuses this)`,
        );
      }
      if (f.action === "changed") {
        note(
          `${f.path} changed after it was applied; it runs once and is not run again (put the ` +
            `change in a new file, or record it with "repair"; "validate" fails until then)`,
        );
      }
      if (f.action === "missing") {
        note(`${f.path} is recorded as applied, but its file is gone ("repair" drops the record)`);
      }
      if (f.action === "rename") {
        note(`${f.path} was renamed from ${f.renamedFrom}: its record moves, nothing is run`);
      }
    }
  },
};

/** Says when the applied file a late one sorts before is recorded but not in this checkout. */
function elsewhere(files: readonly FileDecision[], late: FileDecision): string {
  return files.some((f) => f.path === late.outOfOrder && f.action !== "missing")
    ? ""
    : " (recorded, not in this checkout)";
}

function sameResource(file: FileDecision): string {
  const what = file.resource ?? "the same resource";
  return `${file.path} and ${file.sameResourceAs} both define ${what}`;
}
