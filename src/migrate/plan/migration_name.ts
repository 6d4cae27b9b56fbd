import { MigrationFileError } from "../migration_error.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";

/**
 * What a migration file's name says of it, read as Flyway reads names: `V<version>__<description>`
 * is versioned, `R__<description>` is repeatable. Every other name (`001_init.sql`, `1.0.json`,
 * `logs-template.json`) is `other`: it runs in the order of its path, as names always have.
 */
export type MigrationName =
  | { readonly kind: "versioned"; readonly version: string; readonly description: string }
  | { readonly kind: "repeatable"; readonly description: string }
  | { readonly kind: "other" };

/** A version as Flyway writes one: numbers joined by `.` or `_` (`1`, `1.0.1`, `9_4`). */
const VERSION = /^\d+(?:[._]\d+)*$/;

/**
 * Reads the name of the file at `path` (the last segment; folders say nothing of it). A name that
 * takes Flyway's form but breaks its rules (`V__x.sql` without a version, `V1..1__x.sql`,
 * `V_8_0__x.sql`, `R1__x.sql`), or is Flyway's undo file (`U1__x.sql`, which the engine takes out
 * first, for `undo`), throws a {@linkcode MigrationFileError} naming the file: read as any other
 * name, it would run where Flyway refuses it, or runs it only to undo.
 */
export function readMigrationName(path: string): MigrationName {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const separator = name.indexOf("__");
  if (separator < 1) return { kind: "other" };
  const prefix = name[0];
  const version = name.slice(1, separator);
  const description = name.slice(separator + 2).replace(/\.[^.]*$/, "");
  // Flyway's undo file for a version: read as any other name it would run forward, before every
  // V file (U sorts first), undoing what it never did. The engine takes them out before names
  // are checked (undo_name.ts); here one is a caller's mistake.
  if (prefix === "U" && VERSION.test(version)) {
    throw new MigrationFileError(
      path,
      `is an undo file (U<version>__), as Flyway names them: run only by undo, never as a ` +
        `migration`,
    );
  }
  // `V` or `R` followed by a digit, `.` or `_`, or by `__`: Flyway's form, by its rules. Any
  // other name (`Vacation__plan.json`) is no version at all.
  if ((prefix !== "V" && prefix !== "R") || !/^(?:[\d._]|$)/.test(version)) {
    return { kind: "other" };
  }
  if (prefix === "R") {
    if (version !== "") {
      throw new MigrationFileError(
        path,
        `a repeatable file (R__) has no version, and this one has ${version}: name it ` +
          `R__${description}, or V${version}__${description} to run it once`,
      );
    }
    return { kind: "repeatable", description };
  }
  if (version === "") {
    throw new MigrationFileError(
      path,
      `has no version: a versioned file is named V<version>__<description> (V1.2__${description})`,
    );
  }
  if (!VERSION.test(version)) {
    throw new MigrationFileError(
      path,
      `${version} is not a version: numbers joined by single dots or underscores (1, 1.2, 1_2)`,
    );
  }
  return { kind: "versioned", version, description };
}

/**
 * The version of a record or file at `path` where its name is a versioned file's
 * (`V<version>__…`); `undefined` for any other name, and for one today's rules refuse
 * (`V1..2__x.sql`, from before they held): records are history, read without throwing.
 */
