import type { FileRecord, MigrationTarget } from "../driver.ts";
import { baselineMarkerPath } from "../plan/baseline_marker.ts";
import { compareVersions, fileVersion, isRepeatable } from "../plan/migration_name.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { ConnectionRun } from "./connection_run.ts";

/**
 * `baseline`, once its records are written: the marker record of its version (`--version`, else
 * the newest version recorded), at the checksum of the newest file recorded at or below it, so
 * that `undo` stops above the versions it adopted ({@linkcode baselineMarkerPath}). The records
 * already there count (`--force` over a baseline of a Thaw that wrote no marker). Written last: a
 * run stopped before leaves no marker above records that were not written.
 */
export async function markBaseline<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  run: ConnectionRun,
  version: string | undefined,
): Promise<void> {
  const mark = baselineMark(files, (path) => run.isRecorded(path), run.records, version);
  if (mark === undefined) return;
  await target.record({ ...mark.file, path: baselineMarkerPath(mark.version) }, new Date());
}

/**
 * The marker `baseline` writes: its version (`version`, else the newest recorded), and the
 * newest recorded versioned file at or below it, whose checksum it takes; `undefined` where no
 * such file is recorded, or the marker of that version is in `records` already.
 */
export function baselineMark<F extends PlannedFile>(
  files: readonly F[],
  recorded: (path: string) => boolean,
  records: ReadonlyMap<string, FileRecord>,
  version: string | undefined,
): { file: F; version: string } | undefined {
  const adopted = files.flatMap((file) => {
    const of = isRepeatable(file.path) ? undefined : fileVersion(file.path);
    return of !== undefined && recorded(file.path) &&
        (version === undefined || compareVersions(of, version) <= 0)
      ? [{ file, version: of }]
      : [];
  });
  if (adopted.length === 0) return undefined;
  const newest = adopted.reduce((a, b) => compareVersions(b.version, a.version) > 0 ? b : a);
  const at = version ?? newest.version;
  return records.has(baselineMarkerPath(at)) ? undefined : { file: newest.file, version: at };
}
