import { compareVersions, isVersion } from "./migration_name.ts";

// No file can have this path: no migration file's name starts with `<`, and none holds a space
// after its version. It names the version, as Flyway's `<< Flyway Baseline >>` row does.
const MARKER = /^<< baseline (\S+) >>$/;

/**
 * The path of the record `baseline` writes beside the records of the files it adopted: it says
 * those versions, up to `version`, were made before Thaw ran on the connection, so `undo` stops
 * above them, as Flyway's undo stops at its baseline marker.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(baselineMarkerPath("2"), "<< baseline 2 >>");
 * assert.equal(baselineMarkerVersion("<< baseline 2 >>"), "2");
 * ```
 */
export function baselineMarkerPath(version: string): string {
  return `<< baseline ${version} >>`;
}

/**
 * The version a record at `path` marks as the baseline, where it is a baseline marker;
 * `undefined` for any other record. Never throws: a record is history.
 */
export function baselineMarkerVersion(path: string): string | undefined {
  const version = MARKER.exec(path)?.[1];
  return version !== undefined && isVersion(version) ? version : undefined;
}

/**
 * The connection's baseline: the greatest version its markers name (a `baseline --force` over an
 * earlier one may write another), or `undefined` where `baseline` never wrote one.
 */
export function baselineVersion(paths: Iterable<string>): string | undefined {
  let found: string | undefined;
  for (const path of paths) {
    const version = baselineMarkerVersion(path);
    if (version !== undefined && (found === undefined || compareVersions(version, found) > 0)) {
      found = version;
    }
  }
  return found;
}
