import { isCodeFile } from "../code/code_file.ts";
import {
  asFound,
  type Command,
  type FileState,
  type MigrationCommand,
} from "../command/command.ts";
import { definedFields } from "../../defined_fields.ts";
import { COMMANDS } from "../command/commands.ts";
import type { PlannedFile } from "./planned_file.ts";
import type { FileDecision } from "../run_report.ts";
import { compareVersions, fileVersion, isRepeatable, versionedName } from "./migration_name.ts";
import { compareVersionPaths } from "./version_order.ts";
import { undoRecordVersion } from "./undo_name.ts";
import { readVersionRecords } from "./version_state.ts";
import { baselineMarkerVersion, baselineVersion } from "./baseline_marker.ts";
import { inProgressRecord } from "./in_progress_marker.ts";

/**
 * What `command` does with each file, given the records (path to checksum), in run order: the
 * files in their order, and the records whose file is gone placed among them by version order.
 * No I/O: the engine runs it on the records it read, and again on those it reads under the lock.
 *
 * - A record with the file's checksum (or, from an earlier version, its raw-bytes hash or one of
 *   its `earlierHashes`): `skip`.
 * - Another checksum: `reapply` (a declarative or repeatable file) or `changed` (run once:
 *   reported, not run).
 * - No record: `apply`; but where a record whose file is gone holds the same checksum, the file
 *   was renamed: `rename`, and that record is not listed as `missing`. Each missing record is
 *   claimed by one file at most, the first in run order. A file that defines a resource (named
 *   after its file) is renamed only from a record of the same file name, in another folder.
 * - A pending versioned file that sorts before the greatest applied one is `outOfOrder`, naming it (taken
 *   from the records, a moved record under its new path: the applied file may be missing from
 *   this checkout).
 * - A file that defines the same resource as an earlier one is `sameResourceAs` that one.
 *
 * - A versioned file whose record has an undo record of its version beside it (`U2__…`, written by
 *   `undo`) is `undone`, whatever its checksum: pending again to `migrate`, not applied for the
 *   order of the others. Undo records are history: never missing, never claimed by a rename; nor
 *   is an undone record, whose renamed file is to apply.
 *
 * - A recorded versioned file at or below the version of the baseline's marker (written by
 *   `baseline`) is `baselined`: adopted, never run by Thaw. The marker is no missing file.
 *
 * With a `target` version (`migrate --target`, `baseline --version`), a pending or changed file
 * whose version is above it is `above-target`: left as it is.
 *
 * `baseline` turns every file it would write a record for into `record` (but a repeatable one, left
 * as it is found for `migrate`); `repair` turns changed
 * files, and records holding an earlier version's checksum, into `record` and missing
 * records into `drop` (versioned ones sorting after every versioned file here only with `force`:
 * an older checkout lacks the newest files), and leaves pending files pending.
 */
export function decideFiles(
  files: readonly PlannedFile[],
  records: ReadonlyMap<string, string>,
  command: Command,
  force = false,
  target?: string,
): FileDecision[] {
  const rules = COMMANDS[command];
  const versions = readVersionRecords(records.keys());
  const undone = (path: string): boolean => {
    const version = versionedName(path);
    return version !== undefined && versions.stateOf(path, version) === "undone";
  };
  const onDisk = new Set(files.map((f) => f.path));
  // The records without a file, in version order. An undo record has no file of its own to
  // miss: its undo file is no migration; nor has the baseline's marker.
  const gone = [...records.keys()]
    .filter((path) => !onDisk.has(path) && !isMark(path))
    .sort(compareVersionPaths);
  // An undone record says its file is not applied: a file renamed since is applied, not moved.
  const claims = new RenameClaims(gone.filter((p) => !undone(p)), records);
  // First what each file is, claiming the records of renamed files; then what counts as applied.
  const states = files.map((file) =>
    fileState(file, records.get(file.path), rules.renames ? claims : undefined, undone, target)
  );
  // A record moved to a renamed file counts under its new path, not its old one; an undone
  // version, and an undo record, are no applied version.
  const applied = [
    ...[...records.keys()].filter((path) =>
      !claims.claimed.has(path) && !isMark(path) && !undone(path)
    ),
    ...states.filter((s) => s.state === "rename").map((s) => s.file.path),
  ];
  const decide = fileDecider(rules, force, {
    // Repeatable files sort after every version but are never late: only versions count here.
    lastApplied: greatest(applied.filter((path) => !isRepeatable(path))),
    baseline: baselineVersion(records.keys()),
  });
  const missing = gone.filter((path) => !claims.claimed.has(path));
  return merge(states.map(decide), missingDecisions(missing, files, rules, force));
}

