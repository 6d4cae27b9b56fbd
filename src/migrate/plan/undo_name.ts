import { isCodePath } from "../code/code_file.ts";
import { MigrationFileError } from "../migration_error.ts";
import { isVersion } from "./migration_name.ts";

/**
 * What an undo file's name says: the version of the versioned file it undoes, and its own
 * description (`U2__drop_users.sql`: `2`, `drop_users`). The description need not match the V
 * file's, as in Flyway.
 */
export interface UndoName {
  readonly version: string;
  readonly description: string;
}

/**
 * Reads the file at `path` as Flyway reads an undo file, `U<version>__<description>`: the last
 * path segment, `U` followed by a digit, `.` or `_`, or by `__`. `undefined` for any other name
 * (`Users__x.sql`, `V1__x.sql`, `u1__x.sql`: the prefix is case-sensitive, as `V` is).
 *
 * Throws a {@linkcode MigrationFileError} naming the file for a name in that form that breaks
 * Flyway's rules (`U__x.sql` without a version, `U1..2__x.sql`), as `readMigrationName` refuses
 * `V__x.sql`: read as any other name, it would run forward as a migration, where its author meant
 * it to undo one.
 */
export function readUndoName(path: string): UndoName | undefined {
  const read = parseUndoName(path);
  if (read.kind === "other") return undefined;
  if (read.kind === "undo") return read.name;
  throw new MigrationFileError(path, read.problem);
}

/**
 * The version a record at `path` says was undone, where it is an undo record; `undefined` for any
 * other record. Never throws: a record is history, and a name today's rules refuse says nothing of
 * what was undone.
 */
export function undoRecordVersion(path: string): string | undefined {
  const read = parseUndoName(path);
  return read.kind === "undo" ? read.name.version : undefined;
}

/**
 * The path the record of a code migration's `down` is written under: the versioned file's path
 * with the `V` of its name made a `U` (`2024/V3__slugs.ts`: `2024/U3__slugs.ts`), so that it
 * reads as the undo of that version, as an undo file's own record does. Throws a TypeError for a
 * path whose name does not start with `V` (a caller's bug: only a versioned file has a `down`).
 */
export function downRecordPath(versionedPath: string): string {
  const start = versionedPath.lastIndexOf("/") + 1;
  if (versionedPath[start] !== "V") {
    throw new TypeError(`${versionedPath} is no versioned file (V<version>__): it has no down`);
  }
  return `${versionedPath.slice(0, start)}U${versionedPath.slice(start + 1)}`;
}

/**
 * How the versioned file at `path` gets an undo, for a message about one that has none: the undo
 * file to add beside it, named after its version (`U3__x.sql`), or, for a migration in code, a
 * `down` export or an undo file (named without a suffix: it may be SQL or code).
 */
export function undoAdvice(path: string): string {
  const undoFile = downRecordPath(path);
  const name = undoFile.slice(undoFile.lastIndexOf("/") + 1);
  return isCodePath(path)
    ? `export async function down(context) from it, or add an undo file ` +
      `${name.replace(/\.[^.]*$/, "")} beside it`
    : `add ${name} beside it, undoing what it does`;
}

type ParsedUndo =
  | { readonly kind: "undo"; readonly name: UndoName }
  | { readonly kind: "other" }
  | { readonly kind: "malformed"; readonly problem: string };

function parseUndoName(path: string): ParsedUndo {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const separator = name.indexOf("__");
  if (separator < 1 || name[0] !== "U") return { kind: "other" };
  const version = name.slice(1, separator);
  const description = name.slice(separator + 2).replace(/\.[^.]*$/, "");
  // As for `V`: a letter after the `U` (`Users__x.sql`) is no version at all.
  if (!/^(?:[\d._]|$)/.test(version)) return { kind: "other" };
  if (version === "") {
    return {
      kind: "malformed",
      problem: `has no version: an undo file is named U<version>__<description> after the ` +
        `version it undoes (U1.2__${description})`,
    };
  }
  if (!isVersion(version)) {
    return {
      kind: "malformed",
      problem: `${version} is not a version: numbers joined by single dots or underscores ` +
        `(1, 1.2, 1_2), as in the name of the V file it undoes`,
    };
  }
  return { kind: "undo", name: { version, description } };
}
