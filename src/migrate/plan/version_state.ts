import { compareVersions, firstAtVersion, versionedName } from "./migration_name.ts";
import { undoRecordVersion } from "./undo_name.ts";
import { compareVersionPaths } from "./version_order.ts";
import { inProgressRecord } from "./in_progress_marker.ts";

/**
 * What the records say of a versioned file: `pending` (no record under its path), `applied`, or
 * `undone` (applied, then undone: its record stays as history, beside an undo record of its
 * version). An undone file is pending to `migrate`, which applies it again and drops the undo
 * record.
 */
export type VersionState = "pending" | "applied" | "undone";

/** A record whose name reads as a versioned file's (`V<version>__…`). */
export interface VersionedRecord {
  readonly path: string;
  readonly version: string;
}

/** The records of a connection, read for what they say of versions and undos. */
export interface VersionRecords {
  /** The records of versioned files, in the order the records came in. */
  readonly versioned: readonly VersionedRecord[];
  /** The undo records (`U<version>__…`), path to the version each says was undone. */
  readonly undos: ReadonlyMap<string, string>;
  /** The state of the versioned file at `path`, of `version`. */
  stateOf(path: string, version: string): VersionState;
  /**
   * The undo records of `version` (`U1__x.sql` for `1.0`), in path order: what `migrate` drops
   * when it applies the version again. Empty where it is not undone.
   */
  undoRecordsOf(version: string): string[];
  /**
   * The records that go when the file at `path`, of `version`, is applied or recorded: the undo
   * records of its version, and, where there are any, the undone records of its version under
   * other paths (files since renamed or replaced: their history ends with the undo). Left
   * behind, an undo record would read the version undone again, whichever file applied it.
   */
  replacedBy(path: string, version: string): string[];
}

/**
 * Reads the record paths of a connection (its `framework_migrations` rows) for versions: a
 * versioned file is `undone` where, beside its own record, a record of an undo path (a name read
 * as `U<same version>__`, in any folder: versions are unique per connection) exists; the undo of
 * a code migration's `down` is recorded under such a path too (`downRecordPath`).
 *
 * An undo record whose V record is gone is kept but says nothing: no file is undone by it. A
 * record whose name today's rules refuse (`V1..2__x.sql`, from before they held) is no versioned
 * record: records are history, read without throwing. Repeatable and other records are left out.
 */
export function readVersionRecords(paths: Iterable<string>): VersionRecords {
  const versioned: VersionedRecord[] = [];
  const undos = new Map<string, string>();
  for (const path of paths) {
    // A mark of a file in progress names a record path in its own: it is neither.
    if (inProgressRecord(path) !== undefined) continue;
    const undone = undoRecordVersion(path);
    if (undone !== undefined) {
      undos.set(path, undone);
      continue;
    }
    const version = versionedName(path);
    if (version !== undefined) versioned.push({ path, version });
  }
  const recorded = new Set(versioned.map((r) => r.path));
  // By version, then path: the undo records of one version are found by bisection, in a stable
  // order, however many versions were undone.
  const sorted = [...undos].map(([path, version]) => ({ path, version })).sort((a, b) =>
    compareVersions(a.version, b.version) || compareVersionPaths(a.path, b.path)
  );
  const undoRecordsOf = (version: string): string[] => {
    const found: string[] = [];
    for (
      let i = firstAtVersion(sorted, version);
      i < sorted.length && compareVersions(sorted[i].version, version) === 0;
      i++
    ) {
      found.push(sorted[i].path);
    }
    return found;
  };
  const replacedBy = (path: string, version: string): string[] => {
    const undoRecords = undoRecordsOf(version);
    if (undoRecords.length === 0) return [];
    const others = versioned.filter((r) =>
      r.path !== path && compareVersions(r.version, version) === 0
    );
    return [...others.map((r) => r.path), ...undoRecords];
  };
  return {
    versioned,
    undos,
    undoRecordsOf,
    replacedBy,
    stateOf: (path, version) =>
      !recorded.has(path) ? "pending" : undoRecordsOf(version).length > 0 ? "undone" : "applied",
  };
}