// One file, and what its record (or the record it takes over) says of it.
interface FileAndState {
  readonly file: PlannedFile;
  readonly state: FileState;
  readonly renamedFrom: string | undefined;
}

/**
 * The records without a file, by checksum, in version order, each claimed by one renamed file at
 * most: the first in run order.
 */
class RenameClaims {
  /** The paths of the records renamed files took over. */
  readonly claimed = new Set<string>();
  readonly #goneByHash = new Map<string, string[]>();

  constructor(gone: readonly string[], records: ReadonlyMap<string, string>) {
    for (const path of gone) {
      const hash = records.get(path);
      if (hash !== undefined) {
        this.#goneByHash.set(hash, [...this.#goneByHash.get(hash) ?? [], path]);
      }
    }
  }

  /**
   * The record `file` was renamed from: the first unclaimed one holding one of its checksums. A
   * file that defines a resource takes its name from its file name: under another name it defines
   * another resource, which must be created, so only a move keeps the record.
   */
  claim(file: PlannedFile): string | undefined {
    let path: string | undefined;
    for (const hash of [file.hash, file.rawHash, ...file.earlierHashes ?? []]) {
      path ??= hash === undefined
        ? undefined
        : this.#goneByHash.get(hash)?.find((p) =>
          !this.claimed.has(p) &&
          (file.resource === undefined || baseName(p) === baseName(file.path))
        );
    }
    if (path !== undefined) this.claimed.add(path);
    return path;
  }
}

// What `file` is, given its record's checksum (`recorded`); `claims`: where the command follows
// renames, the records a file without one may take over.
function fileState(
  file: PlannedFile,
  recorded: string | undefined,
  claims: RenameClaims | undefined,
  undone: (path: string) => boolean,
  target: string | undefined,
): FileAndState {
  let state: FileState;
  let renamedFrom: string | undefined;
  if (recorded === undefined) {
    renamedFrom = claims?.claim(file);
    state = renamedFrom === undefined ? "apply" : "rename";
  } else if (undone(file.path)) state = "undone";
  else if (recorded === file.hash) state = "skip";
  else if (recorded === file.rawHash || file.earlierHashes?.includes(recorded)) {
    state = "earlier-hash";
  } else state = runsOnce(file) ? "changed" : "reapply";
  if (target !== undefined && aboveTarget(file.path, target)) {
    if (
      state === "apply" || state === "reapply" || state === "changed" || state === "undone"
    ) state = "above-target";
  }
  return { file, state, renamedFrom };
}

// Each file's decision, in run order, from its state: a file that defines the resource of an
// earlier one names it.
function fileDecider(
  rules: MigrationCommand,
  force: boolean,
  { lastApplied, baseline }: { lastApplied: string | undefined; baseline: string | undefined },
): (file: FileAndState) => FileDecision {
  const definedBy = new Map<string, string>();
  return ({ file, state, renamedFrom }) => {
    const earlier = file.resource === undefined ? undefined : definedBy.get(file.resource);
    if (file.resource !== undefined && earlier === undefined) {
      definedBy.set(file.resource, file.path);
    }
    return {
      path: file.path,
      action: rules.leavesRepeatables && isRepeatable(file.path)
        ? asFound(state)
        : rules.decide(state, force),
      ...(file.request ? { request: file.request } : {}),
      ...(isCodeFile(file) ? { code: true } : {}),
      ...definedFields({ resource: file.resource }),
      ...((state === "apply" || state === "undone") && lastApplied !== undefined &&
          !isRepeatable(file.path) &&
          compareVersionPaths(file.path, lastApplied) < 0
        ? { outOfOrder: lastApplied }
        : {}),
      ...definedFields({ renamedFrom, sameResourceAs: earlier }),
      ...(baselined(file.path, state, baseline) ? { baselined: true as const } : {}),
    };
  };
}

