import type { MigrationCommand } from "./command.ts";

/**
 * `repair`: makes the records match this checkout, running no file. Work: changed files and
 * records of an earlier version's hash are recorded at their checksum (`record`), records of
 * missing files dropped (`drop`), records of renamed files moved (`rename`). A versioned record
 * that sorts after every versioned file here may be a newer checkout's: it is dropped only with
 * `--force`, or the next migrate from that checkout would run its file again (a repeatable has no
 * version, so none is newer). Pending files stay pending.
 */
export const repair: MigrationCommand = {
  name: "repair",
  writes: true,
  drift: false,
  force: true,
  renames: true,
  verb: "record",
  listsUnknown: false,
  decide: (state, force) =>
    state === "reapply" || state === "changed" || state === "earlier-hash"
      ? "record"
      : state === "missing"
      ? "drop"
      : state === "missing-after-files"
      ? force ? "drop" : "missing"
      : state,
  isWork: (action) => action === "record" || action === "drop" || action === "rename",
};
