// Where a folder given to the runner from code is: apart from migrate_api.ts, whose import of the
// built-in drivers would bring every driver into an app that migrates at start with one.
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** A folder option: a string (relative ones start at `cwd`) or a file URL, as an absolute path. */
export function optionFolder(path: string | URL, cwd: string): string {
  const text = path instanceof URL ? fileURLToPath(path) : path;
  return isAbsolute(text) ? text : resolve(cwd, text);
}
