import { compareVersions, versionedName } from "./migration_name.ts";
import { undoRecordVersion } from "./undo_name.ts";

// No file can have this path: no migration file's name starts with `<`.
const MARKER = /^<< in progress: (.+) >>$/;

/**
 * The path of the record written before a file that cannot be rolled back runs (MySQL/MariaDB,
 * where DDL commits on its own): `record` is the path of the record the run writes once the file
 * ran (the file's, or for an undo its undo record's). It is dropped once that record is written,
 * or once the file failed and said so; a runner killed in the middle of the file leaves it, as
 * golang-migrate leaves its dirty flag and Flyway a failed row: the next run is refused until
 * `repair` drops it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(inProgressMarkerPath("U2__b.sql"), "<< in progress: U2__b.sql >>");
 * assert.equal(inProgressRecord("<< in progress: U2__b.sql >>"), "U2__b.sql");
 * assert.equal(inProgressRecord("U2__b.sql"), undefined);
 * ```
 */
export function inProgressMarkerPath(record: string): string {
  return `<< in progress: ${record} >>`;
}

/** The record path a marker at `path` names, where it is one; `undefined` for any other record. */
export function inProgressRecord(path: string): string | undefined {
  return MARKER.exec(path)?.[1];
}

/**
 * The file whose run a marker's record path says did not end, among `paths` (the decided files):
 * the versioned file of an undo record's version, else the record's own path.
 */
export function inProgressFile(record: string, paths: readonly string[]): string {
  const undone = undoRecordVersion(record);
  if (undone === undefined) return record;
  return paths.find((path) => {
    const version = versionedName(path);
    return version !== undefined && compareVersions(version, undone) === 0;
  }) ?? record;
}