export function versionedName(path: string): string | undefined {
  try {
    const name = readMigrationName(path);
    return name.kind === "versioned" ? name.version : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the file at `path` is repeatable (`R__<description>`): it runs after every other file. */
export function isRepeatable(path: string): boolean {
  return path.startsWith("R__", path.lastIndexOf("/") + 1);
}

/**
 * A version's value as Flyway compares it: `_` read as `.`, leading zeros and trailing `.0` parts
 * dropped, so `1` = `1.0` = `1.00` = `001`, and `9_4` = `9.4`. Kept as text: a part may be longer
 * than any number type holds.
 */
function versionValue(version: string): string {
  const parts = version.split(/[._]/).map((part) => part.replace(/^0+(?=.)/, ""));
  while (parts.length > 1 && parts[parts.length - 1] === "0") parts.pop();
  return parts.join(".");
}

/** Whether two versions (as written in names) are one: `sameVersion("1", "1.0")` is true. */
export function sameVersion(a: string, b: string): boolean {
  return versionValue(a) === versionValue(b);
}

/**
 * Checks the names of one connection's files (paths under its folder): each name that takes
 * Flyway's form keeps its rules ({@linkcode readMigrationName}), and no two versioned files, in
 * any of its folders, have one version. With a `target` version, every file but a repeatable one
 * must have a version ({@linkcode fileVersion}) to compare with it, and `paths` (in run order)
 * must not put a file at or below it after one above it: the target would leave a gap that the
 * next run finds late. Throws a {@linkcode MigrationFileError} naming the file: for two files of
 * a version the second (both would run, where Flyway and elasticsearch-evolution refuse them).
 */
export function checkMigrationNames(
  paths: readonly string[],
  target?: string,
  optionNames: OptionNames = COMMAND_LINE_NAMES,
): void {
  const byVersion = new Map<string, string>();
  const repeatables = new Map<string, string>();
  let firstAbove: string | undefined;
  for (const path of paths) {
    const name = readMigrationName(path);
    if (target !== undefined && name.kind !== "repeatable") {
      const version = fileVersion(path);
      if (version === undefined) {
        throw new MigrationFileError(
          path,
          `has no version in its path, so it cannot be placed before or after ${target} ` +
            `(${optionNames.target}): name it, or its folder, with a version`,
        );
      }
      if (compareVersions(version, target) > 0) firstAbove ??= path;
      else if (firstAbove !== undefined) {
        throw new MigrationFileError(
          path,
          `has version ${version}, at or below ${target}, but runs after ${firstAbove}, which is ` +
            `above ${target} (files run in the order of their paths, folder by folder): a target ` +
            `must leave only later files; run without ${optionNames.target}, or move the file`,
        );
      }
    }
    if (name.kind === "repeatable") {
      // One name with two suffixes (`R__views.sql`, `R__views.ts`) in one folder: both would run
      // at each change, where Flyway refuses two repeatables of one description.
      const key = `${path.slice(0, path.lastIndexOf("/") + 1)}${name.description}`;
      const first = repeatables.get(key);
      if (first !== undefined) {
        throw new MigrationFileError(
          path,
          `is the repeatable file ${name.description}, as ${first} is: keep one of them`,
        );
      }
      repeatables.set(key, path);
      continue;
    }
    if (name.kind !== "versioned") continue;
    const value = versionValue(name.version);
    const first = byVersion.get(value);
    if (first !== undefined) {
      throw new MigrationFileError(
        path,
        `has version ${value}, as ${first} has: two files of one version (1 = 1.0 = 001, ` +
          `9_4 = 9.4) would both run; give one of them another version`,
      );
    }
    byVersion.set(value, path);
  }
}

/** Whether `text` is a version as Flyway writes one (`1`, `1.2`, `9_4`): `--target` takes one. */
export function isVersion(text: string): boolean {
  return VERSION.test(text);
}

/**
 * Compares two versions as Flyway does: number by number, a missing number read as 0, so `1` =
 * `1.0` and `1 < 1.0.1 < 1.1`. Digit runs of any length compare by value.
 */
export function compareVersions(a: string, b: string): number {
  const x = versionValue(a).split("."), y = versionValue(b).split(".");
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const c = compareDigits(x[i] ?? "0", y[i] ?? "0");
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * The index of the first entry of `sorted` (in version order) whose version is at or above
 * `version`, by bisection: `sorted.length` where none is. Entries of one version (`1`, `1.0`)
 * follow it.
 */
export function firstAtVersion(
  sorted: readonly { readonly version: string }[],
  version: string,
): number {
  let low = 0, high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareVersions(sorted[middle].version, version) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Two runs of ASCII digits by value without a number type: leading zeros off, then the longer run
 * is larger, then digit by digit. No length limit, no precision lost.
 */
export function compareDigits(a: string, b: string): number {
  const da = a.replace(/^0+/, ""), db = b.replace(/^0+/, "");
  if (da.length !== db.length) return da.length - db.length;
  return da === db ? 0 : da < db ? -1 : 1;
}

// A name's leading version: at its start, after a `v`, or after text ending in a separator
// (`1.0.1.json`, `001_init.sql`, `v1.2`, `release-1.0`); digits inside a word (`oauth2`, `s3-x`,
// `2fa`) are no version.
const LEADING_VERSION = /^(?:[vV]|\D*?[-_. ])?(\d+(?:[._]\d+)*)(?![A-Za-z0-9])/;

/**
 * The version of the file at `path`, for `--target` and `baseline --version`: a versioned name's
 * own (`V2__x.sql`: `2`), else the leading version of the first folder or name that has one
 * (`release-1.0/users.json`: `1.0`; `1.0.1.json`: `1.0.1`; not `oauth2/`); `undefined` for a
 * repeatable file and for a path with no version at all.
 */
export function fileVersion(path: string): string | undefined {
  const name = readMigrationName(path);
  if (name.kind === "versioned") return name.version;
  if (name.kind === "repeatable") return undefined;
  for (const segment of path.split("/")) {
    const found = LEADING_VERSION.exec(segment);
    if (found !== null) return found[1];
  }
  return undefined;
}
