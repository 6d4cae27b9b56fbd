import { MigrationFileError } from "../migration_error.ts";
import { compareVersions, fileVersion, readMigrationName } from "./migration_name.ts";
import { downRecordPath, undoAdvice, undoRecordVersion } from "./undo_name.ts";
import type { UndoableFile } from "./undo_pairs.ts";
import { compareVersionPaths } from "./version_order.ts";
import { readVersionRecords } from "./version_state.ts";
import { baselineMarkerVersion, baselineVersion } from "./baseline_marker.ts";
import { inProgressRecord } from "./in_progress_marker.ts";

/** Which applied versions `undo` undoes: the newest alone where none of these is given. */
export interface UndoRange {
  /** `undo --target <version>`: every applied version above it is undone. */
  readonly target?: string;
  /**
   * With `target`: the target is undone too, as Flyway's `undo -target` undoes it
   * (`flyway_compatible`).
   */
  readonly inclusive?: true;
  /** `undo --count <n>`: the `n` newest applied versions (golang-migrate's `down N`). */
  readonly count?: number;
}

/** What `undo` asks of one connection. */
export interface UndoRequest extends UndoRange {
  /** The connection's versioned files, in run order, each with its undo (`pairUndos`). */
  readonly files: readonly UndoableFile[];
  /** Its records: path to checksum. */
  readonly records: ReadonlyMap<string, string>;
}

/** One version to undo, in the order the plan undoes them. */
export interface UndoStep {
  /** The versioned file undone (`V3__x.sql`). */
  readonly path: string;
  /** What undoes it: the undo file's path (`U3__x.sql`), or `"down"`, the module's own export. */
  readonly undo: string;
  /**
   * The path the undo's record is written under: the undo file's, or for a `down` the versioned
   * file's with its `V` made a `U`. Its version marks the file undone.
   */
  readonly record: string;
}

/**
 * What `undo` undoes on one connection, newest version first: with a `target`, every version
 * above it (and at it, `inclusive`) that is applied and not undone
 * ({@linkcode readVersionRecords}); with a `count`, the `count` newest such versions; with
 * neither, the newest alone. Newest is by version, as Flyway compares versions (`1.10` after
 * `1.9`), not by the order the records were written or the files run: the records hold no order.
 * No I/O; an empty plan is nothing to undo.
 *
 * The plan is checked whole before anything runs: a version to undo that has no undo (no undo file
 * and no `down`), or whose versioned file is gone from this checkout (a record without its file, so
 * its undo cannot be known: `repair` drops its record, with `--force` where it sorts after every
 * file here, as a newer checkout's may), throws a {@linkcode MigrationFileError} naming that file,
 * the newest first, with how many more are like it. Nothing is undone then: a half-undone range
 * would leave the database between two versions no checkout describes.
 *
 * An applied file whose version its path gives rather than a `V<version>__` name (`002_b.sql`,
 * `release-1.0/x.sql`) counts as an applied version, and has no undo: it is refused too.
 * Repeatable files are never undone, and an undo record whose versioned record is gone is
 * ignored.
 *
 * Undo stops at the baseline (the greatest version a marker record of `baseline` names,
 * {@linkcode baselineVersion}), as Flyway's undo stops at its baseline marker: a plan that reaches
 * a version at or below it is refused, naming that version's file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const files = [
 *   { path: "V1__init.sql", version: "1" },
 *   { path: "V2__users.sql", version: "2", undo: "U2__users.sql" },
 *   { path: "V3__slugs.ts", version: "3", undo: "down" },
 * ];
 * const records = new Map(files.map((f) => [f.path, "h"]));
 * assert.deepEqual(planUndo({ files, records, target: "1" }), [
 *   { path: "V3__slugs.ts", undo: "down", record: "U3__slugs.ts" },
 *   { path: "V2__users.sql", undo: "U2__users.sql", record: "U2__users.sql" },
 * ]);
 * ```
 */
