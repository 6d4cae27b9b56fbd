import { PlanError } from "../migration_error.ts";
import type { MigrationCommand } from "./command.ts";

/**
 * `baseline`: adopts a database or cluster built by hand by recording every file as applied
 * without running it. Work: every file without a record, or with another checksum (`record`),
 * but a repeatable (`R__`) one, which it leaves for `migrate` to run; it moves no record (no
 * renames). With `--version <version>` it records the files up to that
 * version and leaves the later ones pending, for `migrate` to run. Refused where records exist,
 * unless `--force`.
 */
export const baseline: MigrationCommand = {
  name: "baseline",
  writes: true,
  drift: false,
  force: true,
  renames: false,
  verb: "record",
  target: "--version",
  leavesRepeatables: true,
  listsUnknown: false,
  decide: (state) =>
    state === "apply" || state === "reapply" || state === "changed"
      ? "record"
      : state === "earlier-hash"
      ? "skip"
      : state === "missing-after-files"
      ? "missing"
      : state,
  isWork: (action) => action === "record",
  refuse(connection, _files, records, options) {
    if (records.size === 0 || options.force) return;
    throw new PlanError(
      connection,
      `has ${records.size} record(s) already; baseline adopts a connection without records ` +
        `(${options.optionNames.force} records the current files over them; "repair" fixes ` +
        "single records)",
    );
  },
};