// The records whose file is gone and no renamed file took over. A versioned record that sorts
// after every versioned file here may be one a newer checkout applied. A repeatable has no
// version, so its name's place says nothing of which checkout is newer (Flyway has no future
// repeatable): its record is missing wherever it sorts.
function missingDecisions(
  missing: readonly string[],
  files: readonly PlannedFile[],
  rules: MigrationCommand,
  force: boolean,
): FileDecision[] {
  const lastVersioned = greatest(files.map((f) => f.path).filter((path) => !isRepeatable(path)));
  return missing.map((path) => ({
    path,
    action: rules.decide(
      !isRepeatable(path) &&
        (lastVersioned === undefined || compareVersionPaths(path, lastVersioned) > 0)
        ? "missing-after-files"
        : "missing",
      force,
    ),
  }));
}

/**
 * The undo files edited after they ran, placed after the versioned file they undid, in `decided`
 * (made by {@linkcode decideFiles}): an undo file whose undo record (written when it ran, and kept
 * while its version is undone) holds another checksum is `changed`, as a run-once `V` file is,
 * and `command` makes it what it makes a changed file (`repair` records it as it is; validate
 * fails on it; under `flyway_compatible`, `migrate` and `undo` refuse it). An unchanged undo file,
 * one that has not run, and a `down`'s record are not listed: the undo record is history.
 */
export function withChangedUndos(
  decided: readonly FileDecision[],
  undoFiles: readonly PlannedFile[],
  records: ReadonlyMap<string, string>,
  command: Command,
  force = false,
): FileDecision[] {
  const changed = undoFiles.filter((undo) => {
    const recorded = records.get(undo.path);
    return recorded !== undefined && recorded !== undo.hash && recorded !== undo.rawHash &&
      !undo.earlierHashes?.includes(recorded);
  });
  if (changed.length === 0) return [...decided];
  const out = [...decided];
  for (const undo of changed) {
    const version = undoRecordVersion(undo.path)!;
    const at = out.findLastIndex((d) => {
      const of = versionedName(d.path);
      return of !== undefined && compareVersions(of, version) === 0;
    });
    out.splice(at + 1, 0, {
      path: undo.path,
      action: COMMANDS[command].decide("changed", force),
      ...(isCodeFile(undo) ? { code: true } : {}),
    });
  }
  return out;
}

/**
 * Whether `file` runs once: not idempotent ({@linkcode PlannedFile.runOnce}) and not a repeatable
 * `R__` file, which is meant to run again whenever it changes (views, functions). Such a file is
 * applied only where it has no record; a changed one is reported, never run.
 */
export function runsOnce(file: PlannedFile): boolean {
  return file.runOnce && !isRepeatable(file.path);
}

// Both lists are in version order already (files are read sorted); a missing record goes before
// the first file that sorts after it.
function merge(files: FileDecision[], missing: FileDecision[]): FileDecision[] {
  if (missing.length === 0) return files;
  const out: FileDecision[] = [];
  let m = 0;
  for (const file of files) {
    while (m < missing.length && compareVersionPaths(missing[m].path, file.path) < 0) {
      out.push(missing[m++]);
    }
    out.push(file);
  }
  return out.concat(missing.slice(m));
}

// A repeatable file has no version, and is never above one. The engine refused, before planning,
// any other file without a version.
function aboveTarget(path: string, target: string): boolean {
  const version = fileVersion(path);
  return version !== undefined && compareVersions(version, target) > 0;
}

// An undo record, the baseline's marker, or a run's mark of a file in progress: records of no
// file.
function isMark(path: string): boolean {
  return undoRecordVersion(path) !== undefined || baselineMarkerVersion(path) !== undefined ||
    inProgressRecord(path) !== undefined;
}

// A recorded file at or below the baseline's version: `baseline` adopted it, Thaw never ran it
// (or one of its versions below the baseline, applied since, out of order).
function baselined(path: string, state: FileState, baseline: string | undefined): boolean {
  if (baseline === undefined || isRepeatable(path)) return false;
  if (state === "apply" || state === "undone" || state === "rename") return false;
  const version = fileVersion(path);
  return version !== undefined && compareVersions(version, baseline) <= 0;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function greatest(paths: readonly string[]): string | undefined {
  let last: string | undefined;
  for (const path of paths) {
    if (last === undefined || compareVersionPaths(path, last) > 0) last = path;
  }
  return last;
}
