import { MigrationFileError } from "../migration_error.ts";
import {
  compareVersions,
  fileVersion,
  firstAtVersion,
  readMigrationName,
} from "./migration_name.ts";
import { readUndoName } from "./undo_name.ts";

/**
 * One of a connection's migration files, as the undo planner needs it: its path under the
 * connection's folder, and, for a migration in code, whether its module exports `down`.
 */
export interface UndoSource {
  readonly path: string;
  /** A code migration whose module exports `down(context)`: the module undoes itself. */
  readonly hasDown?: boolean;
}

/**
 * A versioned file (`V<version>__…`) with what undoes it: an undo file's path (`U2__x.sql`),
 * `"down"` for a code migration that exports `down`, or nothing (it cannot be undone). An undo
 * file's name starts with `U`, so no undo path is `"down"`.
 */
export interface UndoableFile {
  readonly path: string;
  /** The version as its name writes it (`1.0`, `001`), or as its path does (`fileVersion`). */
  readonly version: string;
  readonly undo?: string;
  /**
   * A file whose version is read from a name or folder other than `V<version>__` (`002_b.sql`,
   * `release-1.0/x.sql`): applied at that version, and never undone (no undo file pairs with it).
   */
  readonly unnamed?: true;
}

/**
 * Pairs each versioned file among `files` (a connection's migrations, in run order, from every
 * folder of it) with its undo: the undo file (`U<version>__…`, {@linkcode readUndoName}) of the
 * same version (`U1` undoes `V1.0` and `V001`) in any of its folders, as versions are unique per
 * connection, or the module itself where it exports `down`. Returns the versioned files in the
 * order they came in, then the other files with a version in their path (`002_b.sql`), marked
 * `unnamed`: applied at a version, so `undo` must count them, and never undone. Repeatable files
 * and files without a version are left out.
 *
 * Throws a {@linkcode MigrationFileError} naming the undo file when it undoes a version no V file
 * here has, when a second undo file undoes one version (the second in run order is named), and
 * when its version's V file exports `down` too: any of them would leave the run to guess which
 * undo is meant. A name that takes Flyway's form and breaks its rules (`U__x.sql`, `V1..2__x.sql`)
 * is refused as `readMigrationName` refuses it. Two V files of one version are not looked for:
 * `checkMigrationNames` refuses them first.
 */
export function pairUndos(files: readonly UndoSource[]): UndoableFile[] {
  const versioned: { path: string; version: string; hasDown: boolean }[] = [];
  const undos: { path: string; version: string }[] = [];
  const unnamed: { path: string; version: string }[] = [];
  for (const file of files) {
    // An undo file first: readMigrationName refuses every `U<version>__` name.
    const undo = readUndoName(file.path);
    if (undo !== undefined) {
      undos.push({ path: file.path, version: undo.version });
      continue;
    }
    const name = readMigrationName(file.path);
    if (name.kind === "versioned") {
      versioned.push({ path: file.path, version: name.version, hasDown: file.hasDown === true });
      continue;
    }
    const version = name.kind === "other" ? fileVersion(file.path) : undefined;
    if (version !== undefined) unnamed.push({ path: file.path, version });
  }
  // By version, so that each undo file finds its V file by bisection: 1 = 1.0 = 001 compare
  // equal, where the written versions differ.
  const byVersion = [...versioned].sort((a, b) => compareVersions(a.version, b.version));
  const undoOf = new Map<string, string>();
  for (const undo of undos) {
    const target = findVersion(byVersion, undo.version);
    if (target === undefined) {
      throw new MigrationFileError(
        undo.path,
        `undoes version ${undo.version}, and no V${undo.version} file is here (in any folder ` +
          `of this connection): restore the V file, or remove the undo file`,
      );
    }
    if (target.hasDown) {
      throw new MigrationFileError(
        undo.path,
        `undoes version ${undo.version}, and ${target.path} exports down, which undoes it too: ` +
          `keep one undo (remove this file, or the down export)`,
      );
    }
    const first = undoOf.get(target.path);
    if (first !== undefined) {
      throw new MigrationFileError(
        undo.path,
        `undoes version ${undo.version}, as ${first} does: a version has one undo file; keep ` +
          `one of them`,
      );
    }
    undoOf.set(target.path, undo.path);
  }
  return [
    ...versioned.map(({ path, version, hasDown }): UndoableFile => {
      const undo = hasDown ? "down" : undoOf.get(path);
      return { path, version, ...(undo === undefined ? {} : { undo }) };
    }),
    ...unnamed.map(({ path, version }) => ({ path, version, unnamed: true as const })),
  ];
}

function findVersion<T extends { readonly version: string }>(
  sorted: readonly T[],
  version: string,
): T | undefined {
  const found = sorted[firstAtVersion(sorted, version)];
  return found !== undefined && compareVersions(found.version, version) === 0 ? found : undefined;
}