export function planUndo(
  { files, records, target, inclusive, count }: UndoRequest,
): UndoStep[] {
  const recorded = readVersionRecords(records.keys());
  const onDisk = new Set(files.map((f) => f.path));
  // Applied and not undone: the files here, and the records whose file is gone (still applied,
  // and so still to undo, though nothing here says how).
  // A file whose version its path gives (`002_b.sql`) is applied at it where it has a record:
  // no undo record is of it, since undo files pair with V files alone.
  const applied: { path: string; version: string; file?: UndoableFile }[] = [
    ...files.filter((f) =>
      f.unnamed ? records.has(f.path) : recorded.stateOf(f.path, f.version) === "applied"
    ).map((file) => ({ path: file.path, version: file.version, file })),
    ...recorded.versioned.filter((r) =>
      !onDisk.has(r.path) && recorded.stateOf(r.path, r.version) === "applied"
    ),
    ...unnamedRecords(records.keys(), onDisk),
  ].sort((a, b) => compareVersions(b.version, a.version) || compareVersionPaths(b.path, a.path));
  const chosen = target === undefined
    ? applied.slice(0, count ?? 1)
    : applied.filter((a) => compareVersions(a.version, target) >= (inclusive ? 0 : 1));
  const above = (version: string) => aboveTarget(version, target, inclusive);
  // What a refusal says of a version it names.
  const place = (version: string) =>
    target !== undefined
      ? `is applied at version ${version}${above(version)}`
      : count !== undefined && count > 1
      ? `is applied at version ${version}, one of the ${count} newest`
      : `is the newest applied version (${version})`;
  refuseBelowBaseline(chosen, baselineVersion(records.keys()), target, place, inclusive);
  const refused = chosen.filter((a) => a.file?.undo === undefined);
  if (refused.length > 0) {
    const first = refused[0];
    const why = first.file === undefined
      ? `is recorded as applied at version ${first.version}${
        above(first.version)
      }, but its file is ` +
        `gone from this checkout, and so is its undo: restore the file and its undo, or, where ` +
        `the version is gone for good, drop its record with "repair${
          files.some((f) => compareVersionPaths(f.path, first.path) > 0) ? "" : " --force"
        }"`
      : `${place(first.version)}, and has no undo: ${howToUndo(first.file)}`;
    const more = refused.slice(1).map((r) => r.path);
    throw new MigrationFileError(
      first.path,
      why +
        (more.length === 0
          ? ""
          : ` (and ${more.length} more version(s) to undo that cannot be: ${more.join(", ")})`),
    );
  }
  // Each has an undo: the refusal above saw to that.
  return chosen.flatMap(({ path, file }) => {
    const undo = file?.undo;
    return undo === undefined
      ? []
      : [{ path, undo, record: undo === "down" ? downRecordPath(path) : undo }];
  });
}

// Undo stops above the baseline, as Flyway's stops at its marker: the versions `baseline` adopted
// were made by hand, before Thaw ran, and their undo files would undo what Thaw never did.
function refuseBelowBaseline(
  chosen: readonly { path: string; version: string }[],
  baseline: string | undefined,
  target: string | undefined,
  place: (version: string) => string,
  inclusive: true | undefined,
): void {
  if (baseline === undefined) return;
  const below = chosen.filter((a) => compareVersions(a.version, baseline) <= 0);
  if (below.length === 0) return;
  const first = below[0];
  throw new MigrationFileError(
    first.path,
    `${place(first.version)}, and is at or below the baseline (version ${baseline}, written by ` +
      `"baseline"): undo stops at the baseline` +
      (target === undefined || inclusive ? "" : ` (a target of ${baseline} undoes down to it)`) +
      ", since the versions it adopted were made before Thaw ran, and their undo files would " +
      "undo what Thaw never did" +
      (below.length > 1 ? ` (and ${below.length - 1} more version(s) at or below it)` : ""),
  );
}

// Where a version to undo is, in messages: `, above the target 2` (`at or above` where the target
// is undone too).
function aboveTarget(version: string, target: string | undefined, inclusive?: true): string {
  if (target === undefined) return "";
  return inclusive && compareVersions(version, target) === 0
    ? `, the target ${target}`
    : `, above the target ${target}`;
}

// The records, their file gone, of files whose version their path gives (`002_b.sql`): applied
// versions too. Versioned, repeatable and undo records are not, nor paths without a version.
function unnamedRecords(
  paths: Iterable<string>,
  onDisk: ReadonlySet<string>,
): { path: string; version: string }[] {
  const found: { path: string; version: string }[] = [];
  for (const path of paths) {
    if (
      onDisk.has(path) || undoRecordVersion(path) !== undefined ||
      baselineMarkerVersion(path) !== undefined || inProgressRecord(path) !== undefined
    ) continue;
    let name;
    try {
      name = readMigrationName(path);
    } catch {
      continue;
    }
    const version = name.kind === "other" ? fileVersion(path) : undefined;
    if (version !== undefined) found.push({ path, version });
  }
  return found;
}

// Where the undo goes: an undo file is named after the version it undoes, beside its V file.
function howToUndo({ path, unnamed }: UndoableFile): string {
  if (unnamed) {
    return `only a V<version>__ file is undone (by its U<version>__ file, or its down), and ` +
      `this one's version is read from its path`;
  }
  return undoAdvice(path);
}
